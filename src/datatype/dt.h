/* Datatypes.  Today only the predefined ones, all contiguous; a handle is an
 * index into a constant table, so a size lookup is one load. */
#ifndef AMPI_DT_H
#define AMPI_DT_H

#include <stdbool.h>
#include <stddef.h>
#include "mpi.h"

typedef struct dt_info {
    const char *name;
    size_t size;   /* bytes of one element */
    size_t extent; /* == size for the predefined types */
} dt_info_t;

extern const dt_info_t dt_predefined[AMPI_DATATYPE_PREDEFINED_LAST + 1];

static inline bool dt_valid(MPI_Datatype t)
{
    return t > MPI_DATATYPE_NULL && t <= AMPI_DATATYPE_PREDEFINED_LAST;
}

/* Caller has checked dt_valid(). */
static inline size_t dt_size(MPI_Datatype t) { return dt_predefined[t].size; }

#endif
