/* Communicators and groups: creation, freeing, attributes, topologies.
 * The objects themselves are core's (core/core_comm.h), so that every layer
 * below this one reads them.
 *
 * MPI_COMM_WORLD has ctx 0, MPI_COMM_SELF ctx 2; every other one gets its ctx
 * from the agreement in comm_create.c. */
#ifndef AMPI_COMM_H
#define AMPI_COMM_H

#include <stdbool.h>
#include <stdint.h>
#include "mpi.h"
#include "core/core_comm.h"

#define COMM_CTX_WORLD 0u
#define COMM_CTX_SELF 2u
#define COMM_CTX_FIRST_FREE 4u /* first context of a created communicator */
/* Contexts from here up belong to communicators made by MPI_Comm_idup, whose
 * agreement may overlap other creations of the same rank (comm_create.c). */
#define COMM_CTX_NB_FIRST 0x80000000u

typedef struct comm_attr {
    int keyval;
    void *val;
} comm_attr_t;

typedef struct comm_topo comm_topo_t; /* comm_internal.h */
typedef struct comm_keyval comm_keyval_t; /* comm_internal.h */

/* The value of the MPI_LASTUSEDCODE attribute: the largest error code in
 * use, user codes included (MPI_Add_error_code moves it, src/env). */
extern int comm_attr_lastusedcode;

/* Set-up and tear-down of a rank's tables (when the rank is made and after
 * its thread has ended, src/env).
 * comm_state_fini frees everything without calling any attribute callback:
 * it runs after the rank's thread has ended. */
void comm_state_init(core_comm_state_t *s, int world_rank, int nranks);
void comm_state_fini(core_comm_state_t *s);

/* MPI_Finalize's first step, on the rank's own thread: deletes the
 * attributes of MPI_COMM_SELF (then MPI_COMM_WORLD), running their delete
 * callbacks, as the standard asks.  Returns an MPI error class. */
int comm_state_finalize(core_comm_state_t *s);

#endif
