/* The large-count datatype functions of MPI 4.0 (MPI_Type_contiguous_c ...):
 * counts, block lengths and displacements as MPI_Count.
 *
 * Where every value fits an int, the int constructor runs, so the type and
 * its envelope are the ones the classic call gives.  Otherwise the type is
 * flattened here from its entries (dt_build takes sizes of any width); its
 * envelope then names the combiner and the old types, without the integer
 * arguments, which MPI_Type_get_contents cannot return in ints. */
#include "datatype/dt_ctor.h"
#include "rank/rank_host.h"

#include <limits.h>
#include <stdlib.h>

static bool fits(MPI_Count v) { return v >= INT_MIN && v <= INT_MAX; }

static bool all_fit(MPI_Count n, const MPI_Count *a)
{
    for (MPI_Count i = 0; a && i < n; i++)
        if (!fits(a[i]))
            return false;
    return true;
}

/* An int copy of a[0..n) (NULL for a NULL array), or NULL with *err set. */
static int *ints_of(MPI_Count n, const MPI_Count *a, int *err)
{
    *err = MPI_SUCCESS;
    if (!a)
        return NULL;
    int *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (MPI_Count i = 0; i < n; i++)
        v[i] = (int)a[i];
    return v;
}

static MPI_Aint *aints_of(MPI_Count n, const MPI_Count *a, int *err)
{
    *err = MPI_SUCCESS;
    MPI_Aint *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (MPI_Count i = 0; i < n; i++)
        v[i] = (MPI_Aint)a[i];
    return v;
}

/* Entry i: blocklength bls[i] (or bl) of types[i] (or old) at disps[i]
 * (or i * stride), in bytes or in extents of the old type. */
typedef struct {
    MPI_Count count, bl, stride;
    const MPI_Count *bls, *disps;
    const MPI_Datatype *types;
    MPI_Datatype old;
    bool bytes;
    int combiner;
} large_t;

static int build(const large_t *a, MPI_Datatype *newtype, const char *fn)
{
    if (a->count < 0 || (!a->bls && a->bl < 0))
        return core_error(NULL, MPI_ERR_COUNT, fn);
    if (!newtype)
        return core_error(NULL, MPI_ERR_ARG, fn);
    size_t n = (size_t)a->count;
    dt_entry_t *e = malloc((n ? n : 1) * sizeof *e);
    if (!e)
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    int err = MPI_SUCCESS;
    for (size_t i = 0; i < n && !err; i++) {
        MPI_Datatype t = a->types ? a->types[i] : a->old;
        const dt_type_t *v = dt_view(t);
        MPI_Count bl = a->bls ? a->bls[i] : a->bl;
        if (!v)
            err = MPI_ERR_TYPE;
        else if (bl < 0)
            err = MPI_ERR_COUNT;
        else {
            MPI_Count d = a->disps ? a->disps[i] : (MPI_Count)i * a->stride;
            ptrdiff_t unit = a->bytes ? 1 : v->ub - v->lb;
            e[i] = (dt_entry_t){ (ptrdiff_t)d * unit, (size_t)bl, v };
        }
    }
    dt_type_t *d = NULL;
    if (!err)
        err = dt_build(e, n, &d);
    free(e);
    int ntypes = a->types ? (int)n : 1;
    if (!err && !(err = dt_contents_init(d, a->combiner, 0, 0, ntypes))) {
        for (int i = 0; i < ntypes; i++)
            d->types[i] = a->types ? a->types[i] : a->old;
        dt_contents_retain(d, ntypes);
    }
    return dt_ctor_finish(d, err, newtype, fn);
}

#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    if (fits(count))
        return PMPI_Type_contiguous((int)count, oldtype, newtype);
    /* one entry of count elements */
    large_t a = { .count = 1, .bl = count, .old = oldtype, .combiner = MPI_COMBINER_CONTIGUOUS };
    return build(&a, newtype, "MPI_Type_contiguous_c");
}

#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    if (fits(count) && fits(blocklength) && fits(stride))
        return PMPI_Type_vector((int)count, (int)blocklength, (int)stride, oldtype, newtype);
    large_t a = { .count = count, .bl = blocklength, .stride = stride, .old = oldtype,
                  .combiner = MPI_COMBINER_VECTOR };
    return build(&a, newtype, "MPI_Type_vector_c");
}

#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    RANK_HOST_GUARD;
    if (fits(count) && fits(blocklength))
        return PMPI_Type_create_hvector((int)count, (int)blocklength, (MPI_Aint)stride, oldtype, newtype);
    large_t a = { .count = count, .bl = blocklength, .stride = stride, .old = oldtype, .bytes = true,
                  .combiner = MPI_COMBINER_HVECTOR };
    return build(&a, newtype, "MPI_Type_create_hvector_c");
}

/* The indexed family: int forms where the values fit. */
static int indexed(MPI_Count count, const MPI_Count *bls, MPI_Count bl, const MPI_Count *disps,
                   const MPI_Datatype *types, MPI_Datatype old, bool bytes, int combiner, MPI_Datatype *newtype,
                   const char *fn)
{
    if (count < 0)
        return core_error(NULL, MPI_ERR_COUNT, fn);
    bool blocks = combiner == MPI_COMBINER_INDEXED_BLOCK || combiner == MPI_COMBINER_HINDEXED_BLOCK;
    if (count > 0 && (!disps || (!bls && !blocks) || (!types && combiner == MPI_COMBINER_STRUCT)))
        return core_error(NULL, MPI_ERR_ARG, fn);
    if (fits(count) && fits(bl) && all_fit(count, bls) && (bytes || all_fit(count, disps))) {
        int err, e2, e3 = MPI_SUCCESS, n = (int)count;
        int *ibls = ints_of(count, bls, &err);
        int *idisps = bytes ? NULL : ints_of(count, disps, &e2);
        MPI_Aint *adisps = bytes ? aints_of(count, disps, &e3) : NULL;
        if (!bytes)
            err = err ? err : e2;
        err = err ? err : e3;
        if (!err) {
            switch (combiner) {
            case MPI_COMBINER_INDEXED: err = PMPI_Type_indexed(n, ibls, idisps, old, newtype); break;
            case MPI_COMBINER_HINDEXED: err = PMPI_Type_create_hindexed(n, ibls, adisps, old, newtype); break;
            case MPI_COMBINER_INDEXED_BLOCK:
                err = PMPI_Type_create_indexed_block(n, (int)bl, idisps, old, newtype);
                break;
            case MPI_COMBINER_HINDEXED_BLOCK:
                err = PMPI_Type_create_hindexed_block(n, (int)bl, adisps, old, newtype);
                break;
            default: err = PMPI_Type_create_struct(n, ibls, adisps, types, newtype); break;
            }
        } else {
            err = core_error(NULL, err, fn);
        }
        free(ibls), free(idisps), free(adisps);
        return err;
    }
    large_t a = { .count = count, .bl = bl, .bls = bls, .disps = disps, .types = types, .old = old,
                  .bytes = bytes, .combiner = combiner };
    return build(&a, newtype, fn);
}

/* The family's entry points differ only in their parameters and in what
 * they pass on to indexed(); the name their errors carry comes from the
 * function's own name. */
#define DT_STR(x) #x
#define INDEXED_C(name, params, ...)                                  \
    _Pragma(DT_STR(weak MPI_##name##_c = PMPI_##name##_c))            \
    int PMPI_##name##_c params                                        \
    {                                                                 \
        RANK_HOST_GUARD;                                              \
        return indexed(__VA_ARGS__, newtype, "MPI_" #name "_c");      \
    }

INDEXED_C(Type_indexed,
          (MPI_Count count, const MPI_Count bls[], const MPI_Count disps[], MPI_Datatype oldtype,
           MPI_Datatype *newtype),
          count, bls, 0, disps, NULL, oldtype, false, MPI_COMBINER_INDEXED)
INDEXED_C(Type_create_hindexed,
          (MPI_Count count, const MPI_Count bls[], const MPI_Count disps[], MPI_Datatype oldtype,
           MPI_Datatype *newtype),
          count, bls, 0, disps, NULL, oldtype, true, MPI_COMBINER_HINDEXED)
INDEXED_C(Type_create_indexed_block,
          (MPI_Count count, MPI_Count blocklength, const MPI_Count disps[], MPI_Datatype oldtype,
           MPI_Datatype *newtype),
          count, NULL, blocklength, disps, NULL, oldtype, false, MPI_COMBINER_INDEXED_BLOCK)
INDEXED_C(Type_create_hindexed_block,
          (MPI_Count count, MPI_Count blocklength, const MPI_Count disps[], MPI_Datatype oldtype,
           MPI_Datatype *newtype),
          count, NULL, blocklength, disps, NULL, oldtype, true, MPI_COMBINER_HINDEXED_BLOCK)
INDEXED_C(Type_create_struct,
          (MPI_Count count, const MPI_Count bls[], const MPI_Count disps[], const MPI_Datatype types[],
           MPI_Datatype *newtype),
          count, bls, 0, disps, types, MPI_DATATYPE_NULL, true, MPI_COMBINER_STRUCT)

#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    return PMPI_Type_create_resized(oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype);
}

#pragma weak MPI_Type_size_c = PMPI_Type_size_c
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size) { return PMPI_Type_size_x(datatype, size); }

#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c
int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return PMPI_Type_get_extent_x(datatype, lb, extent);
}

#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c
int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    RANK_HOST_GUARD;
    (void)comm;
    if (!dt_committed(datatype))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Pack_size_c");
    if (incount < 0 || !size)
        return core_error(NULL, incount < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "MPI_Pack_size_c");
    *size = incount * (MPI_Count)dt_size(datatype);
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_c = PMPI_Pack_c
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm)
{
    RANK_HOST_GUARD;
    (void)comm;
    const char *fn = "MPI_Pack_c";
    if (!dt_valid(datatype))
        return core_error(NULL, MPI_ERR_TYPE, fn);
    if (incount < 0 || !fits(incount))
        return core_error(NULL, MPI_ERR_COUNT, fn); /* dt_pack counts elements in an int */
    if (!position || *position < 0 || outsize < 0)
        return core_error(NULL, MPI_ERR_ARG, fn);
    MPI_Count bytes = incount * (MPI_Count)dt_size(datatype);
    if (*position > outsize || bytes > outsize - *position)
        return core_error_msg(NULL, MPI_ERR_TRUNCATE, fn, "output buffer too small");
    dt_pack(inbuf, (int)incount, datatype, (char *)outbuf + *position);
    *position += bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack_c = PMPI_Unpack_c
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm)
{
    RANK_HOST_GUARD;
    (void)comm;
    const char *fn = "MPI_Unpack_c";
    if (!dt_valid(datatype))
        return core_error(NULL, MPI_ERR_TYPE, fn);
    if (outcount < 0 || !fits(outcount))
        return core_error(NULL, MPI_ERR_COUNT, fn);
    if (!position || *position < 0 || insize < 0)
        return core_error(NULL, MPI_ERR_ARG, fn);
    MPI_Count bytes = outcount * (MPI_Count)dt_size(datatype);
    if (*position > insize || bytes > insize - *position)
        return core_error_msg(NULL, MPI_ERR_TRUNCATE, fn, "input buffer too short");
    dt_unpack((const char *)inbuf + *position, (size_t)bytes, outbuf, (int)outcount, datatype);
    *position += bytes;
    return MPI_SUCCESS;
}
