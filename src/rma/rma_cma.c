/* Puts and gets by cross-memory attach: between processes of one node the
 * origin writes (process_vm_writev) or reads (process_vm_readv) the target's
 * host window itself.  One copy, no message, no action of the target.
 * Accumulates keep to messages: their atomicity needs the target's mutex.
 *
 * A system call costs more than a small copy, so small contiguous puts and
 * gets wait in a batch per target and go in one call each way at the next
 * synchronization that completes them (flush, unlock, fence, complete, free)
 * or when the batch is full: MPI lets neither the origin buffer of a put be
 * reused nor the result of a get be read before then. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include "rma/rma.h"
#include "rma/rma_internal.h"

/* n bytes between local and the target's remote, continued where a call stops short. */
static int copy_one(pid_t pid, char *local, uint64_t remote, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        struct iovec l = { local + done, n - done };
        struct iovec r = { (void *)(uintptr_t)(remote + done), n - done };
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 && errno == EFAULT ? MPI_ERR_RMA_RANGE : MPI_ERR_OTHER;
        done += (size_t)got;
    }
    return MPI_SUCCESS;
}

int rma_cma_copy(rma_win_t *w, int t, bool write, void *local, uint64_t remote, const rma_seg_t *segs,
                 uint32_t nseg, size_t len)
{
    pid_t pid = (pid_t)w->mem[t].pid;
    if (nseg == 0)
        return copy_one(pid, local, remote, len, write);
    char *p = local;
    for (uint32_t i = 0; i < nseg; i++) {
        int err = copy_one(pid, p, remote + (uint64_t)segs[i].off, segs[i].len, write);
        if (err != MPI_SUCCESS)
            return err;
        p += segs[i].len;
    }
    return MPI_SUCCESS;
}

/* Operations per target and direction in a batch, the largest one batched,
 * and the bytes a batch holds before it goes. */
#define BATCH_OPS 64
#define BATCH_OP_MAX 4096
#define BATCH_BYTES (256 * 1024)

struct rma_cma_batch {
    uint32_t n[2]; /* [0] gets, [1] puts */
    size_t bytes[2];
    struct iovec local[2][BATCH_OPS], remote[2][BATCH_OPS];
};

bool rma_cma_batchable(size_t len) { return len <= BATCH_OP_MAX; }

/* One direction of target t's batch, in one call where the kernel takes it all. */
static int drain_dir(rma_win_t *w, int t, rma_cma_batch_t *b, int dir)
{
    uint32_t n = b->n[dir];
    if (n == 0)
        return MPI_SUCCESS;
    b->n[dir] = 0;
    size_t total = b->bytes[dir];
    b->bytes[dir] = 0;
    pid_t pid = (pid_t)w->mem[t].pid;
    ssize_t got = dir ? process_vm_writev(pid, b->local[dir], n, b->remote[dir], n, 0)
                      : process_vm_readv(pid, b->local[dir], n, b->remote[dir], n, 0);
    if (got == (ssize_t)total)
        return MPI_SUCCESS;
    /* stopped short (or interrupted): the rest one operation at a time */
    size_t skip = got > 0 ? (size_t)got : 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = b->local[dir][i].iov_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        int err = copy_one(pid, (char *)b->local[dir][i].iov_base + skip,
                           (uint64_t)(uintptr_t)b->remote[dir][i].iov_base + skip, len - skip, dir == 1);
        if (err != MPI_SUCCESS)
            return err;
        skip = 0;
    }
    return MPI_SUCCESS;
}

static int drain_one(rma_win_t *w, int t)
{
    rma_cma_batch_t *b = w->cma_batch[t];
    if (!b || (b->n[0] == 0 && b->n[1] == 0))
        return MPI_SUCCESS;
    w->cma_pending--;
    int err = drain_dir(w, t, b, 1); /* puts first: a get after a put sees it, as at issue */
    int err2 = drain_dir(w, t, b, 0);
    return err != MPI_SUCCESS ? err : err2;
}

int rma_cma_defer(rma_win_t *w, int t, bool write, void *local, uint64_t remote, size_t len)
{
    if (!w->cma_batch && !(w->cma_batch = calloc((size_t)w->size, sizeof *w->cma_batch)))
        return MPI_ERR_NO_MEM;
    rma_cma_batch_t *b = w->cma_batch[t];
    if (!b && !(b = w->cma_batch[t] = calloc(1, sizeof *b)))
        return MPI_ERR_NO_MEM;
    int dir = write ? 1 : 0;
    if (b->n[dir] == BATCH_OPS || b->bytes[dir] + len > BATCH_BYTES) {
        int err = drain_one(w, t);
        if (err != MPI_SUCCESS)
            return err;
    }
    if (b->n[0] == 0 && b->n[1] == 0)
        w->cma_pending++;
    b->local[dir][b->n[dir]] = (struct iovec){ local, len };
    b->remote[dir][b->n[dir]] = (struct iovec){ (void *)(uintptr_t)remote, len };
    b->n[dir]++;
    b->bytes[dir] += len;
    return MPI_SUCCESS;
}

int rma_cma_drain(rma_win_t *w, int t)
{
    if (!w->cma_pending)
        return MPI_SUCCESS;
    if (t >= 0)
        return drain_one(w, t);
    int err = MPI_SUCCESS;
    for (int i = 0; i < w->size && w->cma_pending; i++) {
        int e = drain_one(w, i);
        if (err == MPI_SUCCESS)
            err = e;
    }
    return err;
}

void rma_cma_free(rma_win_t *w)
{
    if (!w->cma_batch)
        return;
    for (int i = 0; i < w->size; i++)
        free(w->cma_batch[i]);
    free(w->cma_batch);
    w->cma_batch = NULL;
}
