/* MPI_Bcast, MPI_Ibcast: binomial tree over ranks relative to the root.  A rank
 * receives once from its parent (relative rank with its lowest set bit
 * cleared), then sends to its children, largest subtree first, so the
 * deepest part of the tree starts earliest.  Device buffers in a few ranks
 * take a flat tree instead (see bcast_flat). */
#include "coll/coll_inter.h"
#include "coll/coll_nc.h"
#include "coll/coll_sched.h"
#include "pt2pt/p2p.h"

/* A device message costs ~8 us whatever its size up to ~1 MiB (one CUDA
 * IPC copy and its event; BENCHMARKS.md, 2026-11-22, 2 x H200, 5d35261),
 * and receivers pull from the root's memory at once over NVLink (at every
 * size: coll_recv_pull): one step from the root to every rank beats the
 * binomial tree's log2(n) steps and NCCL's ~18 us floor (osu_bcast D D on
 * 4 H200s: 17.7-23.5 us through NCCL at 1 B-512 KiB, Open MPI 10.7-15.7;
 * BENCHMARKS.md, 2026-11-22, 4 x H200, e2ef9d5).  Above these sizes NCCL's
 * pipelined ring wins. */
#define BCAST_FLAT_MAX_RANKS 8
#define BCAST_FLAT_MAX_BYTES ((size_t)1 << 20)

static int bcast_flat(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root, int tag)
{
    if (c->rank != root) /* pulled: from 512 KiB the root's pushes run one after another (24.9 us at
                          * 512 KiB on 8 H200s, Open MPI 17.5; BENCHMARKS.md, 2026-11-22,
                          * 8 x H200, a3d6075) */
        return coll_recv_pull(r, c, buf, bytes, root, tag);
    p2p_req_t *reqs[BCAST_FLAT_MAX_RANKS];
    int nreq = 0;
    for (int i = 1; i < c->size; i++)
        reqs[nreq++] = coll_isend(r, c, buf, bytes, coll_mod_add(root, i, c->size), tag);
    return coll_waitall(reqs, nreq);
}

/* The flat tree sends other messages than the binomial one, so every rank
 * must choose it alike: the sizes decide whether the call is eligible, and
 * the ranks' agreement on device buffers whether it runs (coll_dev_agreed;
 * a rank with a host buffer then takes part with it). */
static bool flat_wanted(p2p_rank_t *r, core_comm_t *c, const void *buf, size_t bytes)
{
    return UTIL_UNLIKELY(gpu_enabled()) && c->size > 2 && c->size <= BCAST_FLAT_MAX_RANKS &&
           bytes > COLL_BCAST_STAGE_MAX && bytes <= BCAST_FLAT_MAX_BYTES &&
           coll_dev_agreed(r, c, p2p_is_device(buf, bytes));
}

int coll_bcast(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root, int tag)
{
    int n = c->size, err = MPI_SUCCESS;
    if (n == 1 || bytes == 0)
        return MPI_SUCCESS;
    if (n == 2) /* the tree of two, without walking it */
        return c->rank != root ? coll_recv(r, c, buf, bytes, root, tag) : coll_send(r, c, buf, bytes, 1 - root, tag);
    int me = coll_mod_add(c->rank, n - root, n); /* relative to the root */
    int mask = 1;
    while (mask < n) {
        if (me & mask) {
            err = coll_recv(r, c, buf, bytes, coll_mod_add(me - mask, root, n), tag);
            break;
        }
        mask <<= 1;
    }
    /* children: me + m for every m below our lowest set bit (all for root) */
    int children = 0;
    for (int m = mask >> 1; m > 0; m >>= 1)
        children += me + m < n;
    if (children == 0) /* a leaf: half the ranks, and the receiver of two */
        return err;
    if (children == 1) { /* two ranks, and the leaves' parents: one send, its request on the stack */
        int serr = coll_send(r, c, buf, bytes, coll_mod_add(me + 1, root, n), tag);
        return err ? err : serr;
    }
    p2p_req_t *reqs[32];
    int nreq = 0;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (me + mask < n)
            reqs[nreq++] = coll_isend(r, c, buf, bytes, coll_mod_add(me + mask, root, n), tag);
    int serr = coll_waitall(reqs, nreq);
    return err ? err : serr;
}

static int check(const core_comm_t *c, const void *buffer, int count, MPI_Datatype datatype, int root)
{
    if (root < 0 || root >= c->size)
        return MPI_ERR_ROOT;
    return coll_check_buf_nc(buffer, count, datatype); /* the blocking form took gaps before */
}

/* On an intercommunicator: MPI_ROOT / MPI_PROC_NULL in the root's group. */
static int inter_bcast(p2p_rank_t *r, core_comm_t *c, void *buffer, int count, MPI_Datatype datatype, int root,
                       MPI_Request *request)
{
    int err = coll_inter_check_root(c, root);
    bool used = root != MPI_PROC_NULL;
    if (!err && used)
        err = buffer == MPI_IN_PLACE ? MPI_ERR_BUFFER : coll_check_buf_nc(buffer, count, datatype);
    coll_nb_args_t a = { .rbuf = buffer, .rcount = count, .rdt = coll_nb_type(used, datatype),
                         .count = used ? coll_bytes((size_t)count, datatype) : 0, .root = root };
    return err ? err : coll_inter_bcast(r, c, &a, request);
}

#pragma weak MPI_Bcast = PMPI_Bcast
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Bcast");
    if (UTIL_UNLIKELY(c->remote))
        return coll_inter_return(c, inter_bcast(r, c, buffer, count, datatype, root, NULL), "MPI_Bcast");
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) /* coll_noncontig.c */
        return coll_nc_bcast(buffer, count, datatype, root, comm, c->rank);
    int err = check(c, buffer, count, datatype, root);
    COLL_CHECK(c, err, err, "MPI_Bcast");
    size_t bytes = coll_bytes((size_t)count, datatype);
    /* the tests in line: without a GPU they cost a gpu_enabled() each */
    coll_nccl_call_t nc = { COLL_NCCL_BCAST, buffer, buffer, bytes, MPI_BYTE, MPI_OP_NULL, root };
    if (coll_stage_bcast_wanted(c, bytes)) /* coll_dev_host.c */
        err = coll_staged_bcast(r, c, buffer, bytes, root, COLL_TAG_BCAST);
    else if (flat_wanted(r, c, buffer, bytes))
        err = bcast_flat(r, c, buffer, bytes, root, COLL_TAG_BCAST);
    else if (!coll_nccl_try(r, c, &nc, &err))
        err = coll_bcast(r, c, buffer, bytes, root, COLL_TAG_BCAST);
    COLL_CHECK(c, err, err, "MPI_Bcast");
    return MPI_SUCCESS;
}

static int run_bcast(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    return coll_bcast(r, c, a->rbuf, a->count, a->root, tag);
}

#pragma weak MPI_Ibcast = PMPI_Ibcast
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    COLL_ENTER_ANY(r, c, comm, "MPI_Ibcast");
    if (UTIL_UNLIKELY(c->remote)) {
        int err = request ? inter_bcast(r, c, buffer, count, datatype, root, request) : MPI_ERR_REQUEST;
        return coll_inter_return(c, err, "MPI_Ibcast");
    }
    int err = check(c, buffer, count, datatype, root);
    if (!err && coll_sched_wanted(c, coll_sched_bcast_weight((size_t)count * dt_size(datatype)))) { /* coll_sched.h */
        err = coll_sched_ibcast(r, c, buffer, count, datatype, root, request);
    } else if (!err && UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_nb.c */
        coll_nb_args_t a = { .rbuf = buffer, .rcount = count, .rdt = datatype, .root = root };
        err = coll_nb_start(r, c, coll_nc_nb_bcast, &a, request);
    } else if (!err) {
        coll_nb_args_t a = { .rbuf = buffer, .count = coll_bytes((size_t)count, datatype), .root = root };
        err = coll_nb_start(r, c, run_bcast, &a, request);
    }
    COLL_CHECK(c, err, err, "MPI_Ibcast");
    return MPI_SUCCESS;
}
