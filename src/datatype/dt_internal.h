/* Inside the datatype layer: the handle table, the flattening builder and
 * the envelope/contents records. */
#ifndef AMPI_DT_INTERNAL_H
#define AMPI_DT_INTERNAL_H

#include "datatype/dt.h"

/* ---- handle table (dt_table.c) ---- */

/* Gives d (refs == 1) a handle; MPI_ERR_INTERN when the table is full. */
int dt_register(dt_type_t *d, MPI_Datatype *handle);
/* Frees an object that never got a handle (and what it retains). */
void dt_destroy(dt_type_t *d);
/* Name of a type; predefined names can be overridden (MPI_Type_set_name). */
const char *dt_name(MPI_Datatype t);
int dt_set_predefined_name(MPI_Datatype t, const char *name);

/* ---- flattening (dt_build.c) ---- */

/* `count` consecutive elements of `type`, the first at byte `disp`: every
 * type constructor is a list of these. */
typedef struct dt_entry {
    ptrdiff_t disp;
    size_t count;
    const dt_type_t *type;
} dt_entry_t;

/* New uncommitted object (refs 1, no contents) or an MPI error class. */
int dt_build(const dt_entry_t *e, size_t n, dt_type_t **out);
/* Drops the lists of a built type, keeping its size, bounds and counts
 * (a type too large to flatten, dt.h). */
void dt_unflatten(dt_type_t *d);
/* Copy of old with its bounds replaced (sticky, like MPI_LB/MPI_UB). */
int dt_build_resized(const dt_type_t *old, ptrdiff_t lb, ptrdiff_t extent, dt_type_t **out);

/* ---- envelope / contents (dt_build.c) ---- */

/* Allocates d's contents arrays, zeroed; the caller fills them and then
 * calls dt_contents_retain(d, ntypes), which takes a reference on every
 * derived type in d->types (MPI_Type_get_contents hands them back). */
int dt_contents_init(dt_type_t *d, int combiner, int nints, int naints, int ntypes);
void dt_contents_retain(dt_type_t *d, int ntypes);

/* Attributes (dt_attr.c): MPI_Type_free deletes the calling rank's
 * attributes of a type through their callbacks, MPI_Type_dup copies them;
 * both return an MPI error class (a failing callback stops them). */
int dt_attr_delete_all(MPI_Datatype type);
int dt_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype);

#endif
