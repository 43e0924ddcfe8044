/* Small device collectives on host copies (see coll_dev.h).
 *
 * A reduction of a few bytes is all latency: NCCL's floor is about 19 us,
 * and the device path of the host algorithms pays a device message and a
 * kernel launch per step.  One copy of the operand to page-locked host
 * memory, the host algorithm among the ranks (shared-memory rings, a few
 * microseconds) and one copy of the result back cost two copies and their
 * completions, whatever the number of ranks.  Each copy is waited for by
 * polling its event while the other ranks of the PE run, so ranks of one
 * process sharing a GPU (+vp) stage side by side.
 *
 * Every rank decides from the byte count alone (never from its own
 * buffers, which other ranks cannot see) whether the call takes this path:
 * the host algorithm, which a rank enters with host copies of its device
 * operands and with its host operands as they are.  So ranks that pass
 * different memory kinds still meet in one algorithm; above the limit every
 * rank goes on to the NCCL or device path (coll_dev_agreed says how those
 * are chosen alike). */
#include "coll/coll.h"
#include "coll/coll_dev.h"
#include "coll/coll_op.h"
#include "core/core_settings.h"
#include "gpu/gpu_reduce.h"

#include <stdint.h>

size_t coll_stage_max(void)
{
    static size_t max = SIZE_MAX; /* unread; every thread reads the same value */
    if (max == SIZE_MAX)
        max = core_setting_size(CORE_SET_GPU_COLL_HOST_MAX);
    return max;
}

static bool dev(const void *p, size_t bytes) { return p && p != MPI_IN_PLACE && p2p_is_device(p, bytes); }

/* Staging space: host blocks of `bytes` each, 64-byte aligned; pinned
 * where the driver gives it, else ordinary host scratch (slower copies,
 * the same result: the decision to stage never depends on it).  base NULL:
 * nothing was staged. */
typedef struct {
    void *base;
    bool pinned;
} stage_t;

static void *stage_get(stage_t *s, size_t bytes, int blocks)
{
    size_t each = (bytes + 63) & ~(size_t)63;
    s->pinned = gpu_pinned_alloc(each * (size_t)blocks, &s->base) == 0;
    if (!s->pinned)
        s->base = coll_host_scratch(each * (size_t)blocks);
    return s->base;
}

static void *stage_block(const stage_t *s, size_t bytes, int i)
{
    return (char *)s->base + (size_t)i * ((bytes + 63) & ~(size_t)63);
}

static void stage_put(stage_t *s)
{
    if (!s->base)
        return;
    if (s->pinned)
        gpu_pinned_free(s->base);
    else
        coll_host_scratch_free(s->base);
}

/* The host buffers of a reduction: device `in` and `out` get a block each
 * (in == out, in place, gets two: the host algorithm then runs out of
 * place, its faster form), host ones are used as they are (a rank with
 * host buffers only stages nothing). */
static void stage_operands(stage_t *s, const void *in, void *out, size_t bytes, bool want_out, const void **hin,
                           void **hout)
{
    bool din = dev(in, bytes), dout = want_out && dev(out, bytes);
    s->base = NULL;
    *hin = in;
    *hout = out;
    if (!din && !dout)
        return;
    stage_get(s, bytes, 2);
    if (din) {
        *hin = stage_block(s, bytes, 0);
        coll_dev_copy((void *)*hin, in, bytes);
    }
    if (dout)
        *hout = stage_block(s, bytes, 1);
}

int coll_staged_allreduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                          const coll_op_t *op, int tag)
{
    size_t bytes = coll_bytes(count, dt);
    stage_t s;
    const void *hin;
    void *hout;
    stage_operands(&s, in, out, bytes, true, &hin, &hout);
    int err = coll_allreduce(r, c, hin, hout, count, dt, op, tag);
    if (hout != out)
        coll_dev_copy(out, hout, bytes);
    stage_put(&s);
    return err;
}

int coll_staged_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                       const coll_op_t *op, int root, int tag)
{
    size_t bytes = coll_bytes(count, dt);
    bool am_root = c->rank == root;
    stage_t s;
    const void *hin;
    void *hout;
    stage_operands(&s, in, out, bytes, am_root, &hin, &hout);
    int err = coll_reduce(r, c, hin, hout, count, dt, op, root, tag);
    if (am_root && hout != out)
        coll_dev_copy(out, hout, bytes);
    stage_put(&s);
    return err;
}

int coll_staged_bcast(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root, int tag)
{
    if (!dev(buf, bytes))
        return coll_bcast(r, c, buf, bytes, root, tag);
    stage_t s;
    void *h = stage_get(&s, bytes, 1);
    if (c->rank == root)
        coll_dev_copy(h, buf, bytes);
    int err = coll_bcast(r, c, h, bytes, root, tag);
    if (c->rank != root)
        coll_dev_copy(buf, h, bytes);
    stage_put(&s);
    return err;
}
