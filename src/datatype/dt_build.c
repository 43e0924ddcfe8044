/* Flattening: a type constructor's entries -> one list of contiguous blocks
 * (type-map order, adjacent blocks merged), a list of basic-element runs,
 * and the bounds.  Built once per constructor call, so packing never walks
 * a tree.  A type whose lists would pass DT_FLAT_MAX entries gets none
 * (unflat, dt.h): its true bounds then come from the entries' own. */
#include "datatype/dt_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    dt_type_t *d;
    size_t block_cap, run_cap;
} builder_t;

static bool add_block(builder_t *b, ptrdiff_t off, size_t len)
{
    dt_type_t *d = b->d;
    if (len == 0)
        return true;
    if (d->nblocks) {
        dt_block_t *last = &d->blocks[d->nblocks - 1];
        if (last->off + (ptrdiff_t)last->len == off) {
            last->len += len;
            return true;
        }
    }
    if (d->nblocks == b->block_cap) {
        size_t cap = b->block_cap ? 2 * b->block_cap : 4;
        dt_block_t *nb = realloc(d->blocks, cap * sizeof *nb);
        if (!nb)
            return false;
        d->blocks = nb;
        b->block_cap = cap;
    }
    d->blocks[d->nblocks++] = (dt_block_t){ off, len };
    return true;
}

static bool add_run(builder_t *b, MPI_Datatype basic, size_t n)
{
    dt_type_t *d = b->d;
    if (d->nruns && d->runs[d->nruns - 1].basic == basic) {
        d->runs[d->nruns - 1].n += n;
        return true;
    }
    if (d->nruns == b->run_cap) {
        size_t cap = b->run_cap ? 2 * b->run_cap : 4;
        dt_run_t *nr = realloc(d->runs, cap * sizeof *nr);
        if (!nr)
            return false;
        d->runs = nr;
        b->run_cap = cap;
    }
    d->runs[d->nruns++] = (dt_run_t){ basic, n };
    return true;
}

/* The lists go: the type is too large to flatten. */
static void unflatten(builder_t *b)
{
    dt_type_t *d = b->d;
    free(d->blocks);
    free(d->runs);
    d->blocks = NULL;
    d->runs = NULL;
    d->nblocks = d->nruns = 0;
    b->block_cap = b->run_cap = 0;
    d->unflat = true;
}

/* Whether `count` copies of v may add their blocks and runs within
 * DT_FLAT_MAX (an overestimate: merging only shortens them). */
static bool entry_fits(const builder_t *b, const dt_entry_t *e)
{
    const dt_type_t *v = e->type;
    if (v->unflat)
        return false;
    ptrdiff_t ext = v->ub - v->lb;
    size_t blocks = v->nblocks == 1 && ext > 0 && v->blocks[0].len == (size_t)ext ? 1 : 0;
    size_t runs = v->nruns == 1 ? 1 : 0;
    if ((!blocks && __builtin_mul_overflow(e->count, v->nblocks, &blocks)) ||
        (!runs && __builtin_mul_overflow(e->count, v->nruns, &runs)))
        return false;
    return blocks <= DT_FLAT_MAX - b->d->nblocks && runs <= DT_FLAT_MAX - b->d->nruns;
}

/* Blocks and runs of `count` copies of v starting at disp. */
static bool add_entry(builder_t *b, const dt_entry_t *e)
{
    if (b->d->unflat || !entry_fits(b, e)) {
        if (!b->d->unflat)
            unflatten(b);
        return true;
    }
    const dt_type_t *v = e->type;
    ptrdiff_t ext = v->ub - v->lb;
    /* A dense inner type (one block filling its extent) repeats as one block. */
    if (v->nblocks == 1 && ext > 0 && v->blocks[0].len == (size_t)ext) {
        if (!add_block(b, e->disp + v->blocks[0].off, e->count * v->blocks[0].len))
            return false;
    } else {
        for (size_t k = 0; k < e->count; k++)
            for (size_t i = 0; i < v->nblocks; i++)
                if (!add_block(b, e->disp + (ptrdiff_t)k * ext + v->blocks[i].off, v->blocks[i].len))
                    return false;
    }
    if (v->nruns == 1)
        return add_run(b, v->runs[0].basic, e->count * v->runs[0].n);
    for (size_t k = 0; k < e->count; k++)
        for (size_t i = 0; i < v->nruns; i++)
            if (!add_run(b, v->runs[i].basic, v->runs[i].n))
                return false;
    return true;
}

void dt_unflatten(dt_type_t *d)
{
    builder_t b = { d, 0, 0 };
    unflatten(&b);
    d->contig = false;
}

/* Bounds and the contiguity flag once the blocks are known. */
static void finish_bounds(dt_type_t *d)
{
    if (d->unflat) { /* true bounds from the entries (dt_build) */
        d->contig = false;
        return;
    }
    if (d->nblocks) {
        d->true_lb = d->blocks[0].off;
        d->true_ub = d->blocks[0].off + (ptrdiff_t)d->blocks[0].len;
        for (size_t i = 1; i < d->nblocks; i++) {
            ptrdiff_t lo = d->blocks[i].off, hi = lo + (ptrdiff_t)d->blocks[i].len;
            d->true_lb = lo < d->true_lb ? lo : d->true_lb;
            d->true_ub = hi > d->true_ub ? hi : d->true_ub;
        }
    }
    d->contig = d->nblocks == 0 || (d->nblocks == 1 && (ptrdiff_t)d->size == d->ub - d->lb);
}

int dt_build(const dt_entry_t *e, size_t n, dt_type_t **out)
{
    dt_type_t *d = calloc(1, sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    d->refs = 1;
    builder_t b = { d, 0, 0 };
    /* MPI bounds: the least lb / greatest ub over the entries, but where
     * some entries carry an explicit (marked) bound only those count. */
    bool any = false;
    ptrdiff_t lb = 0, ub = 0, mlb = 0, mub = 0, tlb = 0, tub = 0;
    bool tany = false;
    for (size_t i = 0; i < n; i++) {
        const dt_type_t *v = e[i].type;
        if (e[i].count == 0 || (v->size == 0 && !v->lb_marked && !v->ub_marked))
            continue;
        size_t bytes, basics;
        if (__builtin_mul_overflow(e[i].count, v->size, &bytes) ||
            __builtin_add_overflow(d->size, bytes, &d->size) ||
            __builtin_mul_overflow(e[i].count, v->nbasic, &basics) || (bytes > PTRDIFF_MAX) ||
            __builtin_add_overflow(d->nbasic, basics, &d->nbasic)) {
            dt_destroy(d);
            return MPI_ERR_COUNT;
        }
        if (!add_entry(&b, &e[i])) {
            dt_destroy(d);
            return MPI_ERR_NO_MEM;
        }
        ptrdiff_t span = (ptrdiff_t)(e[i].count - 1) * (v->ub - v->lb);
        ptrdiff_t lo = e[i].disp + v->lb + (span < 0 ? span : 0);
        ptrdiff_t hi = e[i].disp + v->ub + (span > 0 ? span : 0);
        if (v->size > 0) { /* the data's bounds: the copies' true bounds shifted the same way */
            ptrdiff_t tlo = e[i].disp + v->true_lb + (span < 0 ? span : 0);
            ptrdiff_t thi = e[i].disp + v->true_ub + (span > 0 ? span : 0);
            tlb = !tany || tlo < tlb ? tlo : tlb;
            tub = !tany || thi > tub ? thi : tub;
            tany = true;
        }
        lb = !any || lo < lb ? lo : lb;
        ub = !any || hi > ub ? hi : ub;
        any = true;
        d->align = v->align > d->align ? v->align : d->align;
        if (v->lb_marked) {
            mlb = !d->lb_marked || lo < mlb ? lo : mlb;
            d->lb_marked = true;
        }
        if (v->ub_marked) {
            mub = !d->ub_marked || hi > mub ? hi : mub;
            d->ub_marked = true;
        }
    }
    d->lb = d->lb_marked ? mlb : lb;
    d->ub = d->ub_marked ? mub : ub;
    /* MPI's epsilon: without an explicit ub, the extent is rounded up to a
     * multiple of the largest alignment, so that an array of the type keeps
     * its members aligned (a C struct's sizeof, as Open MPI and MPICH do). */
    ptrdiff_t a = (ptrdiff_t)d->align, rem = a > 1 ? ((d->ub - d->lb) % a + a) % a : 0;
    if (!d->ub_marked && rem)
        d->ub += a - rem;
    if (d->unflat) {
        d->true_lb = tlb;
        d->true_ub = tub;
    }
    finish_bounds(d);
    *out = d;
    return MPI_SUCCESS;
}

int dt_build_resized(const dt_type_t *old, ptrdiff_t lb, ptrdiff_t extent, dt_type_t **out)
{
    dt_entry_t e = { 0, 1, old };
    int err = dt_build(&e, 1, out);
    if (err)
        return err;
    dt_type_t *d = *out;
    d->lb = lb;
    d->ub = lb + extent;
    d->lb_marked = d->ub_marked = true;
    finish_bounds(d);
    return MPI_SUCCESS;
}

int dt_contents_init(dt_type_t *d, int combiner, int nints, int naints, int ntypes)
{
    d->combiner = combiner;
    d->ints = calloc((size_t)nints + 1, sizeof *d->ints);
    d->aints = calloc((size_t)naints + 1, sizeof *d->aints);
    d->types = calloc((size_t)ntypes + 1, sizeof *d->types);
    if (!d->ints || !d->aints || !d->types)
        return MPI_ERR_NO_MEM;
    d->nints = nints;
    d->naints = naints;
    /* ntypes stays 0 until the types are filled in and retained, so that
     * dt_destroy never releases a type it holds no reference on. */
    (void)ntypes;
    return MPI_SUCCESS;
}

void dt_contents_retain(dt_type_t *d, int ntypes)
{
    for (int i = 0; i < ntypes; i++)
        dt_retain(d->types[i]);
    d->ntypes = ntypes;
}
