/* Synchronization: fence, post/start/complete/wait/test, lock/unlock,
 * lock_all/unlock_all, flush, sync.
 *
 * Completion is counted, not acknowledged per operation: each origin counts
 * the puts and accumulates it sent to each target (sent_to), each target
 * the ones it applied from each origin (done_from).  A fence sums the sent
 * counts per target (one Reduce_scatter_block) and each target waits until
 * it has applied that many; Win_complete sends each target its count and
 * Win_wait waits for it; an unlock or flush sends the count to the target,
 * which answers once it has applied as many.  Operations on targets in this
 * process are applied at issue and never counted; device copies started at
 * issue (rma_dev.c) are waited for here, as the cross-memory-attach batches
 * are. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "pt2pt/p2p_api.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"

/* The ranks' progress hook (pt2pt calls it from its progress once a window exists). */
static int hook(void) { return rma_target_deferred() + rma_net_progress(); }

void rma_progress_start(void)
{
    static bool added;
    if (!added) {
        added = true;
        p2p_add_progress_hook(hook);
    }
}

/* Nobody wakes a rank waiting for one-sided completions (they are counted
 * by whichever thread handles them), so it polls: other ranks of the PE
 * first, else the network, giving the core away now and then as p2p_idle
 * does (with more processes than cores, a spinning origin would keep the
 * target or the lock holder off its core for whole time slices). */
void rma_wait_poll(void)
{
    static unsigned idle;
    int n = rma_target_deferred() + rma_net_progress();
    if (!util_dlist_empty(&p2p_proc.pe.ready)) {
        p2p_poll();
        return;
    }
    n += p2p_progress(NULL);
    if (n)
        idle = 0;
    else if (p2p_proc.idle_yield && ++idle >= 256) {
        idle = 0;
        sched_yield();
    }
}

bool rma_epoch_ok(rma_win_t *w, int t)
{
    if (w->fence_epoch || w->lock_all || w->locked[t])
        return true;
    for (int i = 0; i < w->naccess; i++)
        if (w->access[i] == t)
            return true;
    return false;
}

static uint64_t done_from(rma_win_t *w, int o)
{
    pthread_mutex_lock(&w->lk);
    uint64_t n = w->done_from[o];
    pthread_mutex_unlock(&w->lk);
    return n;
}

static uint64_t done_total(rma_win_t *w)
{
    pthread_mutex_lock(&w->lk);
    uint64_t n = w->done_total;
    pthread_mutex_unlock(&w->lk);
    return n;
}

/* Local completion of everything sent to t (answers of fetches included). */
static void wait_local(rma_win_t *w, int t)
{
    rma_dev_drain(w, t);
    int err = rma_cma_drain(w, t);
    if (err != MPI_SUCCESS)
        rma_win_error(w, err, "MPI_Win_flush (a put or get by cross-memory attach)");
    while ((t < 0 ? w->nfetching : w->fetching[t]) > 0 || atomic_load(&w->sending) > 0)
        rma_wait_poll();
}

/* Ask target t to answer once it has applied what we sent (UNLOCK: and release the lock). */
static void send_count(rma_win_t *w, int t, uint8_t kind, int lock_type)
{
    rma_hdr_t h = { .kind = kind, .lock_type = (uint8_t)lock_type, .ctx = w->ctx, .target = w->mem[t].world,
                    .origin = w->rank, .origin_world = w->world, .id = w->sent_to[t] };
    w->ack_want[t]++;
    rma_net_send(p2p_proc_of(h.target), &h, NULL, 0, NULL, NULL, false);
}

static void wait_acks(rma_win_t *w, int t)
{
    while (atomic_load(&w->ack_cnt[t]) < w->ack_want[t])
        rma_wait_poll();
    w->acked[t] = w->sent_to[t];
}

int rma_flush_target(rma_win_t *w, int t, bool local_only)
{
    atomic_thread_fence(memory_order_seq_cst); /* stores into mapped memory (rma_shm.c) before what follows */
    if (w->mem[t].local) {
        rma_dev_drain(w, t); /* device copies into a rank's window of this process */
        return MPI_SUCCESS;
    }
    wait_local(w, t);
    if (!local_only && w->sent_to[t] > w->acked[t]) {
        send_count(w, t, RMA_FLUSH, 0);
        wait_acks(w, t);
    }
    return MPI_SUCCESS;
}

static int flush_all(rma_win_t *w, bool local_only)
{
    atomic_thread_fence(memory_order_seq_cst);
    wait_local(w, -1);
    if (local_only)
        return MPI_SUCCESS;
    for (int t = 0; t < w->size; t++)
        if (!w->mem[t].local && w->sent_to[t] > w->acked[t])
            send_count(w, t, RMA_FLUSH, 0);
    for (int t = 0; t < w->size; t++)
        if (!w->mem[t].local)
            wait_acks(w, t);
    return MPI_SUCCESS;
}

/* ---- locks ---- */

/* Ask for target t's lock (granted later: wait_grant). */
static void lock_request(rma_win_t *w, int t, int type)
{
    uint64_t want = ++w->grant_want[t];
    (void)want;
    if (w->mem[t].local) {
        rma_win_t *p = rma_peer(w, t);
        pthread_mutex_lock(&p->lk);
        bool now = rma_lock_try(p, w->rank, w->world, type);
        pthread_mutex_unlock(&p->lk);
        if (now)
            atomic_fetch_add(&w->grant_cnt[t], 1);
        return;
    }
    rma_hdr_t h = { .kind = RMA_LOCK, .lock_type = (uint8_t)type, .ctx = w->ctx, .target = w->mem[t].world,
                    .origin = w->rank, .origin_world = w->world };
    rma_net_send(p2p_proc_of(h.target), &h, NULL, 0, NULL, NULL, false);
}

static void wait_grant(rma_win_t *w, int t)
{
    while (atomic_load(&w->grant_cnt[t]) < w->grant_want[t])
        rma_wait_poll();
}

/* Release target t's lock once what we sent is applied (wait_acks for remote ones). */
static void unlock_request(rma_win_t *w, int t, int type)
{
    if (w->mem[t].local) {
        rma_dev_drain(w, t); /* the next holder sees our device copies */
        rma_win_t *p = rma_peer(w, t);
        pthread_mutex_lock(&p->lk);
        rma_unlock_local(p, w->rank, type);
        pthread_mutex_unlock(&p->lk);
        rma_outbox_flush(); /* grants to waiting origins */
        return;
    }
    wait_local(w, t);
    send_count(w, t, RMA_UNLOCK, type);
}

#define LOCK_NOCHECK RMA_LOCK_NOCHECK

#pragma weak MPI_Win_lock = PMPI_Win_lock
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_lock");
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return rma_win_error(w, MPI_ERR_LOCKTYPE, "MPI_Win_lock");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return rma_win_error(w, MPI_ERR_RANK, "MPI_Win_lock");
    if (w->locked[rank] || w->lock_all || w->access)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock");
    w->nlocks++;
    if (assert & MPI_MODE_NOCHECK) { /* nobody else locks it meanwhile: no protocol */
        w->locked[rank] = (uint8_t)(lock_type | LOCK_NOCHECK);
        return MPI_SUCCESS;
    }
    w->locked[rank] = (uint8_t)lock_type;
    lock_request(w, rank, lock_type);
    wait_grant(w, rank);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_unlock = PMPI_Win_unlock
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_unlock");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return rma_win_error(w, MPI_ERR_RANK, "MPI_Win_unlock");
    if (!w->locked[rank])
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_unlock");
    int type = w->locked[rank];
    if (type & LOCK_NOCHECK) {
        rma_flush_target(w, rank, false);
    } else {
        unlock_request(w, rank, type);
        if (!w->mem[rank].local)
            wait_acks(w, rank);
    }
    w->locked[rank] = 0;
    w->nlocks--;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_lock_all");
    if (w->lock_all || w->nlocks || w->access)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
    w->lock_all = true;
    w->lock_all_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    if (w->lock_all_nocheck)
        return MPI_SUCCESS;
    for (int t = 0; t < w->size; t++)
        lock_request(w, t, MPI_LOCK_SHARED);
    for (int t = 0; t < w->size; t++)
        wait_grant(w, t);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
int PMPI_Win_unlock_all(MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_unlock_all");
    if (!w->lock_all)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all");
    if (w->lock_all_nocheck) {
        flush_all(w, false);
    } else {
        wait_local(w, -1);
        for (int t = 0; t < w->size; t++)
            unlock_request(w, t, MPI_LOCK_SHARED);
        for (int t = 0; t < w->size; t++)
            if (!w->mem[t].local)
                wait_acks(w, t);
    }
    w->lock_all = w->lock_all_nocheck = false;
    return MPI_SUCCESS;
}

static int flush_check(rma_win_t *w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w->size)
        return rma_win_error(w, MPI_ERR_RANK, fn);
    if (!w->locked[rank] && !w->lock_all)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, fn);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_flush = PMPI_Win_flush
int PMPI_Win_flush(int rank, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_flush");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int err = flush_check(w, rank, "MPI_Win_flush");
    return err != MPI_SUCCESS ? err : rma_flush_target(w, rank, false);
}

#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_flush_local");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int err = flush_check(w, rank, "MPI_Win_flush_local");
    return err != MPI_SUCCESS ? err : rma_flush_target(w, rank, true);
}

#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
int PMPI_Win_flush_all(MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_flush_all");
    if (!w->nlocks && !w->lock_all)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_flush_all");
    return flush_all(w, false);
}

#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
int PMPI_Win_flush_local_all(MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_flush_local_all");
    if (!w->nlocks && !w->lock_all)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_flush_local_all");
    return flush_all(w, true);
}

#pragma weak MPI_Win_sync = PMPI_Win_sync
int PMPI_Win_sync(MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_sync");
    (void)w;
    /* the unified model: public and private copies are one memory; order this rank's accesses */
    atomic_thread_fence(memory_order_seq_cst);
    rma_net_progress();
    return MPI_SUCCESS;
}

/* ---- fence ---- */

#pragma weak MPI_Win_fence = PMPI_Win_fence
int PMPI_Win_fence(int assert, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_fence");
    if (w->access || w->expose || w->nlocks || w->lock_all)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_fence");
    wait_local(w, -1);
    int err = MPI_SUCCESS;
    if (!(assert & MPI_MODE_NOPRECEDE)) {
        /* each target learns how many operations were sent to it in all, and waits for them */
        unsigned long long expected = 0;
        err = PMPI_Reduce_scatter_block(w->sent_to, &expected, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, w->comm);
        if (err != MPI_SUCCESS)
            return err;
        while (done_total(w) < expected)
            rma_wait_poll();
    }
    /* the next epoch's accesses must not overtake this one's: everyone has applied
     * what it was sent before anyone goes on.  Without a following epoch the
     * Reduce_scatter_block already told each target that every origin had
     * entered the fence, which is all a closing fence needs. */
    if (!(assert & MPI_MODE_NOSUCCEED))
        err = PMPI_Barrier(w->comm);
    w->fence_epoch = !(assert & MPI_MODE_NOSUCCEED);
    return err;
}

/* ---- post/start/complete/wait ---- */

/* The window ranks of group's members (malloc'ed). */
static int *group_ranks(rma_win_t *w, MPI_Group group, int *n, int *err)
{
    *err = PMPI_Group_size(group, n);
    if (*err != MPI_SUCCESS)
        return NULL;
    int *in = malloc((size_t)(*n + 1) * sizeof *in), *out = malloc((size_t)(*n + 1) * sizeof *out);
    MPI_Group wg;
    *err = PMPI_Comm_group(w->comm, &wg);
    for (int i = 0; i < *n; i++)
        in[i] = i;
    if (*err == MPI_SUCCESS) {
        *err = PMPI_Group_translate_ranks(group, *n, in, wg, out);
        PMPI_Group_free(&wg);
    }
    free(in);
    for (int i = 0; *err == MPI_SUCCESS && i < *n; i++)
        if (out[i] == MPI_UNDEFINED)
            *err = MPI_ERR_GROUP;
    if (*err != MPI_SUCCESS) {
        free(out);
        return NULL;
    }
    return out;
}

#pragma weak MPI_Win_post = PMPI_Win_post
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_post");
    if (w->expose)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_post");
    int n, err;
    int *ranks = group_ranks(w, group, &n, &err);
    if (!ranks)
        return rma_win_error(w, err, "MPI_Win_post");
    w->expose = ranks;
    w->nexpose = n;
    if (!(assert & MPI_MODE_NOCHECK))
        for (int i = 0; i < n; i++) {
            err = PMPI_Send(NULL, 0, MPI_BYTE, ranks[i], RMA_TAG_POST, w->comm);
            if (err != MPI_SUCCESS)
                return err;
        }
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_start = PMPI_Win_start
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_start");
    if (w->access)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_start");
    int n, err;
    int *ranks = group_ranks(w, group, &n, &err);
    if (!ranks)
        return rma_win_error(w, err, "MPI_Win_start");
    if (!(assert & MPI_MODE_NOCHECK))
        for (int i = 0; i < n; i++) {
            err = PMPI_Recv(NULL, 0, MPI_BYTE, ranks[i], RMA_TAG_POST, w->comm, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS) {
                free(ranks);
                return err;
            }
        }
    w->access = ranks;
    w->naccess = n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_complete = PMPI_Win_complete
int PMPI_Win_complete(MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_complete");
    if (!w->access)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_complete");
    wait_local(w, -1);
    int err = MPI_SUCCESS;
    for (int i = 0; i < w->naccess && err == MPI_SUCCESS; i++) {
        unsigned long long n = w->sent_to[w->access[i]];
        err = PMPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, w->access[i], RMA_TAG_COMPLETE, w->comm);
    }
    free(w->access);
    w->access = NULL;
    w->naccess = 0;
    return err;
}

static void expose_end(rma_win_t *w)
{
    free(w->expose);
    free(w->complete_reqs);
    free(w->complete_counts);
    w->expose = NULL;
    w->complete_reqs = NULL;
    w->complete_counts = NULL;
    w->nexpose = 0;
}

#pragma weak MPI_Win_wait = PMPI_Win_wait
int PMPI_Win_wait(MPI_Win win)
{
    RMA_WIN(w, win, "MPI_Win_wait");
    if (!w->expose)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_wait");
    for (int i = 0; i < w->nexpose; i++) {
        unsigned long long n = 0;
        int err = w->complete_reqs
                      ? PMPI_Wait(&w->complete_reqs[i], MPI_STATUS_IGNORE)
                      : PMPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, w->expose[i], RMA_TAG_COMPLETE, w->comm,
                                  MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return err;
        if (w->complete_reqs)
            n = w->complete_counts[i];
        while (done_from(w, w->expose[i]) < n)
            rma_wait_poll();
    }
    expose_end(w);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_test = PMPI_Win_test
int PMPI_Win_test(MPI_Win win, int *flag)
{
    RMA_WIN(w, win, "MPI_Win_test");
    if (!w->expose)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_test");
    if (!flag)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_test");
    int n = w->nexpose;
    if (!w->complete_reqs) {
        w->complete_reqs = malloc((size_t)(n + 1) * sizeof *w->complete_reqs);
        w->complete_counts = calloc((size_t)(n + 1), sizeof *w->complete_counts);
        for (int i = 0; i < n; i++)
            PMPI_Irecv(&w->complete_counts[i], 1, MPI_UNSIGNED_LONG_LONG, w->expose[i], RMA_TAG_COMPLETE,
                       w->comm, &w->complete_reqs[i]);
    }
    rma_net_progress();
    int all = 0;
    int err = PMPI_Testall(n, w->complete_reqs, &all, MPI_STATUSES_IGNORE);
    if (err != MPI_SUCCESS)
        return err;
    for (int i = 0; all && i < n; i++)
        if (done_from(w, w->expose[i]) < w->complete_counts[i])
            all = 0;
    *flag = all;
    if (all)
        expose_end(w);
    return MPI_SUCCESS;
}
