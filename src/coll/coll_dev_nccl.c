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
 * Eligibility of a call must be the same on every rank, because an
 * eligible call may start that collective setup: it depends on the
 * arguments (operation, type, count) and on the buffers being device
 * memory, which the usual CUDA-aware program passes on every rank.  A
 * program that mixes host and device buffers across the ranks of one
 * collective must run with AMPI_NCCL=0 (README).
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

/* Whether this call can go to NCCL, from its arguments alone. */
static bool eligible(const core_comm_t *c, const coll_nccl_call_t *k, int *type, int *op)
{
    *type = GPU_NCCL_UINT8;
    *op = GPU_NCCL_SUM;
    /* Between two ranks a broadcast or an allgather is one message each way
     * or less, and our device point-to-point (CUDA IPC) beats NCCL there:
     * osu_bcast D D 8 B-1 MiB 14-22 us through NCCL against 8.7-11.7 us for
     * Open MPI's point-to-point (BENCHMARKS.md, 2026-11-22, 2 x H200,
     * 5d35261). */
    switch (k->kind) {
    case COLL_NCCL_BCAST:
        return c->size > 2 && dev(k->out);
    case COLL_NCCL_ALLGATHER:
        return c->size > 2 && dev(k->out) && (k->in == MPI_IN_PLACE || dev(k->in));
    default:
        break;
    }
    *type = nccl_type(k->dt);
    *op = nccl_op(k->op);
    if (*type < 0 || *op < 0)
        return false;
    if (k->kind == COLL_NCCL_REDUCE)
        return dev(k->in) && (c->rank != k->root || dev(k->out));
    if (k->kind == COLL_NCCL_REDUCE_SCATTER)
        return dev(k->out) && (k->in == MPI_IN_PLACE || dev(k->in));
    return dev(k->in) && dev(k->out);
}

bool coll_nccl_run(p2p_rank_t *r, core_comm_t *c, const coll_nccl_call_t *k, int *err)
{
    int type, op;
    if (!enabled() || !eligible(c, k, &type, &op))
        return false;
    nccl_state_t *s = state_of(r, c);
    if (!s->usable)
        return false;
    size_t esize = k->kind == COLL_NCCL_BCAST || k->kind == COLL_NCCL_ALLGATHER ? 1 : dt_size(k->dt);
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
    *err = MPI_SUCCESS;
    return true;
}
