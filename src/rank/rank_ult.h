/* User-level threads (ULTs) and the per-PE scheduler.
 *
 * Every MPI rank is a ULT on its own mmap'ed stack (guard page below it).
 * One scheduler per PE (processing element = one OS thread; today one per
 * process) runs ready ULTs and, between them, calls the PE's progress
 * function (UCX progress).  A ULT waiting for a request calls rank_block();
 * whoever completes the request calls rank_wake() on it.  A wake that comes
 * before the block is remembered, so `while (!done) rank_block();` never
 * sleeps through a completion.  Everything here is single-threaded per PE.
 */
#ifndef AMPI_RANK_ULT_H
#define AMPI_RANK_ULT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include "util/util_list.h"
#include "rank/rank_ctx.h"

typedef enum {
    RANK_ULT_READY,   /* in the ready queue */
    RANK_ULT_RUNNING, /* the current ULT of its PE */
    RANK_ULT_BLOCKED, /* waiting for rank_wake() */
    RANK_ULT_DONE     /* its function returned */
} rank_ult_state_t;

typedef struct rank_pe rank_pe_t;

typedef struct rank_ult {
    rank_ctx_t ctx;          /* saved registers while not running */
    rank_ult_state_t state;
    bool wake_pending;       /* rank_wake() came while not blocked */
    util_dlink_t ready_link; /* in pe->ready */
    rank_pe_t *pe;
    void (*fn)(void *);
    void *arg;
    struct core_rank *user;  /* the MPI rank it runs (core_self()) */
    int id;                  /* used in messages (e.g. the MPI rank) */
    void *stack_map;         /* mmap'ed region, guard page first */
    size_t stack_map_size;
    size_t stack_size;       /* usable bytes above the guard page */
} rank_ult_t;

/* Progress function of a PE: returns nonzero when it did something. */
typedef int (*rank_progress_fn)(void *arg);

struct rank_pe {
    rank_ctx_t sched_ctx;    /* the scheduler's own context (the OS thread's stack) */
    rank_ult_t *current;     /* running ULT, NULL while the scheduler runs */
    util_dlist_t ready;
    int nlive;               /* ULTs created and not DONE */
    rank_progress_fn progress;
    void *progress_arg;
    /* The PE's thread waits inside MPI: the running rank polls in a wait
     * loop (its layer raises the flag), or every rank is blocked and the
     * scheduler polls.  Read by a progress thread, which leaves the network
     * to the PE's thread meanwhile; on a cache line of its own, so that
     * those reads never take the scheduler's fields from the PE's core. */
    _Alignas(64) _Atomic bool waiting;
};

void rank_pe_init(rank_pe_t *pe, rank_progress_fn progress, void *progress_arg);

/* Create a ULT that runs fn(arg) on a fresh stack of stack_size bytes
 * (0 = the default: AMPI_STACK_SIZE or 8 MiB); it starts READY.
 * Returns NULL (errno set) when the stack cannot be mapped. */
rank_ult_t *rank_ult_create(rank_pe_t *pe, size_t stack_size, void (*fn)(void *), void *arg);
void rank_ult_destroy(rank_ult_t *ult); /* only when DONE */

/* Keep getopt's optind, optarg, opterr and optopt per ULT (errno is kept
 * per ULT always): set before the ULTs are created (each reads it then),
 * for programs whose globals are privatized. */
extern bool rank_keep_getopt;

/* Sets pe->waiting to on and returns what it was.  The scheduler lowers it
 * before it runs a ULT and raises it while none is ready; a ULT that
 * blocks or yields inside a wait lowers it first and raises it again when
 * it resumes (p2p_idle), so that a rank that runs meanwhile, in MPI or
 * not, starts from "not waiting". */
static inline bool rank_waiting_set(rank_pe_t *pe, bool on)
{
    bool was = atomic_load_explicit(&pe->waiting, memory_order_relaxed);
    if (was != on) /* a store only on a change: the line stays shared with its reader */
        atomic_store_explicit(&pe->waiting, on, memory_order_relaxed);
    return was;
}

/* Run the scheduler on the calling OS thread until every ULT of pe is DONE. */
void rank_pe_run(rank_pe_t *pe);

/* The PE running on this OS thread (set by rank_pe_run; rank_ult.c). */
extern __thread rank_pe_t *rank_this_pe __attribute__((tls_model("initial-exec")));
/* Current ULT of this thread's PE, NULL in the scheduler.  Inline: every
 * MPI call asks, some several times. */
static inline rank_ult_t *rank_self(void)
{
    rank_pe_t *pe = rank_this_pe;
    return pe ? pe->current : NULL;
}
rank_pe_t *rank_current_pe(void); /* PE running on this thread (set by rank_pe_run), or NULL */
void rank_block(void);            /* block the current ULT until woken */
void rank_yield(void);            /* requeue the current ULT at the tail and let others run */
void rank_wake(rank_ult_t *ult);  /* make ult ready if blocked; else remember the wake */
/* End the current ULT here, as if its function had returned; its stack is
 * left as it is (nothing on it is unwound) until rank_ult_destroy. */
_Noreturn void rank_ult_exit(void);
/* Whether this process has a core of its own (its affinity is a single CPU,
 * as ampirun's --bind-to core gives when there are enough CPUs): idle loops
 * then poll without ever yielding the core -- a sched_yield costs a system
 * call, or a whole time slice when another job's process takes the core. */
bool rank_cpu_owned(void);

/* Install the SIGSEGV/SIGBUS handler (on an alternate signal stack) that
 * turns a touch of a ULT's guard page into a clear message, then lets the
 * process die by that signal; other faults go to the previous handler.
 * Idempotent; rank_pe_run calls it for its thread. */
void rank_guard_install(void);
/* Called in the handler, after the overflow message and before the process
 * dies, with the rank that overflowed (its owner tells its launcher);
 * async-signal-safe code only. */
void rank_guard_on_overflow(void (*hook)(int sig, const rank_ult_t *ult));

#endif
