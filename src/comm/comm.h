/* Communicators and groups: the objects every layer sees.
 *
 * Each communicator owns two context ids: ctx for point-to-point, ctx + 1 for
 * the library's own collective traffic, so the two never match each other.
 * MPI_COMM_WORLD has ctx 0, MPI_COMM_SELF ctx 2; every other one gets its ctx
 * from the agreement in comm_create.c.
 *
 * Every handle (MPI_Comm, MPI_Group, keyval) is private to its rank: each
 * rank keeps its own tables in a comm_state_t, so ranks sharing a process
 * behave exactly like ranks in different processes. */
#ifndef AMPI_COMM_H
#define AMPI_COMM_H

#include <stdbool.h>
#include <stdint.h>
#include "mpi.h"

#define COMM_CTX_WORLD 0u
#define COMM_CTX_SELF 2u
#define COMM_CTX_FIRST_FREE 4u /* first context of a created communicator */
/* Contexts from here up belong to communicators made by MPI_Comm_idup, whose
 * agreement may overlap other creations of the same rank (comm_create.c). */
#define COMM_CTX_NB_FIRST 0x80000000u

/* An ordered set of world ranks (immutable once built, shared by count). */
typedef struct comm_group {
    int refs;   /* handles and communicators using it */
    bool fixed; /* predefined (part of comm_state_t): never freed */
    int size;
    int me;     /* the owning rank's index in it, or MPI_UNDEFINED */
    int *ranks; /* world rank of each member; NULL: ranks[i] == i */
} comm_group_t;

static inline int comm_group_world(const comm_group_t *g, int i) { return g->ranks ? g->ranks[i] : i; }

typedef struct comm_attr {
    int keyval;
    void *val;
} comm_attr_t;

typedef struct comm_topo comm_topo_t; /* comm_internal.h */

typedef struct comm {
    MPI_Comm handle;
    uint32_t ctx;        /* point-to-point context; ctx + 1 for collectives */
    int rank, size;      /* of the calling rank, in this communicator */
    const int *members;  /* world rank of each member; NULL: the identity */
    MPI_Errhandler errh;
    int refs;            /* the handle, plus whoever still holds the object */
    bool predefined;     /* WORLD and SELF: never freed */
    comm_group_t *group; /* members, shared with MPI_Comm_group's handles */
    comm_attr_t *attrs;  /* cached attributes, in the order they were set */
    int nattrs, attr_cap;
    comm_topo_t *topo;   /* NULL: no topology */
    char name[MPI_MAX_OBJECT_NAME];
} comm_t;

/* World rank of communicator rank r (r valid).  A table lookup, except for
 * MPI_COMM_WORLD and its copies, whose table would be the identity. */
static inline int comm_world_rank(const comm_t *c, int r) { return c->members ? c->members[r] : r; }

typedef struct comm_keyval comm_keyval_t; /* comm_internal.h */

/* One rank's communicators, groups and keyvals. */
typedef struct comm_state {
    comm_t world, self;
    comm_group_t world_group, self_group, empty_group;
    int self_member;           /* self_group's member table */
    comm_t **comms;            /* by MPI_Comm handle; NULL: free slot */
    int ncomms;
    comm_group_t **groups;     /* by MPI_Group handle */
    int ngroups;
    comm_keyval_t **keyvals;   /* by keyval - COMM_KEYVAL_FIRST */
    int nkeyvals;
    uint32_t next_ctx;         /* every communicator of ours has ctx < next_ctx */
    uint32_t next_nbctx;       /* the same among contexts >= COMM_CTX_NB_FIRST */
} comm_state_t;

static inline comm_t *comm_lookup(const comm_state_t *s, MPI_Comm h)
{
    return (unsigned)h < (unsigned)s->ncomms ? s->comms[h] : NULL;
}

/* Set-up and tear-down of a rank's tables (p2p_rank_init / p2p_rank_fini).
 * comm_state_fini frees everything without calling any attribute callback:
 * it runs after the rank's thread has ended. */
void comm_state_init(comm_state_t *s, int world_rank, int nranks);
void comm_state_fini(comm_state_t *s);

/* MPI_Finalize's first step, on the rank's own thread: deletes the
 * attributes of MPI_COMM_SELF (then MPI_COMM_WORLD), running their delete
 * callbacks, as the standard asks.  Returns an MPI error class. */
int comm_state_finalize(comm_state_t *s);

/* A request (or anything else) that may outlive MPI_Comm_free holds a
 * reference; the object goes when the last one is dropped. */
static inline void comm_retain(comm_t *c) { c->refs++; }
void comm_release(comm_t *c);

#endif
