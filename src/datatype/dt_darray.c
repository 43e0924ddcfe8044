/* MPI_Type_create_darray (MPI 3.1 4.1.4): the part of a global array that
 * one process of a process grid holds under block / cyclic distributions.
 *
 * Built dimension by dimension, fastest-varying first (the first under
 * MPI_ORDER_FORTRAN, the last under MPI_ORDER_C): each step lays the
 * previous type out along one dimension (a contiguous run, or an hvector
 * striding over the faster dimensions' global extent) and notes where this
 * process's first element lies in that dimension; the result is shifted to
 * that start and resized to the whole global array, as the standard's
 * construction with MPI_LB/MPI_UB does.  The intermediate types are freed;
 * the envelope reports MPI_COMBINER_DARRAY with the call's arguments. */
#include "core/core_rank.h"
#include "datatype/dt_internal.h"
#include "rank/rank_host.h"

#include <stdlib.h>

typedef struct {
    const int *gsizes;
    int ndims, order;
    MPI_Aint ext; /* of oldtype */
} darray_t;

/* Bytes between consecutive indices of dimension dim. */
static MPI_Aint dim_stride(const darray_t *a, int dim)
{
    MPI_Aint s = a->ext;
    if (a->order == MPI_ORDER_FORTRAN)
        for (int i = 0; i < dim; i++)
            s *= a->gsizes[i];
    else
        for (int i = a->ndims - 1; i > dim; i--)
            s *= a->gsizes[i];
    return s;
}

static bool fastest(const darray_t *a, int dim)
{
    return a->order == MPI_ORDER_FORTRAN ? dim == 0 : dim == a->ndims - 1;
}

/* Block distribution of dimension dim over np processes, this one at
 * coordinate me; *start: index of its first element. */
static int block(const darray_t *a, int dim, int np, int me, int darg, MPI_Datatype old, MPI_Datatype *out,
                 MPI_Aint *start)
{
    int g = a->gsizes[dim];
    int bs = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + np - 1) / np : darg;
    int mine = g - bs * me;
    mine = mine < 0 ? 0 : mine > bs ? bs : mine;
    int err = fastest(a, dim) ? PMPI_Type_contiguous(mine, old, out)
                              : PMPI_Type_create_hvector(mine, 1, dim_stride(a, dim), old, out);
    *start = mine ? (MPI_Aint)bs * me : 0;
    return err;
}

/* Cyclic distribution in blocks of darg (default 1). */
static int cyclic(const darray_t *a, int dim, int np, int me, int darg, MPI_Datatype old, MPI_Datatype *out,
                  MPI_Aint *start)
{
    int bs = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    long first = (long)me * bs, last = (long)a->gsizes[dim] - 1, mine = 0;
    if (last >= first) {
        long span = last - first + 1, period = (long)np * bs;
        mine = span / period * bs + (span % period < bs ? span % period : bs);
    }
    int count = (int)(mine / bs), rem = (int)(mine % bs);
    MPI_Aint stride = (MPI_Aint)np * bs * a->ext;
    if (a->order == MPI_ORDER_FORTRAN)
        for (int i = 0; i < dim; i++)
            stride *= a->gsizes[i];
    else
        for (int i = a->ndims - 1; i > dim; i--)
            stride *= a->gsizes[i];
    int err = PMPI_Type_create_hvector(count, bs, stride, old, out);
    if (!err && rem) { /* the last, shorter block */
        int bl[2] = { 1, rem };
        MPI_Aint disp[2] = { 0, (MPI_Aint)count * stride };
        MPI_Datatype types[2] = { *out, old }, t;
        err = PMPI_Type_create_struct(2, bl, disp, types, &t);
        PMPI_Type_free(out);
        *out = t;
    }
    *start = mine ? first : 0;
    if (!err && fastest(a, dim)) {
        /* the fastest dimension places its first element itself, over the
         * dimension's whole extent */
        int one = 1;
        MPI_Aint at = *start * a->ext;
        MPI_Datatype h, t;
        err = PMPI_Type_create_hindexed(1, &one, &at, *out, &h);
        if (!err)
            err = PMPI_Type_create_resized(h, 0, a->ext * a->gsizes[dim], &t);
        PMPI_Type_free(&h);
        PMPI_Type_free(out);
        *out = t;
        *start = 0;
    }
    return err;
}

static int check(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                 const int psizes[], int order, MPI_Datatype oldtype, const MPI_Datatype *newtype)
{
    if (!newtype || ndims < 0 || size <= 0 || rank < 0 || rank >= size ||
        (ndims > 0 && (!gsizes || !distribs || !dargs || !psizes)) ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return MPI_ERR_ARG;
    if (!dt_view(oldtype) || oldtype == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    long procs = 1;
    for (int i = 0; i < ndims; i++) {
        if (gsizes[i] <= 0 || psizes[i] <= 0)
            return MPI_ERR_ARG;
        procs *= psizes[i];
        int d = distribs[i], g = dargs[i];
        if (d == MPI_DISTRIBUTE_NONE ? psizes[i] != 1
                                     : (d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC) ||
                                           (g != MPI_DISTRIBUTE_DFLT_DARG && g <= 0))
            return MPI_ERR_ARG;
        if (d == MPI_DISTRIBUTE_BLOCK && g != MPI_DISTRIBUTE_DFLT_DARG && (long)g * psizes[i] < gsizes[i])
            return MPI_ERR_ARG; /* the blocks must cover the dimension */
    }
    return procs == size ? MPI_SUCCESS : MPI_ERR_ARG;
}

/* Replaces the envelope of the finished type with the darray one. */
static int record(MPI_Datatype t, int size, int rank, int ndims, const int gsizes[], const int distribs[],
                  const int dargs[], const int psizes[], int order, MPI_Datatype oldtype)
{
    dt_type_t *d = dt_derived(t);
    for (int i = 0; i < d->ntypes; i++)
        dt_release(d->types[i]);
    free(d->ints);
    free(d->aints);
    free(d->types);
    d->ints = NULL, d->aints = NULL, d->types = NULL, d->ntypes = 0;
    int err = dt_contents_init(d, MPI_COMBINER_DARRAY, 4 * ndims + 4, 0, 1);
    if (err)
        return err;
    int *v = d->ints;
    *v++ = size, *v++ = rank, *v++ = ndims;
    for (int i = 0; i < ndims; i++) {
        v[i] = gsizes[i];
        v[ndims + i] = distribs[i];
        v[2 * ndims + i] = dargs[i];
        v[3 * ndims + i] = psizes[i];
    }
    v[4 * ndims] = order;
    d->types[0] = oldtype;
    dt_contents_retain(d, 1);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    const char *fn = "MPI_Type_create_darray";
    int err = check(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, newtype);
    if (err)
        return core_error(NULL, err, fn);
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(oldtype, &lb, &ext);
    darray_t a = { gsizes, ndims, order, ext };
    /* this process's coordinates: row-major over psizes, as MPI_Cart_create */
    int *coord = malloc((size_t)(ndims ? ndims : 1) * sizeof *coord);
    MPI_Aint *start = malloc((size_t)(ndims ? ndims : 1) * sizeof *start);
    if (!coord || !start) {
        free(coord), free(start);
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    }
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coord[i] = r % psizes[i];
        r /= psizes[i];
    }
    MPI_Datatype cur = oldtype;
    for (int k = 0; k < ndims && !err; k++) {
        int dim = order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
        MPI_Datatype next = MPI_DATATYPE_NULL;
        if (distribs[dim] == MPI_DISTRIBUTE_CYCLIC)
            err = cyclic(&a, dim, psizes[dim], coord[dim], dargs[dim], cur, &next, &start[dim]);
        else if (distribs[dim] == MPI_DISTRIBUTE_BLOCK)
            err = block(&a, dim, psizes[dim], coord[dim], dargs[dim], cur, &next, &start[dim]);
        else
            err = block(&a, dim, 1, 0, MPI_DISTRIBUTE_DFLT_DARG, cur, &next, &start[dim]);
        if (cur != oldtype)
            PMPI_Type_free(&cur);
        cur = next;
    }
    /* offset of this process's first element in the global array */
    MPI_Aint at = 0, total = ext;
    for (int k = 0; k < ndims; k++) {
        int dim = order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
        at += start[dim] * (total / ext);
        total *= gsizes[dim];
    }
    free(coord), free(start);
    MPI_Datatype h = MPI_DATATYPE_NULL;
    int one = 1;
    at *= ext;
    if (!err)
        err = PMPI_Type_create_hindexed(1, &one, &at, cur, &h);
    if (cur != oldtype)
        PMPI_Type_free(&cur);
    if (!err)
        err = PMPI_Type_create_resized(h, 0, total, newtype);
    if (h != MPI_DATATYPE_NULL)
        PMPI_Type_free(&h);
    if (!err)
        err = record(*newtype, size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype);
    return err ? core_error(NULL, err, fn) : MPI_SUCCESS;
}
