/* A UCP context and worker of their own, beside the point-to-point ones,
 * for traffic that a second OS thread progresses while the ranks compute:
 * the nonblocking collectives' worker (ucx_async.c) and the one-sided
 * worker (src/rma/rma_net.c).  Both carry one active-message handler, are
 * served by a progress thread of the same policy, and are torn down at
 * process exit when a peer may already be gone; they differ in their
 * context parameters and thread mode, which the caller gives.
 *
 * The thread polls only while the ranks' thread does not: as long as a
 * rank is inside MPI its own polls serve the worker, and a second thread
 * spinning on the worker's lock would only slow it (on a machine with fewer
 * cores than threads, by whole time slices).  Once the ranks' polls stop
 * (every rank computing), it polls itself, and when the worker stays quiet
 * it sleeps in the worker's wakeup descriptor (1 ms at most).
 *
 * It looks at the ranks' polls after naps, and each look takes the core
 * from the ranks' thread when they share one (ampirun binds a process to a
 * core): on the 2-vCPU test machine a look held the core about 10 us, and
 * with a nap of 50 us MPI_Ialltoall + MPI_Wait of 64 KiB between 2
 * processes took 15.2-18.6 us against 9.0-11.2 us without the thread
 * (AMPI_NBC_PROGRESS=0).  Where the ranks' thread stamps its polls with
 * the time (stamped), a look that finds it polling right now, or holding
 * the worker's lock, naps twice as long as the last, up to 1 ms; one that
 * finds it elsewhere polls at once and naps 50 us again.  While no work
 * is under way (busy 0) a look progresses the worker once, for the sends
 * of finished work, and backs off likewise.  The same loop then took
 * 11.5-12.5 us, and 116-122 us at 1 MiB against 140-176.
 *
 * A thread on a CPU of its own (AMPI_PROGRESS_CPU) takes no core from the
 * ranks, and there a nap is what delays a transfer: with 50 us naps, which
 * the kernel's default timer slack stretches to about 100 us, IMB-NBC on
 * the 2 x H200 host overlapped nothing where the computation was shorter
 * than about 100 us (Ibcast up to 2 MiB, Ialltoall up to 256 KiB) and
 * 39-77 % where it was longer (BENCHMARKS.md, 3d0bcb6).  So there, for the
 * stamped worker and unless AMPI_PROGRESS_SPIN=off, it waits 2 us between
 * looks by spinning on pause instructions, or on a plain loop with
 * AMPI_PROGRESS_SPIN_PAUSE=off (a 2 us nanosleep took 6-7 us on average
 * there, up to 28 us: IMB-NBC's Ibcast at 128-256 KiB and Iscatter(v) at
 * 64 KiB overlapped 0 % with such naps and 46-55 % with the spin), polls
 * without arming while work is under way, stays awake 200 us after the last
 * work and then sleeps on the busy count's futex, which the start of the
 * next work wakes (ucx_side_busy).  Between its polls it also does the
 * users' own work (s->work: the schedules' local copies).
 *
 * A look that finds no new poll is not proof that the ranks compute: they
 * may be inside the library between polls (a collective's start, a read in
 * a callback).  Whenever this thread took the worker then, the ranks'
 * thread waited behind it and the worker's state moved between CPUs: in
 * MPI_Ialltoall + MPI_Wait loops of 64 KiB on the 2 x H200 host the ranks'
 * polls found the lock taken 13000-19000 times in 420 collectives.  So
 * while the ranks' thread waits inside MPI (s->waiting, the PE's flag that
 * wait loops raise) this thread only shares the users' copies, and the
 * users mark their calls that start work as polls at both ends
 * (ucx_side_inside), so that the look after a start stands aside once
 * before taking the worker.  IMB-NBC's t_pure fell to 0.63-0.99x at
 * Ialltoall(v) 64-512 KiB and 0.93-0.95x at Igatherv (3 rounds, one host;
 * BENCHMARKS.md). */
#ifndef AMPI_UCX_SIDE_H
#define AMPI_UCX_SIDE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <ucp/api/ucp.h>

#define UCX_SIDE_AM_ID 0 /* the one handler of each side worker */

typedef struct ucx_side {
    ucp_context_h context;
    ucp_worker_h worker;
    int efd;       /* the worker's wakeup descriptor, or -1 */
    ucp_ep_h *eps; /* by process, NULL until connected */
    int nprocs;
    pthread_mutex_t *lock; /* whoever progresses the worker holds it; the progress thread only tries it */
    pthread_t thread;
    bool thread_on;
    _Atomic bool stop;
    _Atomic unsigned pe_polls; /* bumped by the ranks' thread at each poll */
    bool stamped;              /* the ranks' thread also stamps its polls: */
    _Atomic uint64_t pe_stamp; /* CLOCK_MONOTONIC ns of the last, */
    _Atomic int busy;          /* and says how much work is under way */
    _Atomic bool dozing;       /* the progress thread sleeps until busy turns nonzero */
    const _Atomic bool *waiting; /* or NULL: true while the ranks' thread waits inside MPI, polling
                                  * the worker itself (rank_pe_t.waiting) */
    int (*work)(void); /* the users' own work beside the worker's (or NULL): the progress
                        * thread calls it without the lock after each of its polls; it
                        * returns how much it did */
    /* what the progress thread did, counted while debugging (AMPI_DEBUG) */
    _Atomic unsigned long idle_holds, busy_holds, busy_holds_found, asides;
    _Atomic unsigned long busy_held_ns;
} ucx_side_t;

/* Makes the context from params (the caller's features and hints, over the
 * configuration ucx_config_transports trims), the worker in thread_mode and
 * cb its handler of whole messages.  Returns the status of reading the
 * configuration or of ucp_init: whether a context UCX refuses is fatal is
 * the caller's choice.  A failure after that is fatal, named by what. */
ucs_status_t ucx_side_open(ucx_side_t *s, const ucp_params_t *params, ucs_thread_mode_t thread_mode, int nprocs,
                           ucp_am_recv_callback_t cb, const char *what);
/* An endpoint to proc's worker at addr (fatal when UCX refuses it); the
 * caller stores it in eps[proc] as its locking requires. */
ucp_ep_h ucx_side_connect(ucx_side_t *s, int proc, const void *addr, const char *what);
/* Whether the calling thread is a side worker's progress thread. */
bool ucx_side_on_thread(void);
/* Whether the progress threads get a CPU of their own (AMPI_PROGRESS_CPU),
 * where work handed to them runs beside the ranks instead of taking turns
 * with them on one core. */
bool ucx_side_has_cpu(void);
/* Starts the progress thread (once), which holds lock (or none: NULL)
 * around its calls of UCX; when the lock is taken it naps instead of
 * waiting, so that it never stands between the ranks' thread and its core. */
void ucx_side_thread_start(ucx_side_t *s, pthread_mutex_t *lock);
/* Now, in CLOCK_MONOTONIC nanoseconds. */
static inline uint64_t ucx_side_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* The ranks' thread marks a poll (pe_polls) and stamps every stamp_every-th. */
static inline void ucx_side_mark(ucx_side_t *s, unsigned stamp_every)
{
    unsigned n = atomic_load_explicit(&s->pe_polls, memory_order_relaxed) + 1;
    atomic_store_explicit(&s->pe_polls, n, memory_order_relaxed);
    if (s->stamped && n % stamp_every == 0)
        atomic_store_explicit(&s->pe_stamp, ucx_side_now(), memory_order_relaxed);
}
/* The ranks' thread, before it polls the worker: the progress thread stands
 * aside.  The stamp is taken every 16th poll: a wait loop polls many times
 * in the 20 us the progress thread allows, and a clock read at every poll
 * was 5 % of the busy time of 64 KiB exchanges (perf). */
static inline void ucx_side_polling(ucx_side_t *s) { ucx_side_mark(s, 16); }
/* A poll's mark, stamped always: the ranks' thread is inside the library
 * (ucx_async_inside). */
static inline void ucx_side_inside(ucx_side_t *s) { ucx_side_mark(s, 1); }
/* The work under way is now n (the ranks' thread): wakes the progress
 * thread where it sleeps for the lack of any. */
void ucx_side_busy(ucx_side_t *s, int n);
/* At process exit: stops the progress thread, flushes the worker, closes
 * the endpoints and frees everything. */
void ucx_side_close(ucx_side_t *s);
/* While debugging: what the progress thread did (util_debug lines). */
void ucx_side_report(ucx_side_t *s, const char *what);

#endif
