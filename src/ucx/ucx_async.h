/* A second UCX worker for traffic that must move while the ranks compute
 * (nonblocking collectives' schedules), and the thread that progresses it.
 *
 * The point-to-point worker belongs to the PE's OS thread alone (its
 * matching queues are lock-free), so a progress thread cannot touch it.
 * This worker is serialized by one mutex instead: whoever holds it may call
 * UCX on the worker, and the handlers and completion callbacks of its users
 * run with it held (inside ucx_async_poll or the thread's progress), so
 * they may post further sends and receives from there.  The ranks' thread
 * polls it while inside MPI; once it stops polling (every rank computing)
 * the progress thread polls, and sleeps in the worker's wakeup descriptor
 * while nothing arrives.
 *
 * The worker exists in jobs of several processes unless AMPI_NBC_PROGRESS=0;
 * its address is published through PMIx at start-up, and endpoints are made
 * on first use.  The thread starts at the first ucx_async_thread_start. */
#ifndef AMPI_UCX_ASYNC_H
#define AMPI_UCX_ASYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Handler of arriving messages (called with the lock held).  hdr[hlen] is
 * the sender's header.  Eager data: data[len] is valid during the call only
 * (desc NULL).  Rendezvous: data is NULL and desc names the data, to be
 * fetched with ucx_async_recv_data, now or later (or dropped: ucx_async_drop);
 * the handler returns true when it keeps desc for later. */
typedef bool (*ucx_async_handler_fn)(const void *hdr, size_t hlen, const void *data, void *desc, size_t len);
/* Completion of a send or ucx_async_recv_data (called with the lock held). */
typedef void (*ucx_async_done_fn)(void *arg, int status);

/* Before the start-up fence: makes the worker, publishes its address. */
void ucx_async_init(int proc, int nprocs, ucx_async_handler_fn handler);
bool ucx_async_up(void);
void ucx_async_lock(void);
void ucx_async_unlock(void);
/* While debugging (AMPI_DEBUG): how often the ranks' thread waited for the
 * lock and what the progress thread did, at process exit. */
void ucx_async_report(void);
/* Takes the lock unless another thread holds it; true when taken. */
bool ucx_async_trylock(void);
/* Work of the worker's users that is not UCX's (local copies of the
 * schedules): the progress thread calls fn, without the lock, after each of
 * its polls; fn returns how much it did.  Set before the thread starts. */
void ucx_async_set_work(int (*fn)(void));
/* Whether process 0's progress thread has one: the same answer in every
 * process of the job, for choices that every process must make alike
 * (AMPI_PROGRESS_CPU may differ between processes).  False without the
 * worker. */
bool ucx_async_job_has_cpu(void);
/* Whether the calling thread is the progress thread. */
bool ucx_async_on_thread(void);

/* With the lock held.  Return 0 when done at once (done is not called),
 * 1 when done(arg, status) comes later. */
int ucx_async_send(int proc, const void *hdr, size_t hlen, const void *data, size_t len, ucx_async_done_fn done,
                   void *arg);
int ucx_async_recv_data(void *desc, void *buf, size_t len, ucx_async_done_fn done, void *arg);
void ucx_async_drop(void *desc);

/* The ranks' thread: progress once if nobody else is (takes the lock). */
int ucx_async_poll(void);
/* The ranks' thread: how many schedules of this process are under way;
 * while none is, the progress thread only flushes now and then. */
void ucx_async_busy(int n);
/* The ranks' thread is inside the library right now (a collective's start):
 * counted as a poll, so that the progress thread's next look stands aside
 * instead of taking the worker in the moment between the start and a wait. */
void ucx_async_inside(void);
/* flag: true while the ranks' thread waits inside MPI and polls the worker
 * itself (rank_pe_t.waiting); the progress thread keeps off the worker
 * meanwhile.  Set before ucx_async_thread_start. */
void ucx_async_watch(const _Atomic bool *flag);
/* Starts the progress thread (once; nothing when AMPI_NBC_PROGRESS=0). */
void ucx_async_thread_start(void);
/* At process exit, after every rank has finalized. */
void ucx_async_fini(void);

#endif
