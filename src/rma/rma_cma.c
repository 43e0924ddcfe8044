/* Puts and gets by cross-memory attach: between processes of one node the
 * origin writes (process_vm_writev) or reads (process_vm_readv) the target's
 * host window itself.  One copy, no message, no action of the target: the
 * operation is complete when the call returns, so a later flush, unlock,
 * fence or complete has nothing to wait for.  Accumulates keep to messages:
 * their atomicity needs the target's mutex. */
#define _GNU_SOURCE
#include <errno.h>
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
