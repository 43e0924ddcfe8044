/* Type constructors with one old type: contiguous, vector, hvector and the
 * indexed family.  Each one lists its entries (count copies of the old type
 * at a byte displacement), lets dt_build flatten them, and records its
 * arguments for MPI_Type_get_contents. */
#include "datatype/dt_ctor.h"
#include "rank/rank_host.h"

#include <stdlib.h>

int dt_ctor_finish(dt_type_t *d, int err, MPI_Datatype *newtype, const char *fn)
{
    if (!err)
        err = dt_register(d, newtype);
    if (err) {
        dt_destroy(d);
        return core_error(NULL, err, fn);
    }
    return MPI_SUCCESS;
}

int dt_ctor_check(int count, MPI_Datatype old, const MPI_Datatype *newtype, const dt_type_t **view)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!newtype)
        return MPI_ERR_ARG;
    *view = dt_view(old);
    return *view ? MPI_SUCCESS : MPI_ERR_TYPE;
}

/* Entry i: blocklength bls[i] (or bl when bls is NULL) at displacement
 * idisp[i] * extent of old (or adisp[i] bytes when idisp is NULL). */
static int build_list(int count, const int *bls, int bl, const int *idisp, const MPI_Aint *adisp,
                      const dt_type_t *v, dt_type_t **out)
{
    ptrdiff_t unit = v->ub - v->lb;
    dt_entry_t *e = malloc((count ? (size_t)count : 1) * sizeof *e);
    if (!e)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < count; i++) {
        int n = bls ? bls[i] : bl;
        if (n < 0) {
            free(e);
            return MPI_ERR_ARG;
        }
        e[i] = (dt_entry_t){ idisp ? (ptrdiff_t)idisp[i] * unit : adisp[i], (size_t)n, v };
    }
    int err = dt_build(e, (size_t)count, out);
    free(e);
    return err;
}

/* A strided list too long to write out (more entries than DT_FLAT_MAX):
 * its bounds are those of its first and last entries (an arithmetic
 * progression has its extremes at its ends), its size and counts count
 * times an entry's; it stays unflattened (dt.h). */
static int build_strided_long(int count, int bl, ptrdiff_t stride, const dt_type_t *v, dt_type_t **out)
{
    dt_entry_t e[2] = { { 0, (size_t)bl, v }, { (ptrdiff_t)(count - 1) * stride, (size_t)bl, v } };
    int err = dt_build(e, 2, out);
    if (err)
        return err;
    dt_type_t *d = *out;
    size_t per = (size_t)bl * v->size, basics = (size_t)bl * v->nbasic; /* dt_build checked these */
    if (__builtin_mul_overflow(per, (size_t)count, &d->size) || d->size > PTRDIFF_MAX ||
        __builtin_mul_overflow(basics, (size_t)count, &d->nbasic)) {
        dt_destroy(d);
        return MPI_ERR_COUNT;
    }
    dt_unflatten(d);
    return MPI_SUCCESS;
}

static int build_strided(int count, int bl, ptrdiff_t stride, const dt_type_t *v, dt_type_t **out)
{
    if (bl < 0)
        return MPI_ERR_ARG;
    if ((size_t)count > DT_FLAT_MAX) {
        if (stride != (ptrdiff_t)bl * (v->ub - v->lb))
            return build_strided_long(count, bl, stride, v, out);
        dt_entry_t dense = { 0, (size_t)count * (size_t)bl, v }; /* no gaps: count * bl copies in a row */
        return dt_build(&dense, 1, out);
    }
    dt_entry_t *e = malloc((count ? (size_t)count : 1) * sizeof *e);
    if (!e)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < count; i++)
        e[i] = (dt_entry_t){ (ptrdiff_t)i * stride, (size_t)bl, v };
    int err = dt_build(e, (size_t)count, out);
    free(e);
    return err;
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    const dt_type_t *v;
    dt_type_t *d = NULL;
    int err = dt_ctor_check(count, old, newtype, &v);
    if (!err) {
        dt_entry_t e = { 0, (size_t)count, v };
        err = dt_build(&e, 1, &d);
    }
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_CONTIGUOUS, 1, 0, 1))) {
        d->ints[0] = count;
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    return dt_ctor_finish(d, err, newtype, "MPI_Type_contiguous");
}

#pragma weak MPI_Type_vector = PMPI_Type_vector
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    const dt_type_t *v;
    dt_type_t *d = NULL;
    int err = dt_ctor_check(count, old, newtype, &v);
    if (!err)
        err = build_strided(count, blocklength, (ptrdiff_t)stride * (v->ub - v->lb), v, &d);
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_VECTOR, 3, 0, 1))) {
        d->ints[0] = count;
        d->ints[1] = blocklength;
        d->ints[2] = stride;
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    return dt_ctor_finish(d, err, newtype, "MPI_Type_vector");
}

static int hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype,
                   const char *fn)
{
    const dt_type_t *v;
    dt_type_t *d = NULL;
    int err = dt_ctor_check(count, old, newtype, &v);
    if (!err)
        err = build_strided(count, blocklength, stride, v, &d);
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_HVECTOR, 2, 1, 1))) {
        d->ints[0] = count;
        d->ints[1] = blocklength;
        d->aints[0] = stride;
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    return dt_ctor_finish(d, err, newtype, fn);
}

#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return hvector(count, blocklength, stride, old, newtype, "MPI_Type_create_hvector");
}

#pragma weak MPI_Type_hvector = PMPI_Type_hvector
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return hvector(count, blocklength, stride, old, newtype, "MPI_Type_hvector");
}

/* The indexed family: blocklength bls[i] (block: bl for each) at
 * displacement idisp[i] extents of old (NULL: adisp[i] bytes, hindexed);
 * the contents list the arguments in the order MPI gives for each
 * combiner. */
static int indexed(int count, bool block, const int *bls, int bl, const int *idisp, const MPI_Aint *adisp,
                   MPI_Datatype old, MPI_Datatype *newtype, const char *fn)
{
    static const int combiner[2][2] = { { MPI_COMBINER_HINDEXED, MPI_COMBINER_INDEXED },
                                        { MPI_COMBINER_HINDEXED_BLOCK, MPI_COMBINER_INDEXED_BLOCK } };
    const dt_type_t *v;
    dt_type_t *d = NULL;
    int nbls = block ? 1 : count, err = dt_ctor_check(count, old, newtype, &v);
    if (!err && count > 0 && ((!block && !bls) || (!idisp && !adisp)))
        err = MPI_ERR_ARG;
    if (!err)
        err = build_list(count, block ? NULL : bls, bl, idisp, adisp, v, &d);
    if (!err && !(err = dt_contents_init(d, combiner[block][idisp != NULL], 1 + nbls + (idisp ? count : 0),
                                         adisp ? count : 0, 1))) {
        int *ints = d->ints;
        *ints++ = count;
        for (int i = 0; i < nbls; i++)
            *ints++ = block ? bl : bls[i];
        for (int i = 0; idisp && i < count; i++)
            *ints++ = idisp[i];
        for (int i = 0; adisp && i < count; i++)
            d->aints[i] = adisp[i];
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    return dt_ctor_finish(d, err, newtype, fn);
}

#pragma weak MPI_Type_indexed = PMPI_Type_indexed
int PMPI_Type_indexed(int count, const int blocklengths[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return indexed(count, false, blocklengths, 0, displs, NULL, old, newtype, "MPI_Type_indexed");
}

#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
int PMPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displs[], MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return indexed(count, false, blocklengths, 0, NULL, displs, old, newtype, "MPI_Type_create_hindexed");
}

#pragma weak MPI_Type_hindexed = PMPI_Type_hindexed
int PMPI_Type_hindexed(int count, const int blocklengths[], const MPI_Aint displs[], MPI_Datatype old,
                       MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return indexed(count, false, blocklengths, 0, NULL, displs, old, newtype, "MPI_Type_hindexed");
}

#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
int PMPI_Type_create_indexed_block(int count, int blocklength, const int displs[], MPI_Datatype old,
                                   MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return indexed(count, true, NULL, blocklength, displs, NULL, old, newtype, "MPI_Type_create_indexed_block");
}

#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[], MPI_Datatype old,
                                    MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return indexed(count, true, NULL, blocklength, NULL, displs, old, newtype, "MPI_Type_create_hindexed_block");
}
