/* Communicators.  Today MPI_COMM_WORLD and MPI_COMM_SELF of each rank; each
 * communicator owns two context ids: ctx for point-to-point, ctx + 1 for the
 * library's own collective traffic, so the two never match each other. */
#ifndef AMPI_COMM_H
#define AMPI_COMM_H

#include <stdint.h>
#include "mpi.h"

#define COMM_CTX_WORLD 0u
#define COMM_CTX_SELF 2u

typedef struct comm {
    MPI_Comm handle;
    uint32_t ctx;   /* point-to-point context; ctx + 1 for collectives */
    int rank, size; /* of the calling rank, in this communicator */
    int self_world; /* MPI_COMM_SELF: its only member's world rank */
    MPI_Errhandler errh;
} comm_t;

/* World rank of communicator rank r (r valid). */
static inline int comm_world_rank(const comm_t *c, int r)
{
    return c->handle == MPI_COMM_SELF ? c->self_world : r;
}

#endif
