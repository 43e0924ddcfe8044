/* Window memory that the other processes of the node map into their own
 * address space, so that their puts, gets and accumulates are plain loads
 * and stores: no system call, no message, no action of the target.
 *
 * MPI_Win_allocate places each member's memory in a POSIX shared-memory
 * object of its own when the window has members in other processes of the
 * node; every such member maps the others' objects at creation, then the
 * owners unlink them (nothing stays in /dev/shm).  MPI_Win_allocate_shared
 * windows are mapped by every member already.  Either way each member's
 * memory comes with a process-shared mutex, the accumulate lock: every
 * accumulate, get_accumulate, fetch_and_op and compare_and_swap on that
 * memory, whichever route brought it, applies under it, which keeps them
 * atomic with respect to each other (MPI's accumulate atomicity).  Off with
 * AMPI_RMA_SHM=0 (then puts and gets take cross-memory attach, accumulates
 * messages). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/core_settings.h"
#include "pt2pt/p2p_api.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"
#include "ucx/ucx_pmix.h"

/* The accumulate lock leads the object; the window memory starts a page later. */
#define RMA_SHM_HEAD 4096

static void object_name(char *buf, size_t n, uint32_t ctx, int world)
{
    snprintf(buf, n, "/ampi-rwin-%s-%u-%d", ucx_pmix_nspace(), ctx, world);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/')
            *p = '_';
}

void rma_acc_lock_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    /* a process that dies inside an accumulate leaves the lock usable */
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
}

void rma_acc_lock(pthread_mutex_t *m)
{
    if (pthread_mutex_lock(m) == EOWNERDEAD)
        pthread_mutex_consistent(m);
}

void rma_acc_unlock(pthread_mutex_t *m) { pthread_mutex_unlock(m); }

bool rma_shm_wanted(rma_win_t *w)
{
    if (!core_setting_bool(CORE_SET_RMA_SHM) || core_proc.nprocs < 2)
        return false;
    for (int i = 0; i < w->size; i++) {
        int world = core_comm_world_rank(w->c, i);
        if (!p2p_is_local(world) && ucx_pmix_is_local(p2p_proc_of(world)))
            return true;
    }
    return false;
}

int rma_shm_alloc(rma_win_t *w, size_t size)
{
    char name[160];
    object_name(name, sizeof name, w->ctx, w->world);
    shm_unlink(name); /* a leftover of a killed job with the same names */
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return -1;
    size_t len = RMA_SHM_HEAD + size;
    void *map = MAP_FAILED;
    /* the pages are reserved now: a full /dev/shm fails here (private memory
     * instead), not with SIGBUS at the first store */
    if (ftruncate(fd, (off_t)len) == 0 && posix_fallocate(fd, 0, (off_t)len) == 0)
        map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        shm_unlink(name);
        return -1;
    }
    w->own_map = map;
    w->own_map_len = len;
    w->own_shm_named = true;
    w->acc_lk = map;
    rma_acc_lock_init(w->acc_lk);
    w->base = (char *)map + RMA_SHM_HEAD;
    return 0;
}

void rma_shm_map_peer(rma_win_t *w, int i, size_t size)
{
    char name[160];
    object_name(name, sizeof name, w->ctx, w->mem[i].world);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        util_debug("window %u: cannot open rank %d's memory (%s): messages instead", w->ctx, i, strerror(errno));
        return;
    }
    size_t len = RMA_SHM_HEAD + size;
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        util_debug("window %u: cannot map rank %d's memory: messages instead", w->ctx, i);
        return;
    }
    w->mem[i].map_start = map;
    w->mem[i].map_len = len;
    w->mem[i].acc_lk = map;
    w->mem[i].map = (char *)map + RMA_SHM_HEAD;
}

void rma_shm_unlink_own(rma_win_t *w)
{
    if (!w->own_shm_named)
        return;
    char name[160];
    object_name(name, sizeof name, w->ctx, w->world);
    shm_unlink(name);
    w->own_shm_named = false;
}

void rma_shm_release(rma_win_t *w)
{
    rma_shm_unlink_own(w);
    for (int i = 0; i < w->size; i++)
        if (w->mem[i].map_start)
            munmap(w->mem[i].map_start, w->mem[i].map_len);
    if (w->own_map)
        munmap(w->own_map, w->own_map_len);
}
