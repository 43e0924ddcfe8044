/* Type constructors: struct, subarray, resized, dup. */
#include "datatype/dt_ctor.h"
#include "rank/rank_host.h"

#include <stdlib.h>

/* The extent is padded to the members' largest alignment (dt_build), so
 * it matches the C struct's sizeof in the usual layouts. */
static int create_struct(int count, const int bls[], const MPI_Aint displs[], const MPI_Datatype types[],
                         MPI_Datatype *newtype, const char *fn)
{
    if (count < 0)
        return core_error(NULL, MPI_ERR_COUNT, fn);
    if (!newtype || (count > 0 && (!bls || !displs || !types)))
        return core_error(NULL, MPI_ERR_ARG, fn);
    dt_entry_t *e = malloc((count ? (size_t)count : 1) * sizeof *e);
    if (!e)
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    int err = MPI_SUCCESS;
    for (int i = 0; i < count && !err; i++) {
        const dt_type_t *v = dt_view(types[i]);
        err = !v ? MPI_ERR_TYPE : bls[i] < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
        e[i] = (dt_entry_t){ displs[i], (size_t)bls[i], v };
    }
    dt_type_t *d = NULL;
    if (!err)
        err = dt_build(e, (size_t)count, &d);
    free(e);
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_STRUCT, 1 + count, count, count))) {
        d->ints[0] = count;
        for (int i = 0; i < count; i++) {
            d->ints[1 + i] = bls[i];
            d->aints[i] = displs[i];
            d->types[i] = types[i];
        }
        dt_contents_retain(d, count);
    }
    return dt_ctor_finish(d, err, newtype, fn);
}

#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
int PMPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    return create_struct(count, blocklengths, displs, types, newtype, "MPI_Type_create_struct");
}

#pragma weak MPI_Type_struct = PMPI_Type_struct
int PMPI_Type_struct(int count, const int blocklengths[], const MPI_Aint displs[], const MPI_Datatype types[],
                     MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    return create_struct(count, blocklengths, displs, types, newtype, "MPI_Type_struct");
}

/* Subarray as nested strided types, fastest dimension first: level k
 * places subsizes[k] copies of the level below at (starts[k] + i) *
 * stride[k] bytes.  The intermediate levels never get handles. */
static int build_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                          const dt_type_t *old, dt_type_t **out)
{
    ptrdiff_t stride = old->ub - old->lb, total = stride;
    const dt_type_t *cur = old;
    dt_type_t *level = NULL;
    int err = MPI_SUCCESS;
    for (int k = 0; k < ndims && !err; k++) {
        int dim = order == MPI_ORDER_C ? ndims - 1 - k : k;
        dt_type_t *next = NULL;
        if (k == 0) { /* copies of old are already spaced by its extent */
            dt_entry_t e = { (ptrdiff_t)starts[dim] * stride, (size_t)subsizes[dim], cur };
            err = dt_build(&e, 1, &next);
        } else {
            dt_entry_t *e = malloc(((size_t)subsizes[dim] + 1) * sizeof *e);
            if (!e)
                err = MPI_ERR_NO_MEM;
            for (int i = 0; e && i < subsizes[dim]; i++)
                e[i] = (dt_entry_t){ (ptrdiff_t)(starts[dim] + i) * stride, 1, cur };
            if (e)
                err = dt_build(e, (size_t)subsizes[dim], &next);
            free(e);
        }
        dt_destroy(level);
        cur = level = next;
        stride *= sizes[dim];
        total *= sizes[dim];
    }
    if (!err)
        err = dt_build_resized(cur, 0, total, out);
    dt_destroy(level);
    return err;
}

#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                              MPI_Datatype old, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Type_create_subarray";
    const dt_type_t *v = dt_view(old);
    if (!v)
        return core_error(NULL, MPI_ERR_TYPE, fn);
    if (ndims <= 0 || !sizes || !subsizes || !starts || !newtype ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return core_error(NULL, MPI_ERR_ARG, fn);
    for (int i = 0; i < ndims; i++)
        if (sizes[i] <= 0 || subsizes[i] < 0 || starts[i] < 0 || starts[i] > sizes[i] - subsizes[i])
            return core_error(NULL, MPI_ERR_ARG, fn);
    dt_type_t *d = NULL;
    int err = build_subarray(ndims, sizes, subsizes, starts, order, v, &d);
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, 0, 1))) {
        d->ints[0] = ndims;
        for (int i = 0; i < ndims; i++) {
            d->ints[1 + i] = sizes[i];
            d->ints[1 + ndims + i] = subsizes[i];
            d->ints[1 + 2 * ndims + i] = starts[i];
        }
        d->ints[1 + 3 * ndims] = order;
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    return dt_ctor_finish(d, err, newtype, fn);
}

#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    const dt_type_t *v;
    dt_type_t *d = NULL;
    int err = dt_ctor_check(0, old, newtype, &v);
    if (!err)
        err = dt_build_resized(v, lb, extent, &d);
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_RESIZED, 0, 2, 1))) {
        d->aints[0] = lb;
        d->aints[1] = extent;
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    return dt_ctor_finish(d, err, newtype, "MPI_Type_create_resized");
}

#pragma weak MPI_Type_dup = PMPI_Type_dup
int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    const dt_type_t *v;
    dt_type_t *d = NULL;
    int err = dt_ctor_check(0, old, newtype, &v);
    if (!err) { /* one copy keeps the bounds, sticky marks included */
        dt_entry_t e = { 0, 1, v };
        err = dt_build(&e, 1, &d);
    }
    if (!err && !(err = dt_contents_init(d, MPI_COMBINER_DUP, 0, 0, 1))) {
        d->committed = v->committed;
        d->types[0] = old;
        dt_contents_retain(d, 1);
    }
    err = dt_ctor_finish(d, err, newtype, "MPI_Type_dup");
    if (!err && (err = dt_attr_copy_all(old, *newtype)) != MPI_SUCCESS) { /* a copy callback failed */
        dt_release(*newtype);
        *newtype = MPI_DATATYPE_NULL;
        return core_error(NULL, err, "MPI_Type_dup");
    }
    return err;
}
