/* Applying one-sided operations to target memory, and the target layout of
 * a datatype.  Device memory takes driver copies; accumulates into it run a
 * device kernel (rma_dev.c), small ones and those without a kernel go
 * through a host copy of the touched bytes.  Callers hold the target's
 * mutex where the operation must be atomic. */
#include <stdlib.h>
#include <string.h>
#include "coll/coll_op.h"
#include "datatype/dt.h"
#include "pt2pt/p2p.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"
#include "util/util_log.h"

static void copy_any(void *dst, const void *src, size_t n, bool dev)
{
    if (dev)
        p2p_copy_sync(dst, src, n);
    else
        memcpy(dst, src, n);
}

void rma_apply_put(void *tbase, const rma_seg_t *segs, uint32_t nseg, const void *data, size_t len, bool dev)
{
    if (nseg == 0) {
        copy_any(tbase, data, len, dev);
        return;
    }
    const char *p = data;
    for (uint32_t i = 0; i < nseg; i++) {
        copy_any((char *)tbase + segs[i].off, p, segs[i].len, dev);
        p += segs[i].len;
    }
}

void rma_apply_get(const void *tbase, const rma_seg_t *segs, uint32_t nseg, void *out, size_t len, bool dev)
{
    if (nseg == 0) {
        copy_any(out, tbase, len, dev);
        return;
    }
    char *p = out;
    for (uint32_t i = 0; i < nseg; i++) {
        copy_any(p, (const char *)tbase + segs[i].off, segs[i].len, dev);
        p += segs[i].len;
    }
}

/* inout op= in over n elements of basic; MPI_REPLACE stores, MPI_NO_OP leaves. */
static void acc_block(void *inout, const void *in, size_t bytes, MPI_Op op, MPI_Datatype basic, bool dev)
{
    if (op == MPI_NO_OP || bytes == 0)
        return;
    if (op == MPI_REPLACE) {
        copy_any(inout, in, bytes, dev);
        return;
    }
    size_t n = bytes / dt_size(basic);
    coll_kernel_t *k = coll_op_kernel(op, basic);
    if (!k)
        return; /* the origin checked the pair; nothing else reaches here */
    if (!dev) {
        k(in, inout, n);
        return;
    }
    if (rma_dev_reduce(inout, in, bytes, op, basic, false))
        return; /* a kernel on the target bytes in place (callers may hold a window's mutex: no yield) */
    void *tmp = malloc(bytes);
    if (!tmp)
        util_fatal("out of memory in a device accumulate of %zu bytes", bytes);
    p2p_copy_sync(tmp, inout, bytes);
    k(in, tmp, n);
    p2p_copy_sync(inout, tmp, bytes);
    free(tmp);
}

/* Pairs with padding (MPI_DOUBLE_INT...) arrive packed and lie in the
 * target in pieces, while the MAXLOC/MINLOC kernels work on C structs: the
 * operands are unpacked into struct arrays, combined, and packed back. */
static void acc_padded(void *tbase, const rma_seg_t *segs, uint32_t nseg, const void *data, size_t len, MPI_Op op,
                       MPI_Datatype basic, bool dev)
{
    size_t n = len / dt_size(basic), ext = (size_t)dt_extent(basic);
    char *packed = malloc(len ? len : 1), *in = malloc(n * ext + 1), *io = malloc(n * ext + 1);
    if (!packed || !in || !io)
        util_fatal("out of memory in an accumulate of %zu bytes", len);
    rma_apply_get(tbase, segs, nseg, packed, len, dev);
    dt_unpack(data, len, in, (int)n, basic);
    dt_unpack(packed, len, io, (int)n, basic);
    coll_kernel_t *k = coll_op_kernel(op, basic);
    if (k)
        k(in, io, n);
    dt_pack(io, (int)n, basic, packed);
    rma_apply_put(tbase, segs, nseg, packed, len, dev);
    free(packed);
    free(in);
    free(io);
}

void rma_apply_acc(void *tbase, const rma_seg_t *segs, uint32_t nseg, const void *data, size_t len, MPI_Op op,
                   MPI_Datatype basic, bool dev)
{
    if (dt_is_predefined(basic) && !dt_is_plain(basic) && op != MPI_NO_OP && op != MPI_REPLACE) {
        acc_padded(tbase, segs, nseg, data, len, op, basic, dev);
        return;
    }
    if (nseg == 0) {
        acc_block(tbase, data, len, op, basic, dev);
        return;
    }
    const char *p = data;
    for (uint32_t i = 0; i < nseg; i++) {
        acc_block((char *)tbase + segs[i].off, p, segs[i].len, op, basic, dev);
        p += segs[i].len;
    }
}

void rma_apply_cas(void *t, const void *origin, const void *compare, void *result, size_t size, bool dev)
{
    copy_any(result, t, size, dev);
    if (memcmp(result, compare, size) == 0)
        copy_any(t, origin, size, dev);
}

MPI_Datatype rma_basic_of(MPI_Datatype dt)
{
    if (dt_is_predefined(dt))
        return dt;
    const dt_type_t *d = dt_derived(dt);
    if (!d || d->nruns == 0)
        return MPI_DATATYPE_NULL;
    MPI_Datatype b = d->runs[0].basic;
    for (size_t i = 1; i < d->nruns; i++)
        if (d->runs[i].basic != b)
            return MPI_DATATYPE_NULL;
    return b;
}

rma_seg_t *rma_layout(int count, MPI_Datatype dt, uint32_t *nseg, int64_t *first)
{
    *nseg = 0;
    *first = 0;
    if (dt_is_contig(dt)) {
        *first = dt_contig_offset(dt);
        return NULL;
    }
    const dt_type_t *d = dt_view(dt);
    ptrdiff_t ext = d->ub - d->lb;
    size_t n = (size_t)count * d->nblocks;
    rma_seg_t *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        util_fatal("out of memory for a target layout of %zu blocks", n);
    size_t k = 0;
    for (int i = 0; i < count; i++)
        for (size_t b = 0; b < d->nblocks; b++) {
            int64_t off = (int64_t)i * ext + d->blocks[b].off;
            if (k > 0 && s[k - 1].off + (int64_t)s[k - 1].len == off) {
                s[k - 1].len += d->blocks[b].len; /* consecutive elements touch */
                continue;
            }
            s[k].off = off;
            s[k].len = d->blocks[b].len;
            k++;
        }
    *nseg = (uint32_t)k;
    return s;
}
