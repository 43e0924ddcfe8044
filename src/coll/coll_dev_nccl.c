/* The NCCL fast path of the blocking device collectives (see coll_dev.h).
 *
 * NCCL needs one GPU per member and nothing else sharing it inside one
 * process, so it serves a communicator only when each of its ranks is the
 * only MPI rank of its process and the processes drive distinct GPUs (PCI
 * bus ids compared).  That is decided collectively at the first eligible
 * call on the communicator -- a gather of every member's facts and a
 * broadcast of rank 0's verdict together with the NCCL unique id -- and
 * the verdict (with the ncclComm, if any) is cached as an attribute of the
 * communicator, so MPI_Comm_free and MPI_Finalize destroy it through the
 * attribute's delete callback.
 *
 * Whether a call goes to NCCL must be the same on every rank, because the
 * host algorithms exchange other messages: it depends on the arguments
 * every rank shares (operation, type, count, communicator) and on the
 * ranks' agreement that they pass device buffers (coll_dev_agreed), never
 * on one rank's own buffers.  Once agreed, a rank that passes host memory
 * takes part through device copies of its buffers.
 *
 * Only blocking calls use NCCL: the nonblocking ones run on helper threads
 * whose order across ranks is not fixed, and NCCL needs every rank to issue
 * the operations of a communicator in the same order. */
#include "core/core_settings.h"
#include "coll/coll.h"
#include "coll/coll_dev.h"
#include "gpu/gpu_nccl.h"

#include <stdlib.h>
#include <string.h>

_Static_assert((int)COLL_NCCL_ALLREDUCE == (int)GPU_NCCL_ALLREDUCE && (int)COLL_NCCL_REDUCE == (int)GPU_NCCL_REDUCE &&
                   (int)COLL_NCCL_BCAST == (int)GPU_NCCL_BCAST && (int)COLL_NCCL_ALLGATHER == (int)GPU_NCCL_ALLGATHER &&
                   (int)COLL_NCCL_REDUCE_SCATTER == (int)GPU_NCCL_REDUCE_SCATTER,
               "coll_nccl_kind_t is passed on as gpu_nccl_coll_t");

typedef struct {
    bool usable;
    gpu_nccl_comm_t *nc;
} nccl_state_t;

typedef struct {
    int ok; /* one rank in this process, NCCL loaded, a device */
    char bus[32];
} member_t;

static int *keyvals; /* per local rank: the keyval of the cached state */

static bool enabled(void)
{
    static int on = -1;
    if (on < 0)
        on = core_setting_bool(CORE_SET_NCCL);
    return on;
}

static int delete_state(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    nccl_state_t *s = val;
    if (s)
        gpu_nccl_comm_destroy(s->nc);
    free(s);
    return MPI_SUCCESS;
}

static int *keyval_of(p2p_rank_t *r)
{
    if (!keyvals) {
        keyvals = coll_malloc((size_t)core_proc.nlocal * sizeof *keyvals);
        for (int i = 0; i < core_proc.nlocal; i++)
            keyvals[i] = MPI_KEYVAL_INVALID;
    }
    return &keyvals[r->core.world - core_proc.first];
}

/* The collective decision; returns the new state (never NULL). */
static nccl_state_t *setup(p2p_rank_t *r, core_comm_t *c)
{
    int n = c->size;
    member_t mine = { .ok = core_proc.nlocal == 1 && gpu_nccl_load() && gpu_device_pci_bus_id()[0] };
    strncpy(mine.bus, gpu_device_pci_bus_id(), sizeof mine.bus - 1);
    member_t *all = c->rank == 0 ? coll_malloc((size_t)n * sizeof *all) : NULL;
    coll_layout_t lay = { .count = sizeof mine, .dt = MPI_BYTE };
    int err = coll_gather(r, c, &mine, sizeof mine, all, &lay, 0, COLL_TAG_NCCL);
    struct {
        int usable;
        char id[GPU_NCCL_ID_BYTES];
    } verdict = { 0 };
    if (c->rank == 0 && !err) {
        verdict.usable = 1;
        for (int i = 0; i < n && verdict.usable; i++) {
            verdict.usable = all[i].ok;
            for (int j = 0; j < i && verdict.usable; j++)
                verdict.usable = strncmp(all[i].bus, all[j].bus, sizeof mine.bus) != 0;
        }
        if (verdict.usable && gpu_nccl_unique_id(verdict.id) != 0)
            verdict.usable = 0;
    }
    free(all);
    if (!err)
        err = coll_bcast(r, c, &verdict, sizeof verdict, 0, COLL_TAG_NCCL);
    nccl_state_t *s = coll_malloc(sizeof *s);
    *s = (nccl_state_t){ .usable = !err && verdict.usable };
    /* every member calls ncclCommInitRank now: one that failed would leave
     * the others waiting inside NCCL, so a failure ends the job */
    if (s->usable && gpu_nccl_comm_init(&s->nc, n, verdict.id, c->rank) != 0)
        util_fatal("ncclCommInitRank failed (see above); AMPI_NCCL=0 runs without NCCL");
    util_debug("NCCL for communicator %d (%d ranks): %s", (int)c->handle, n, s->usable ? "yes" : "no");
    return s;
}

static nccl_state_t *state_of(p2p_rank_t *r, core_comm_t *c)
{
    int *kv = keyval_of(r);
    void *val = NULL;
    int flag = 0;
    if (*kv != MPI_KEYVAL_INVALID && PMPI_Comm_get_attr(c->handle, *kv, &val, &flag) == MPI_SUCCESS && flag)
        return val;
    nccl_state_t *s = setup(r, c);
    if (*kv == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, kv, NULL) != MPI_SUCCESS)
        *kv = MPI_KEYVAL_INVALID;
    if (*kv == MPI_KEYVAL_INVALID || PMPI_Comm_set_attr(c->handle, *kv, s) != MPI_SUCCESS)
        util_fatal("cannot cache the NCCL state of communicator %d", (int)c->handle);
    return s;
}

static bool dev(const void *p) { return p != MPI_IN_PLACE && p && p2p_is_device(p, 1); }

/* NCCL's type for a predefined MPI type, -1 if none. */
static int nccl_type(MPI_Datatype dt)
{
    static const signed char map[GPU_EK_COUNT] = {
        [GPU_EK_I8] = GPU_NCCL_INT8, [GPU_EK_U8] = GPU_NCCL_UINT8, [GPU_EK_I16] = -1, [GPU_EK_U16] = -1,
        [GPU_EK_I32] = GPU_NCCL_INT32, [GPU_EK_U32] = GPU_NCCL_UINT32, [GPU_EK_I64] = GPU_NCCL_INT64,
        [GPU_EK_U64] = GPU_NCCL_UINT64, [GPU_EK_F32] = GPU_NCCL_FLOAT32, [GPU_EK_F64] = GPU_NCCL_FLOAT64,
        [GPU_EK_CF32] = -1, [GPU_EK_CF64] = -1, [GPU_EK_BOOL] = -1, [GPU_EK_FLOAT_INT] = -1,
        [GPU_EK_DOUBLE_INT] = -1, [GPU_EK_LONG_INT] = -1, [GPU_EK_2INT] = -1, [GPU_EK_SHORT_INT] = -1,
        [GPU_EK_2FLOAT] = -1, [GPU_EK_2DOUBLE] = -1,
    };
    int e = coll_dev_elem(dt);
    /* MPI_BYTE and MPI_LOGICAL share kinds with integers but allow no
     * arithmetic; the op check before this call has refused those pairs */
    return e < 0 ? -1 : map[e];
}

static int nccl_op(MPI_Op op)
{
    return op == MPI_SUM ? GPU_NCCL_SUM : op == MPI_PROD ? GPU_NCCL_PROD : op == MPI_MAX ? GPU_NCCL_MAX
                                                                   : op == MPI_MIN  ? GPU_NCCL_MIN : -1;
}

/* Whether this call can go to NCCL, from the arguments every rank shares. */
static bool eligible(const core_comm_t *c, const coll_nccl_call_t *k, int *type, int *op)
{
    *type = GPU_NCCL_UINT8;
    *op = GPU_NCCL_SUM;
    /* Between two ranks a broadcast or an allgather is one message each way
     * or less, and our device point-to-point (CUDA IPC) beats NCCL there:
     * osu_bcast D D 8 B-1 MiB 14-22 us through NCCL against 8.7-11.7 us for
     * Open MPI's point-to-point (BENCHMARKS.md, 2026-11-22, 2 x H200,
     * 5d35261). */
    if (k->kind == COLL_NCCL_BCAST || k->kind == COLL_NCCL_ALLGATHER)
        return c->size > 2;
    *type = nccl_type(k->dt);
    *op = nccl_op(k->op);
    return *type >= 0 && *op >= 0;
}

/* The user buffers a call reads or writes on this rank and their bytes
 * (in: 0 when the data is in out, in place, or for BCAST; out: 0 for a
 * REDUCE's non-root). */
static void extents(const core_comm_t *c, const coll_nccl_call_t *k, size_t esize, size_t *in_bytes,
                    size_t *out_bytes)
{
    size_t block = k->count * esize, n = (size_t)c->size;
    bool in_place = k->in == MPI_IN_PLACE || k->in == k->out;
    switch (k->kind) {
    case COLL_NCCL_BCAST:
        *in_bytes = 0, *out_bytes = block;
        break;
    case COLL_NCCL_ALLGATHER:
        *in_bytes = in_place ? 0 : block, *out_bytes = n * block;
        break;
    case COLL_NCCL_REDUCE_SCATTER:
        *in_bytes = in_place ? 0 : n * block, *out_bytes = in_place ? n * block : block;
        break;
    case COLL_NCCL_REDUCE: /* a non-root's out is not used (it may even be its in) */
        *in_bytes = c->rank != k->root || !in_place ? block : 0, *out_bytes = c->rank == k->root ? block : 0;
        break;
    default:
        *in_bytes = in_place ? 0 : block, *out_bytes = block;
        break;
    }
}

/* Device copies of a rank's host buffers for one call (NULL: not staged). */
typedef struct {
    void *in, *out;
} nccl_stage_t;

static void stage_in(const core_comm_t *c, const coll_nccl_call_t *k, size_t in_bytes, size_t out_bytes,
                     coll_nccl_call_t *d, nccl_stage_t *st)
{
    *d = *k;
    *st = (nccl_stage_t){ 0 };
    bool in_place = k->in == MPI_IN_PLACE || k->in == k->out;
    if (out_bytes && !dev(k->out)) {
        st->out = coll_dev_scratch(out_bytes);
        /* the data is read from out: in place, and a broadcast's root */
        if (in_place || (k->kind == COLL_NCCL_BCAST && c->rank == k->root))
            coll_dev_copy(st->out, k->out, out_bytes);
        d->out = st->out;
        if (k->in == k->out)
            d->in = st->out;
    }
    if (in_bytes && !dev(k->in)) {
        st->in = coll_dev_scratch(in_bytes);
        coll_dev_copy(st->in, k->in, in_bytes);
        d->in = st->in;
    }
}

static void stage_out(const coll_nccl_call_t *k, size_t out_bytes, nccl_stage_t *st)
{
    if (st->out)
        coll_dev_copy(k->out, st->out, out_bytes);
    coll_scratch_free(st->in);
    coll_scratch_free(st->out);
}

static void run(nccl_state_t *s, core_comm_t *c, const coll_nccl_call_t *k, int type, int op, size_t esize);

bool coll_nccl_run(p2p_rank_t *r, core_comm_t *c, const coll_nccl_call_t *k, int *err)
{
    int type, op;
    if (!enabled() || !eligible(c, k, &type, &op))
        return false;
    size_t esize = k->kind == COLL_NCCL_BCAST || k->kind == COLL_NCCL_ALLGATHER ? 1 : dt_size(k->dt);
    size_t in_bytes, out_bytes;
    extents(c, k, esize, &in_bytes, &out_bytes);
    bool mine = (!in_bytes || dev(k->in)) && (!out_bytes || dev(k->out));
    if (!coll_dev_agreed(r, c, mine))
        return false;
    nccl_state_t *s = state_of(r, c);
    if (!s->usable)
        return false;
    coll_nccl_call_t d;
    nccl_stage_t st;
    stage_in(c, k, in_bytes, out_bytes, &d, &st);
    run(s, c, &d, type, op, esize);
    stage_out(k, out_bytes, &st);
    *err = MPI_SUCCESS;
    return true;
}

static void run(nccl_state_t *s, core_comm_t *c, const coll_nccl_call_t *k, int type, int op, size_t esize)
{
    const void *in = k->in;
    void *out = k->out;
    size_t mine = (size_t)c->rank * k->count * esize; /* our block's offset, for in-place forms */
    if (k->kind == COLL_NCCL_BCAST)
        in = out;
    else if (k->kind == COLL_NCCL_REDUCE && c->rank != k->root)
        out = NULL; /* NCCL ignores it there; the user's may be anything */
    else if (k->in == MPI_IN_PLACE && k->kind == COLL_NCCL_ALLGATHER)
        in = (char *)out + mine; /* NCCL's in-place form: our block already in place */
    else if (k->in == MPI_IN_PLACE) { /* REDUCE_SCATTER: the input vector is in out */
        in = out;
        out = (char *)out + mine; /* NCCL's in-place form; moved to the start below */
    }
    gpu_work_t w;
    if (gpu_nccl_start(s->nc, (gpu_nccl_coll_t)k->kind, in, out, k->count, (gpu_nccl_type_t)type,
                       (gpu_nccl_op_t)op, k->root, &w) != 0)
        util_fatal("NCCL collective failed to start (see above)");
    for (unsigned polls = 1; !gpu_work_done(&w); polls++) {
        p2p_poll();
        if (polls % 4096 == 0 && gpu_nccl_check(s->nc) != 0)
            util_fatal("NCCL collective failed (see above)");
    }
    if (k->kind == COLL_NCCL_REDUCE_SCATTER && k->in == MPI_IN_PLACE)
        coll_dev_copy(k->out, (char *)k->out + mine, k->count * esize); /* disjoint, or rank 0: nothing */
}
