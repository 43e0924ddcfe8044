/* The process's point-to-point side: setting up the process and its ranks,
 * the PE's progress function, and what a rank does while it waits. */
#ifndef AMPI_P2P_PROC_H
#define AMPI_P2P_PROC_H

#include <sched.h>
#include <stdbool.h>
#include "core/core_rank.h"
#include "pt2pt/p2p_types.h"
#include "rank/rank_host.h"
#include "rank/rank_ult.h"
#include "util/util_list.h"

void p2p_proc_init(int nranks, int nprocs, int proc);
void p2p_rank_init(p2p_rank_t *r, int world);
void p2p_rank_fini(p2p_rank_t *r);
int p2p_progress(void *unused); /* the PE's progress function */
/* Functions p2p_progress calls once added (the one-sided layer at its first
 * window, nonblocking collectives' schedules at their first start): nothing
 * is paid for them before.  At most P2P_MAX_HOOKS. */
#define P2P_MAX_HOOKS 4
void p2p_add_progress_hook(int (*hook)(void));

/* What a rank does while its condition is not met: with other processes in
 * the job and no other rank of this PE ready, poll the network right here
 * (a switch to the scheduler and back would only add latency); otherwise
 * block until a completion wakes it.  Callers loop: while (!cond) p2p_idle(); */
static inline void p2p_idle(void)
{
    if (core_proc.nprocs > 1 && util_dlist_empty(&p2p_proc.pe.ready)) {
        /* after a while without news, give the core away once: when the
         * processes outnumber the cores, spinning would hold a peer off its
         * core for a whole time slice.  A process with a core of its own
         * never does (osu_bw's sender, idle while the receiver drains a
         * window, lost a third of its rate to these system calls). */
        if (p2p_progress(NULL))
            p2p_proc.idle_polls = 0;
        else if (p2p_proc.idle_yield && ++p2p_proc.idle_polls >= 256) {
            p2p_proc.idle_polls = 0;
            sched_yield();
        }
        if (__builtin_expect(rank_hosted, 0)) /* library mode: other threads' calls get their turn */
            rank_host_pause();
    } else {
        bool waiting = rank_waiting_set(&p2p_proc.pe, false); /* the PE may go to another rank */
        rank_block();
        if (waiting)
            rank_waiting_set(&p2p_proc.pe, true);
    }
}

/* A wait loop (`while (!cond) p2p_idle();`): the PE's waiting flag from
 * here to the end of the enclosing block (rank_ult.h), which tells the
 * nonblocking collectives' progress thread that this thread polls the
 * network itself.  Only the outermost scope clears it: a scope that found
 * it set leaves it to the one that set it. */
static inline bool p2p_waiting_begin(void) { return rank_waiting_set(&p2p_proc.pe, true); }
static inline void p2p_waiting_end(const bool *was)
{
    if (!*was)
        rank_waiting_set(&p2p_proc.pe, false);
}
#define P2P_WAITING __attribute__((cleanup(p2p_waiting_end))) const bool p2p_waiting_was_ = p2p_waiting_begin()
void p2p_wait_complete(p2p_req_t *q); /* block the calling rank until q completes */
void p2p_poll(void);                  /* progress once and let other ranks run */
void p2p_yield(void);                 /* let other ranks run (rank_yield), minding the waiting flag */

#endif
