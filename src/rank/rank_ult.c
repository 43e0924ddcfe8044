/* ULTs and the per-PE scheduler: see rank_ult.h.
 *
 * Hot paths (rank_block, rank_wake, rank_yield, the scheduler loop) only
 * touch the ULT, the PE and its intrusive ready list: no allocation, no
 * locks, no system calls.  A ULT always switches to its PE's scheduler
 * context, never directly to another ULT, so the scheduler is the one place
 * that decides what runs next and when progress is called. */
#define _GNU_SOURCE
#include "rank/rank_ult.h"
#include "core/core_rank.h"
#include "rank/rank_guard.h"
#include "rank/rank_host.h"
#include "rank/rank_san.h"
#include "rank/rank_stack.h"
#include "util/util_log.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The C library keeps errno per OS thread and getopt's position (optind,
 * optarg, opterr, optopt) per process, so the ranks of a PE would share
 * them: an MPI call that blocks could return with another rank's errno, and
 * a rank that parses options after others did would start at their end.
 * The scheduler gives each ULT its own errno always (restored before the
 * ULT runs, saved when it stops: bench_ctx measures no cost on this side,
 * ~40 ns a cycle around the switch on the ULT's side), and its own getopt
 * state when rank_keep_getopt is set (privatized programs, whose globals are
 * all per rank otherwise).
 *
 * What we keep per ULT beyond the public part. */
typedef struct ult_impl {
    rank_ult_t pub;
    rank_stack_t stack;
    rank_guard_entry_t guard;
    int saved_errno;
    /* getopt's state or a stack canary to check (rank_keep_getopt, a shared
     * stack slot): one test per switch for both, as neither is common */
    bool extras;
    int optind, opterr, optopt;
    char *optarg;
} ult_impl_t;

/* errno's address on this OS thread: asked of the C library once, before
 * the thread runs ULTs (errno_at_init), not at every switch (a call each
 * time) */
static __thread int *errno_at __attribute__((tls_model("initial-exec")));
static inline void errno_at_init(void) { errno_at = &errno; }

/* The PE whose scheduler runs on this OS thread.  ULTs never move between
 * threads, so code on a ULT stack may keep using this thread's copy. */
/* initial-exec: the library is linked, never dlopen'ed, and this is read on
 * every MPI call (the default model costs a __tls_get_addr call each time) */
__thread rank_pe_t *rank_this_pe __attribute__((tls_model("initial-exec")));

#ifdef RANK_ASAN
/* The scheduler's stack (the thread's own), learned from ASan on the first
 * switch into a ULT: ASan must be told the stack we switch back to. */
static __thread const void *sched_stack_bottom;
static __thread size_t sched_stack_size;
#define SCHED_STACK sched_stack_bottom, sched_stack_size
#define SCHED_STACK_OUT &sched_stack_bottom, &sched_stack_size
#else
#define SCHED_STACK NULL, 0
#define SCHED_STACK_OUT NULL, NULL
#endif

bool rank_keep_getopt;
static int next_ult_id; /* default ids 0, 1, ... until the owner sets its own */

void rank_pe_init(rank_pe_t *pe, rank_progress_fn progress, void *progress_arg)
{
    memset(&pe->sched_ctx, 0, sizeof pe->sched_ctx);
    pe->current = NULL;
    util_dlist_init(&pe->ready);
    pe->nlive = 0;
    pe->progress = progress;
    pe->progress_arg = progress_arg;
    atomic_init(&pe->waiting, false);
}

/* From a ULT to its scheduler.  dying: the ULT will never run again, so ASan
 * may drop what it keeps for this stack. */
static inline void switch_to_scheduler(rank_ult_t *ult, int dying)
{
    void *asan_save = NULL;
    rank_san_switch_begin(dying ? NULL : &asan_save, SCHED_STACK);
    rank_ctx_switch(&ult->ctx, &ult->pe->sched_ctx);
    rank_san_switch_end(asan_save, SCHED_STACK_OUT);
}

/* From the scheduler into ult, until ult blocks, yields or finishes, with
 * what every ULT keeps of its own (errno). */
static inline __attribute__((always_inline)) void switch_into(rank_pe_t *pe, ult_impl_t *impl)
{
    rank_ult_t *ult = &impl->pub;
    void *asan_save = NULL;
    ult->state = RANK_ULT_RUNNING;
    pe->current = ult;
    int *err = errno_at; /* set: errno_at_init ran on this thread */
    *err = impl->saved_errno;
    core_current = ult->user; /* the MPI rank it runs, for core_self() */
    rank_san_switch_begin(&asan_save, impl->stack.base, impl->stack.size);
    rank_ctx_switch(&pe->sched_ctx, &ult->ctx);
    rank_san_switch_end(asan_save, NULL, NULL);
    impl->saved_errno = *err;
    pe->current = NULL;
    /* outside any rank again: in library mode the thread's own MPI calls
     * take the host lock only when they find core_current NULL (P2P_ENTER) */
    core_current = NULL;
}

/* The same for a ULT with extras (ult_impl_t.extras): getopt's state put
 * back before it runs and saved after, and the canary of a stack without a
 * guard page of its own (rank_stack.h) checked at every switch, before a
 * corrupted neighbour runs.  Out of line: the common switch tests one flag. */
static __attribute__((noinline)) void switch_into_extras(rank_pe_t *pe, ult_impl_t *impl)
{
    if (rank_keep_getopt) {
        optind = impl->optind;
        opterr = impl->opterr;
        optopt = impl->optopt;
        optarg = impl->optarg;
    }
    switch_into(pe, impl);
    if (rank_keep_getopt) {
        impl->optind = optind;
        impl->opterr = opterr;
        impl->optopt = optopt;
        impl->optarg = optarg;
    }
    if (!rank_stack_canary_ok(&impl->stack))
        util_fatal("rank %d overflowed its %zu-byte stack (set AMPI_STACK_SIZE to a larger size)", impl->pub.id,
                   impl->stack.size);
}

static inline void run_ult(rank_pe_t *pe, rank_ult_t *ult)
{
    ult_impl_t *impl = UTIL_CONTAINER_OF(ult, ult_impl_t, pub);
    rank_waiting_set(pe, false); /* a rank resuming inside a wait raises it again */
    if (UTIL_UNLIKELY(impl->extras))
        switch_into_extras(pe, impl);
    else
        switch_into(pe, impl);
}

static _Noreturn void finish(rank_ult_t *ult)
{
    ult->state = RANK_ULT_DONE;
    ult->pe->nlive--;
    for (;;) /* the scheduler never resumes a DONE ULT; loop in case of a bug */
        switch_to_scheduler(ult, 1);
}

/* First function on every ULT stack (via rank_ctx_make). */
static void ult_main(void *arg)
{
    rank_ult_t *ult = arg;
    rank_san_switch_end(NULL, SCHED_STACK_OUT);
    ult->fn(ult->arg);
    finish(ult);
}

void rank_ult_exit(void)
{
    rank_pe_t *pe = rank_this_pe;
    if (!pe || !pe->current)
        util_fatal("internal error: rank_ult_exit outside a user-level thread");
    finish(pe->current);
}

rank_ult_t *rank_ult_create(rank_pe_t *pe, size_t stack_size, void (*fn)(void *), void *arg)
{
    ult_impl_t *impl = calloc(1, sizeof *impl);
    if (!impl)
        return NULL;
    if (rank_stack_alloc(&impl->stack, stack_size) != 0) {
        int err = errno;
        free(impl);
        errno = err;
        return NULL;
    }
    impl->optind = 1; /* getopt's state at a program's start */
    impl->opterr = 1;
    impl->optopt = '?';
    impl->extras = rank_keep_getopt || impl->stack.canary != NULL;
    rank_ult_t *ult = &impl->pub;
    ult->state = RANK_ULT_READY;
    ult->wake_pending = false;
    ult->pe = pe;
    ult->fn = fn;
    ult->arg = arg;
    ult->user = NULL;
    ult->id = __atomic_fetch_add(&next_ult_id, 1, __ATOMIC_RELAXED);
    ult->stack_map = impl->stack.map;
    ult->stack_map_size = impl->stack.map_size;
    ult->stack_size = impl->stack.size;
    rank_ctx_make(&ult->ctx, impl->stack.base, impl->stack.size, ult_main, ult);
    rank_guard_add(&impl->guard, ult);
    pe->nlive++;
    util_dlist_push_back(&pe->ready, &ult->ready_link);
    return ult;
}

void rank_ult_destroy(rank_ult_t *ult)
{
    if (!ult)
        return;
    if (ult->state != RANK_ULT_DONE) {
        util_fatal("internal error: destroying rank %d before it finished", ult->id);
    }
    ult_impl_t *impl = UTIL_CONTAINER_OF(ult, ult_impl_t, pub);
    rank_guard_remove(&impl->guard);
    rank_stack_free(&impl->stack);
    free(impl);
}

/* Nothing ready and nobody to make anything ready: every ULT waits for an
 * event that cannot come.  Say so instead of spinning forever. */
static void report_deadlock(const rank_pe_t *pe)
{
    util_fatal("deadlock: all %d remaining ranks of this PE are blocked "
               "and there is no progress engine to wake them", pe->nlive);
}

bool rank_cpu_owned(void)
{
    static int owned = -1; /* not asked yet: the affinity does not change under us */
    if (owned < 0) {
        cpu_set_t set;
        owned = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1;
    }
    return owned;
}

/* Run the ULTs that are ready now; ULTs that become ready meanwhile
 * (yield, wake) wait for the next pass, after progress, so a ULT that
 * yields in a loop cannot starve progress. */
static inline __attribute__((always_inline)) void run_ready(rank_pe_t *pe)
{
    util_dlink_t *last = pe->ready.head.prev;
    if (last == &pe->ready.head)
        return;
    util_dlink_t *link;
    do {
        link = util_dlist_pop_front(&pe->ready);
        run_ult(pe, UTIL_CONTAINER_OF(link, rank_ult_t, ready_link));
    } while (link != last);
}

void rank_pe_run(rank_pe_t *pe)
{
    rank_pe_t *outer = rank_this_pe;
    unsigned idle = 0;
    const bool may_yield = !rank_cpu_owned();
    rank_this_pe = pe;
    rank_guard_install(); /* this thread needs its alternate signal stack */
    errno_at_init();
    while (pe->nlive > 0) {
        int did = pe->progress ? pe->progress(pe->progress_arg) : 0;
        util_dlink_t *last = pe->ready.head.prev;
        if (last == &pe->ready.head) { /* nothing ready */
            if (!pe->progress)
                report_deadlock(pe);
            rank_waiting_set(pe, true); /* every rank waits inside MPI */
            /* Only progress can make a rank ready: poll, but let other
             * processes on an oversubscribed core run now and then. */
            if (!did && may_yield && ++idle >= 1024) {
                idle = 0;
                sched_yield();
            }
            continue;
        }
        idle = 0;
        run_ready(pe);
    }
    rank_waiting_set(pe, false);
    rank_this_pe = outer;
}

rank_pe_t *rank_current_pe(void)
{
    return rank_this_pe;
}

/* Outside any ULT (scheduler not running, or plain thread code) there is
 * nothing to switch to: polling progress once is the useful thing to do, and
 * callers loop (`while (!done) rank_block();`) anyway.  A hosted PE (library
 * mode, rank_host.h) has no scheduler loop: the waiting thread runs its
 * ready ULTs itself, then lets other threads' calls have their turn. */
static void poll_outside_ult(rank_pe_t *pe)
{
    if (pe && pe->progress)
        pe->progress(pe->progress_arg);
    if (pe && rank_hosted) {
        errno_at_init(); /* whichever thread waits runs the ULTs */
        run_ready(pe);
        rank_host_pause();
    }
}

void rank_block(void)
{
    rank_pe_t *pe = rank_this_pe;
    rank_ult_t *ult = pe ? pe->current : NULL;
    if (!ult) {
        poll_outside_ult(pe);
        return;
    }
    if (ult->wake_pending) { /* the wake came first: nothing to wait for */
        ult->wake_pending = false;
        return;
    }
    ult->state = RANK_ULT_BLOCKED;
    switch_to_scheduler(ult, 0);
}

void rank_yield(void)
{
    rank_pe_t *pe = rank_this_pe;
    rank_ult_t *ult = pe ? pe->current : NULL;
    if (!ult) {
        poll_outside_ult(pe);
        return;
    }
    ult->state = RANK_ULT_READY;
    util_dlist_push_back(&pe->ready, &ult->ready_link);
    switch_to_scheduler(ult, 0);
}

void rank_wake(rank_ult_t *ult)
{
    switch (ult->state) {
    case RANK_ULT_BLOCKED:
        ult->state = RANK_ULT_READY;
        util_dlist_push_back(&ult->pe->ready, &ult->ready_link);
        break;
    case RANK_ULT_READY:
    case RANK_ULT_RUNNING:
        ult->wake_pending = true;
        break;
    case RANK_ULT_DONE:
        break; /* a late completion for a finished rank: nothing to do */
    }
}
