/* Datatypes.
 *
 * Predefined types are handles 1..AMPI_DATATYPE_PREDEFINED_LAST indexing a
 * constant table, so their size is one load.  Derived types (handles from
 * DT_FIRST_DERIVED up) are flattened when they are built: a list of
 * contiguous (offset, length) blocks in type-map order, adjacent blocks
 * merged, plus the bounds MPI defines (lb/ub, true lb/ub); but for types
 * of more than DT_FLAT_MAX blocks.  Handles are
 * process-wide: ranks of one process share the table, and each rank only
 * uses the handles it created.
 *
 * API for the communication layers (every function takes a type that passed
 * dt_valid()):
 *   dt_valid(t)            predefined, or derived, committed and flattened:
 *                          usable in communication (an uncommitted type ->
 *                          MPI_ERR_TYPE; one too large to flatten too)
 *   dt_committed(t)        predefined, or derived and committed: enough for
 *                          the functions that only count (MPI_Get_elements,
 *                          MPI_Pack_size)
 *   dt_size(t)             bytes of data in one element (gaps excluded)
 *   dt_extent(t)           distance between consecutive elements of a buffer
 *   dt_is_contig(t)        any count of t is one block of count*size bytes
 *                          starting at buf + dt_contig_offset(t)
 *   dt_packed_size(t, n)   bytes on the wire for n elements (= n * size)
 *   dt_pack / dt_unpack    gather n elements into / scatter them out of
 *                          packed bytes (host memory only)
 *   dt_elements(t, bytes)  basic elements in `bytes` packed bytes, or -1
 *                          (MPI_Get_elements; MPI_UNDEFINED for the caller)
 *   dt_retain / dt_release keep a derived type alive while an operation
 *                          that uses it is pending (MPI_Type_free may come
 *                          first); no-ops for predefined types. */
#ifndef AMPI_DT_H
#define AMPI_DT_H

#include <stdbool.h>
#include <stddef.h>
#include "mpi.h"
#include "util/util_log.h"

typedef struct dt_info {
    const char *name;
    size_t size;   /* bytes of data in one element */
    size_t extent; /* == size, but for the (value, index) pairs with padding (MPI_DOUBLE_INT...) */
    size_t align;  /* C alignment: the extent of a derived type is padded to a multiple */
    size_t first;  /* pairs: bytes of the value; the index (an int) follows at second */
    size_t second;
} dt_info_t;

extern const dt_info_t dt_predefined[AMPI_DATATYPE_PREDEFINED_LAST + 1] UTIL_HIDDEN;

/* The most blocks (or runs) a derived type is flattened into: 16 bytes
 * each, 256 MiB.  A type beyond it (a vector of 2^30 blocks) keeps its
 * size, bounds and element count, so the type functions answer, but no
 * list: communication refuses it (MPI_ERR_TYPE), as it refuses an
 * uncommitted type. */
#define DT_FLAT_MAX ((size_t)1 << 24)

/* First derived handle; the gap after the predefined range leaves room for
 * more predefined types without changing derived handles' meaning. */
#define DT_FIRST_DERIVED 64

typedef struct dt_block {
    ptrdiff_t off; /* from the start of the element (buf + i * extent) */
    size_t len;
} dt_block_t;

/* n consecutive basic elements of one predefined type, in type-map order:
 * what MPI_Get_elements counts in a partly received element. */
typedef struct dt_run {
    MPI_Datatype basic;
    size_t n;
} dt_run_t;

typedef struct dt_type {
    size_t size;                /* bytes of data in one element */
    ptrdiff_t lb, ub;           /* extent = ub - lb */
    ptrdiff_t true_lb, true_ub; /* of the data bytes alone */
    bool lb_marked, ub_marked;  /* bounds set explicitly (resized, MPI_LB/UB): they stick in outer types */
    bool committed;
    bool contig; /* see dt_is_contig() */
    bool unflat; /* more blocks or runs than DT_FLAT_MAX: bounds, size and counts only (dt_valid) */
    size_t nblocks, nruns, nbasic;
    size_t align; /* largest alignment of the basic types in it */
    dt_block_t *blocks;
    dt_run_t *runs;
    int refs; /* user handle + outer types' contents + pending operations */
    struct gpu_dt_layout *gpu_layout; /* device form of blocks, made at first device use */
    /* MPI_Type_get_envelope / get_contents */
    int combiner, nints, naints, ntypes;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;
    char name[MPI_MAX_OBJECT_NAME];
} dt_type_t;

/* The derived type behind a handle, committed or not; NULL when t is not a
 * live derived handle (predefined ones included). */
dt_type_t *dt_derived(MPI_Datatype t);

static inline bool dt_is_predefined(MPI_Datatype t)
{
    return t > MPI_DATATYPE_NULL && t <= AMPI_DATATYPE_PREDEFINED_LAST;
}

/* The (value, index) pair types whose C struct has padding (MPI 3.1 4.1.5
 * defines them as structs: size 12, extent 16 for MPI_DOUBLE_INT on
 * x86_64).  They are predefined but not contiguous. */
#define DT_PAD_(h, a) (sizeof(struct { a x; int y; }) != sizeof(a) + sizeof(int) ? 1ull << (h) : 0)
#define DT_PADDED_PAIRS                                                                                  \
    (DT_PAD_(MPI_FLOAT_INT, float) | DT_PAD_(MPI_DOUBLE_INT, double) | DT_PAD_(MPI_LONG_INT, long) |    \
     DT_PAD_(MPI_SHORT_INT, short) | DT_PAD_(MPI_LONG_DOUBLE_INT, long double))

/* A predefined type of one block of size bytes per element: what the fast
 * paths of the communication layers move as plain bytes. */
static inline bool dt_is_plain(MPI_Datatype t)
{
    return dt_is_predefined(t) && !((DT_PADDED_PAIRS >> t) & 1);
}

static inline bool dt_committed(MPI_Datatype t)
{
    if (dt_is_predefined(t))
        return true;
    const dt_type_t *d = dt_derived(t);
    return d && d->committed;
}

static inline bool dt_valid(MPI_Datatype t)
{
    if (dt_is_predefined(t))
        return true;
    const dt_type_t *d = dt_derived(t);
    return d && d->committed && !d->unflat;
}

/* The accessors below: caller has checked dt_valid() (or, in the type
 * query functions, that the handle exists). */
static inline size_t dt_size(MPI_Datatype t)
{
    return t <= AMPI_DATATYPE_PREDEFINED_LAST ? dt_predefined[t].size : dt_derived(t)->size;
}

static inline ptrdiff_t dt_extent(MPI_Datatype t)
{
    if (t <= AMPI_DATATYPE_PREDEFINED_LAST)
        return (ptrdiff_t)dt_predefined[t].extent;
    const dt_type_t *d = dt_derived(t);
    return d->ub - d->lb;
}

static inline bool dt_is_contig(MPI_Datatype t)
{
    return t <= AMPI_DATATYPE_PREDEFINED_LAST ? dt_is_plain(t) || t == MPI_DATATYPE_NULL : dt_derived(t)->contig;
}

/* Offset from buf of the first data byte of a contiguous type. */
static inline ptrdiff_t dt_contig_offset(MPI_Datatype t)
{
    return t <= AMPI_DATATYPE_PREDEFINED_LAST ? 0 : dt_derived(t)->true_lb;
}

static inline size_t dt_packed_size(MPI_Datatype t, int count) { return (size_t)count * dt_size(t); }

void dt_pack(const void *buf, int count, MPI_Datatype t, void *out);
/* Copies min(in_bytes, count * size) bytes; a short message fills a prefix
 * of the type map and leaves the rest of buf untouched. */
void dt_unpack(const void *in, size_t in_bytes, void *buf, int count, MPI_Datatype t);
long long dt_elements(MPI_Datatype t, long long bytes);
/* The inverse: packed bytes of the first `elements` basic elements of a
 * buffer of t (MPI_Status_set_elements), or -1 when a type too large to
 * flatten would have to be walked. */
long long dt_elements_bytes(MPI_Datatype t, long long elements);

/* The type's blocks and runs: derived types, or a view of a predefined one
 * (one block, or two for a padded pair); NULL when t names no type. */
const dt_type_t *dt_view(MPI_Datatype t);

/* The type's layout for packing device buffers (gpu_dt.h), built at the
 * first call and kept with the type; NULL when out of memory. */
struct gpu_dt_layout *dt_gpu_layout(MPI_Datatype t);

/* The fixed-size predefined type behind a handle of
 * MPI_Type_create_f90_integer/real/complex, else MPI_DATATYPE_NULL. */
MPI_Datatype dt_f90_base(MPI_Datatype t);

void dt_retain(MPI_Datatype t);
void dt_release(MPI_Datatype t);

#endif
