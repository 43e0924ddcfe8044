/* Windows: creation in four flavors, the process registry, freeing, group. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/core_settings.h"
#include "gpu/gpu_ipc.h"
#include "pt2pt/p2p_api.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"
#include "ucx/ucx_pmix.h"

rma_proc_t rma_proc = { .reg_lk = PTHREAD_MUTEX_INITIALIZER };

/* Handles: process-wide (each rank uses the ones it created), index + 1. */
static rma_win_t **handles;
static int nhandles;

rma_win_t *rma_win_of(MPI_Win h)
{
    if (h <= 0 || h > nhandles)
        return NULL;
    rma_win_t *w = handles[h - 1];
    p2p_rank_t *r = p2p_self();
    return w && r && w->world == r->core.world ? w : NULL;
}

static rma_win_t *last; /* rma_lookup's last hit, under reg_lk */

static MPI_Win handle_add(rma_win_t *w)
{
    for (int i = 0; i < nhandles; i++)
        if (!handles[i]) {
            handles[i] = w;
            return i + 1;
        }
    rma_win_t **t = realloc(handles, (size_t)(nhandles + 16) * sizeof *t);
    if (!t)
        return MPI_WIN_NULL;
    handles = t;
    memset(handles + nhandles, 0, 16 * sizeof *t);
    handles[nhandles] = w;
    nhandles += 16;
    return nhandles - 15;
}

rma_win_t *rma_lookup(int world, uint32_t ctx)
{
    /* the last hit first: a stream of operations targets one window */
    pthread_mutex_lock(&rma_proc.reg_lk);
    rma_win_t *w = last;
    if (!w || w->world != world || w->ctx != ctx) {
        for (w = rma_proc.wins; w; w = w->next)
            if (w->world == world && w->ctx == ctx)
                break;
        last = w;
    }
    pthread_mutex_unlock(&rma_proc.reg_lk);
    return w;
}

rma_win_t *rma_peer(rma_win_t *w, int rank)
{
    rma_win_t *p = w->peer[rank];
    if (!p && w->mem[rank].local) {
        p = rma_lookup(w->mem[rank].world, w->ctx);
        w->peer[rank] = p;
    }
    return p;
}

static void registry_add(rma_win_t *w)
{
    pthread_mutex_lock(&rma_proc.reg_lk);
    w->next = rma_proc.wins;
    rma_proc.wins = w;
    rma_proc.nwins++;
    pthread_mutex_unlock(&rma_proc.reg_lk);
}

static void registry_remove(rma_win_t *w)
{
    pthread_mutex_lock(&rma_proc.reg_lk);
    if (last == w)
        last = NULL;
    for (rma_win_t **pp = &rma_proc.wins; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            rma_proc.nwins--;
            break;
        }
    pthread_mutex_unlock(&rma_proc.reg_lk);
}

/* Win_allocate_shared: the segment holds every member's part, each after
 * the previous one's, then every member's accumulate lock (64 bytes each). */
#define RMA_SHARED_LOCK 64

static size_t shared_parts(const rma_win_t *w, const MPI_Aint *sizes, int upto)
{
    size_t off = 0;
    for (int k = 0; k < upto; k++)
        off += ((size_t)(sizes ? (uint64_t)sizes[k] : w->mem[k].size) + 63) & ~(size_t)63;
    return off;
}

static pthread_mutex_t *shared_lock(const rma_win_t *w, int i)
{
    return (pthread_mutex_t *)((char *)w->shm_map + shared_parts(w, NULL, w->size) + (size_t)i * RMA_SHARED_LOCK);
}

/* The parts of the members in other processes, as this process maps them. */
static void shared_peers(rma_win_t *w)
{
    if (!core_setting_bool(CORE_SET_RMA_SHM))
        return;
    size_t off = 0;
    for (int i = 0; i < w->size; i++) {
        if (!w->mem[i].local && w->mem[i].size) {
            w->mem[i].map = (char *)w->shm_map + off;
            w->mem[i].acc_lk = shared_lock(w, i);
        }
        off += ((size_t)w->mem[i].size + 63) & ~(size_t)63;
    }
}

/* What each member tells the others at creation (the worker address follows). */
typedef struct member_card {
    int32_t world, proc, disp_unit, addr_len, pid, dev, shm, ipc_ok;
    uint64_t base, size;
    gpu_ipc_desc_t ipc; /* device windows: for the node's other processes to map */
} member_card_t;

/* Device windows between processes of one node: every member exports its
 * window (CUDA IPC, the handle cached by the GPU layer) and the others map
 * it, so that their puts and gets are copies by the copy engine with no
 * action of the target.  Accumulates keep to messages (their atomicity
 * needs the target's mutex); where a mapping fails, puts and gets do too. */
static bool ipc_export(const rma_win_t *w, gpu_ipc_desc_t *d)
{
    return w->dev && w->wsize > 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC && p2p_proc.gpu_ipc &&
           gpu_ipc_export(w->base, (size_t)w->wsize, d);
}

static void ipc_import(rma_win_t *w, int i, const member_card_t *m)
{
    if (!m->ipc_ok || !p2p_proc.gpu_ipc || w->mem[i].local || !ucx_pmix_is_local(m->proc))
        return;
    w->mem[i].ipc = gpu_ipc_import(m->proc, &m->ipc, &w->mem[i].ipc_token);
    if (!w->mem[i].ipc)
        util_debug("window %u: rank %d's device memory cannot be mapped: messages instead", w->ctx, i);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        util_fatal("out of memory for a window of %zu members", n);
    return p;
}

static void win_free_object(rma_win_t *w)
{
    free(w->mem);
    free(w->peer);
    free(w->done_from);
    free(w->sent_to);
    free(w->acked);
    free((void *)w->ack_cnt);
    free(w->ack_want);
    free((void *)w->grant_cnt);
    free(w->grant_want);
    free(w->fetching);
    free(w->locked);
    free(w->access);
    free(w->expose);
    free(w->attrs);
    rma_cma_free(w);
    pthread_mutex_destroy(&w->lk);
    free(w);
}

/* The first phase of every flavor: duplicate the communicator, register the
 * object so that early operations find it.  base/size come later for
 * shared windows. */
static int win_begin(p2p_rank_t *r, MPI_Comm comm, int flavor, int disp_unit, MPI_Info info, const char *fn,
                     rma_win_t **out)
{
    core_comm_t *c0 = p2p_comm(r, comm);
    if (!c0)
        return core_error(NULL, MPI_ERR_COMM, fn);
    if (disp_unit <= 0)
        return core_error(c0, MPI_ERR_DISP, fn);
    if (core_proc.nprocs > 1 && rma_net_init() != 0)
        return core_error_msg(c0, MPI_ERR_OTHER, fn, "the one-sided UCX worker could not be created");
    rma_progress_start();
    rma_win_t *w = xcalloc(1, sizeof *w);
    int err = PMPI_Comm_dup(comm, &w->comm);
    if (err != MPI_SUCCESS) {
        free(w);
        return err;
    }
    w->c = p2p_comm(r, w->comm);
    w->world = r->core.world;
    w->ctx = w->c->ctx;
    w->rank = w->c->rank;
    w->size = w->c->size;
    w->flavor = flavor;
    w->disp_unit = disp_unit;
    w->model = MPI_WIN_UNIFIED;
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->excl = -1;
    w->info = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL)
        PMPI_Info_dup(info, &w->info);
    size_t n = (size_t)w->size;
    w->mem = xcalloc(n, sizeof *w->mem);
    w->peer = xcalloc(n, sizeof *w->peer);
    w->done_from = xcalloc(n, sizeof *w->done_from);
    w->sent_to = xcalloc(n, sizeof *w->sent_to);
    w->acked = xcalloc(n, sizeof *w->acked);
    w->ack_cnt = xcalloc(n, sizeof *w->ack_cnt);
    w->ack_want = xcalloc(n, sizeof *w->ack_want);
    w->grant_cnt = xcalloc(n, sizeof *w->grant_cnt);
    w->grant_want = xcalloc(n, sizeof *w->grant_want);
    w->fetching = xcalloc(n, sizeof *w->fetching);
    w->locked = xcalloc(n, sizeof *w->locked);
    pthread_mutex_init(&w->lk, NULL);
    registry_add(w);
    *out = w;
    return MPI_SUCCESS;
}

/* The second phase: every member learns every other's base, size, unit and worker address. */
static int win_exchange(rma_win_t *w)
{
    const void *addr = NULL;
    size_t alen = core_proc.nprocs > 1 ? rma_net_address(&addr) : 0;
    int my_len = (int)alen, max_len = 0;
    int err = PMPI_Allreduce(&my_len, &max_len, 1, MPI_INT, MPI_MAX, w->comm);
    if (err != MPI_SUCCESS)
        return err;
    size_t card = (sizeof(member_card_t) + (size_t)max_len + 7) & ~(size_t)7;
    char *mine = xcalloc(1, card), *all = xcalloc((size_t)w->size, card);
    member_card_t mc = { .world = w->world, .proc = core_proc.proc, .disp_unit = w->disp_unit, .addr_len = my_len,
                         .pid = (int32_t)getpid(), .dev = w->dev, .shm = w->own_shm_named,
                         .base = (uint64_t)(uintptr_t)w->base, .size = (uint64_t)w->wsize };
    mc.ipc_ok = ipc_export(w, &mc.ipc);
    memcpy(mine, &mc, sizeof mc);
    if (alen)
        memcpy(mine + sizeof mc, addr, alen);
    err = PMPI_Allgather(mine, (int)card, MPI_BYTE, all, (int)card, MPI_BYTE, w->comm);
    bool any_shm = false;
    if (err == MPI_SUCCESS)
        for (int i = 0; i < w->size; i++) {
            member_card_t m;
            memcpy(&m, all + (size_t)i * card, sizeof m);
            bool local = p2p_is_local(m.world);
            /* dynamic windows may attach device memory later: they keep to messages */
            bool cma = !local && !m.dev && w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
                       p2p_cma_peer(m.proc);
            w->mem[i] = (rma_member_t){ .world = m.world, .disp_unit = m.disp_unit, .base = m.base, .size = m.size,
                                        .local = local, .cma = cma, .pid = m.pid };
            if (!w->mem[i].local && m.addr_len > 0)
                rma_net_learn(m.proc, all + (size_t)i * card + sizeof m, (size_t)m.addr_len);
            ipc_import(w, i, &m);
            any_shm |= m.shm != 0;
            if (m.shm && !local && ucx_pmix_is_local(m.proc))
                rma_shm_map_peer(w, i, (size_t)m.size);
        }
    free(mine);
    free(all);
    if (err == MPI_SUCCESS && w->flavor == MPI_WIN_FLAVOR_SHARED)
        shared_peers(w);
    if (err == MPI_SUCCESS && any_shm) { /* every peer has mapped the objects: their names can go */
        err = PMPI_Barrier(w->comm);
        rma_shm_unlink_own(w);
    }
    return err;
}

static int win_finish(rma_win_t *w, MPI_Win *win, const char *fn)
{
    w->dev = w->wsize > 0 && p2p_is_device(w->base, (size_t)w->wsize);
    int err = win_exchange(w);
    if (err != MPI_SUCCESS)
        return err;
    w->handle = handle_add(w);
    if (w->handle == MPI_WIN_NULL)
        return core_error(w->c, MPI_ERR_NO_MEM, fn);
    *win = w->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_create = PMPI_Win_create
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    P2P_ENTER(r, "MPI_Win_create");
    if (size < 0 || !win)
        return core_error(p2p_comm(r, comm), size < 0 ? MPI_ERR_SIZE : MPI_ERR_ARG, "MPI_Win_create");
    rma_win_t *w;
    int err = win_begin(r, comm, MPI_WIN_FLAVOR_CREATE, disp_unit, info, "MPI_Win_create", &w);
    if (err != MPI_SUCCESS)
        return err;
    w->base = size ? base : NULL;
    w->wsize = size;
    return win_finish(w, win, "MPI_Win_create");
}

#pragma weak MPI_Win_allocate = PMPI_Win_allocate
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    P2P_ENTER(r, "MPI_Win_allocate");
    if (size < 0 || !win || !baseptr)
        return core_error(p2p_comm(r, comm), size < 0 ? MPI_ERR_SIZE : MPI_ERR_ARG, "MPI_Win_allocate");
    rma_win_t *w;
    int err = win_begin(r, comm, MPI_WIN_FLAVOR_ALLOCATE, disp_unit, info, "MPI_Win_allocate", &w);
    if (err != MPI_SUCCESS)
        return err;
    /* in shared memory where processes of this node can map it, else private */
    if (size > 0 && !(rma_shm_wanted(w) && rma_shm_alloc(w, (size_t)size) == 0)) {
        if (posix_memalign(&w->alloc, 64, (size_t)size) != 0)
            return core_error(w->c, MPI_ERR_NO_MEM, "MPI_Win_allocate");
        w->base = w->alloc;
    }
    w->wsize = size;
    *(void **)baseptr = w->base;
    return win_finish(w, win, "MPI_Win_allocate");
}

/* One segment for the whole node, each member's part after the previous
 * one's; the lowest member creates it, everyone maps it, and it is unlinked
 * at once so that nothing stays behind in /dev/shm whatever happens later. */
static int shared_map(rma_win_t *w, MPI_Aint size)
{
    MPI_Aint *sizes = xcalloc((size_t)w->size, sizeof *sizes);
    int err = PMPI_Allgather(&size, 1, MPI_AINT, sizes, 1, MPI_AINT, w->comm);
    if (err != MPI_SUCCESS) {
        free(sizes);
        return err;
    }
    size_t mine = shared_parts(w, sizes, w->rank);
    size_t total = shared_parts(w, sizes, w->size) + (size_t)w->size * RMA_SHARED_LOCK;
    size_t locks = total - (size_t)w->size * RMA_SHARED_LOCK;
    free(sizes);
    char name[128];
    snprintf(name, sizeof name, "/ampi-win-%s-%u-%d", ucx_pmix_nspace(), w->ctx, core_comm_world_rank(w->c, 0));
    for (char *p = name + 1; *p; p++)
        if (*p == '/')
            *p = '_';
    int fd = -1, ok = 1;
    if (w->rank == 0) {
        shm_unlink(name);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        ok = fd >= 0 && ftruncate(fd, (off_t)total) == 0 && posix_fallocate(fd, 0, (off_t)total) == 0;
        if (ok) { /* the locks exist before anyone else maps the segment */
            char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            ok = m != MAP_FAILED;
            for (int i = 0; ok && i < w->size; i++)
                rma_acc_lock_init((pthread_mutex_t *)(m + locks + (size_t)i * RMA_SHARED_LOCK));
            if (ok)
                munmap(m, total);
        }
    }
    err = PMPI_Bcast(&ok, 1, MPI_INT, 0, w->comm);
    if (err != MPI_SUCCESS || !ok) {
        if (fd >= 0)
            close(fd);
        if (w->rank == 0)
            shm_unlink(name);
        return err != MPI_SUCCESS ? err : rma_win_error(w, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared");
    }
    if (w->rank != 0)
        fd = shm_open(name, O_RDWR, 0600);
    void *map = fd >= 0 ? mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    int mapped = map != MAP_FAILED, all_mapped = 0;
    err = PMPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_LAND, w->comm);
    if (w->rank == 0)
        shm_unlink(name);
    if (err != MPI_SUCCESS || !all_mapped) {
        if (mapped)
            munmap(map, total);
        return err != MPI_SUCCESS ? err : rma_win_error(w, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared");
    }
    w->shm_map = map;
    w->shm_len = total;
    w->acc_lk = (pthread_mutex_t *)((char *)map + locks + (size_t)w->rank * RMA_SHARED_LOCK);
    w->base = size ? (char *)map + mine : NULL;
    w->wsize = size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                             MPI_Win *win)
{
    P2P_ENTER(r, "MPI_Win_allocate_shared");
    if (size < 0 || !win || !baseptr)
        return core_error(p2p_comm(r, comm), size < 0 ? MPI_ERR_SIZE : MPI_ERR_ARG, "MPI_Win_allocate_shared");
    rma_win_t *w;
    int err = win_begin(r, comm, MPI_WIN_FLAVOR_SHARED, disp_unit, info, "MPI_Win_allocate_shared", &w);
    if (err != MPI_SUCCESS)
        return err;
    err = shared_map(w, size);
    if (err != MPI_SUCCESS)
        return err;
    *(void **)baseptr = w->base;
    return win_finish(w, win, "MPI_Win_allocate_shared");
}

#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    P2P_ENTER(r, "MPI_Win_create_dynamic");
    if (!win)
        return core_error(p2p_comm(r, comm), MPI_ERR_ARG, "MPI_Win_create_dynamic");
    rma_win_t *w;
    int err = win_begin(r, comm, MPI_WIN_FLAVOR_DYNAMIC, 1, info, "MPI_Win_create_dynamic", &w);
    if (err != MPI_SUCCESS)
        return err;
    return win_finish(w, win, "MPI_Win_create_dynamic");
}

#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    RMA_WIN(w, win, "MPI_Win_shared_query");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return rma_win_error(w, MPI_ERR_RANK, "MPI_Win_shared_query");
    if (w->flavor != MPI_WIN_FLAVOR_SHARED) {
        /* MPI 4.1: other flavors tell the memory this rank can load and store
         * directly: that of the ranks of its own process, and the shared
         * memory of the node's other processes (rma_shm.c) */
        int i = rank;
        if (rank == MPI_PROC_NULL)
            for (i = 0; i < w->size && !((w->mem[i].local || w->mem[i].map) && w->mem[i].size); i++)
                ;
        bool direct = i < w->size && (w->mem[i].local || w->mem[i].map) && w->flavor != MPI_WIN_FLAVOR_DYNAMIC;
        *size = direct ? (MPI_Aint)w->mem[i].size : 0;
        *disp_unit = i < w->size ? w->mem[i].disp_unit : 1;
        void *b = NULL;
        if (direct && w->mem[i].size)
            b = w->mem[i].map ? (void *)w->mem[i].map : (void *)(uintptr_t)w->mem[i].base;
        *(void **)baseptr = b;
        return MPI_SUCCESS;
    }
    int i = rank;
    if (rank == MPI_PROC_NULL) { /* the first member with memory */
        for (i = 0; i < w->size && w->mem[i].size == 0; i++)
            ;
        if (i == w->size) {
            *size = 0;
            *disp_unit = w->mem[0].disp_unit;
            *(void **)baseptr = NULL;
            return MPI_SUCCESS;
        }
    }
    /* every member's part sits at the same offset from the segment's start in every mapping */
    size_t off = 0;
    for (int k = 0; k < i; k++)
        off += ((size_t)w->mem[k].size + 63) & ~(size_t)63;
    *size = (MPI_Aint)w->mem[i].size;
    *disp_unit = w->mem[i].disp_unit;
    *(void **)baseptr = w->mem[i].size ? (char *)w->shm_map + off : NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_attach = PMPI_Win_attach
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    RMA_WIN(w, win, "MPI_Win_attach");
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return rma_win_error(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");
    if (size < 0)
        return rma_win_error(w, MPI_ERR_SIZE, "MPI_Win_attach");
    if (size > 0 && !base)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_attach");
    /* the target's address is the displacement: nothing to record for the active-message route */
    if (size > 0 && p2p_is_device(base, (size_t)size))
        w->dev = true;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_detach = PMPI_Win_detach
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    RMA_WIN(w, win, "MPI_Win_detach");
    (void)base;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return rma_win_error(w, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach");
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_free = PMPI_Win_free
int PMPI_Win_free(MPI_Win *win)
{
    if (!win)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Win_free");
    RMA_WIN(w, *win, "MPI_Win_free");
    if (w->access || w->expose || w->nlocks || w->lock_all)
        return rma_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_free");
    int derr = rma_cma_drain(w, -1);
    if (derr != MPI_SUCCESS)
        return rma_win_error(w, derr, "MPI_Win_free");
    rma_dev_free(w);
    while (w->nfetching || atomic_load(&w->sending))
        rma_wait_poll();
    /* nobody frees while a member may still target it */
    int err = PMPI_Barrier(w->comm);
    if (err != MPI_SUCCESS)
        return err;
    rma_attrs_delete_all(w);
    registry_remove(w);
    handles[w->handle - 1] = NULL;
    free(w->alloc);
    rma_shm_release(w);
    for (int i = 0; i < w->size; i++)
        if (w->mem[i].ipc_token)
            gpu_ipc_release(w->mem[i].ipc_token);
    if (w->shm_map)
        munmap(w->shm_map, w->shm_len);
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    if (w->group != MPI_GROUP_NULL)
        PMPI_Group_free(&w->group);
    PMPI_Comm_free(&w->comm);
    win_free_object(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_group = PMPI_Win_get_group
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    RMA_WIN(w, win, "MPI_Win_get_group");
    if (!group)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_get_group");
    return PMPI_Comm_group(w->comm, group);
}
