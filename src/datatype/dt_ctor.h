/* Shared by the type constructor entry points (dt_ctor*.c). */
#ifndef AMPI_DT_CTOR_H
#define AMPI_DT_CTOR_H

#include "core/core_rank.h"
#include "datatype/dt_internal.h"

/* Argument checks common to constructors with one old type; sets *view.
 * Returns MPI_SUCCESS or an error class. */
int dt_ctor_check(int count, MPI_Datatype old, const MPI_Datatype *newtype, const dt_type_t **view);
/* Gives d a handle, or on error (err, or a full table) destroys d and
 * reports through core_error. */
int dt_ctor_finish(dt_type_t *d, int err, MPI_Datatype *newtype, const char *fn);

#endif
