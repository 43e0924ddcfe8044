/* Communicators and groups: the objects every layer sees.
 *
 * Each communicator owns two context ids: ctx for point-to-point, ctx + 1 for
 * the library's own collective traffic, so the two never match each other.
 *
 * Every handle (MPI_Comm, MPI_Group, keyval) is private to its rank: each
 * rank keeps its own tables in a core_comm_state_t, so ranks sharing a
 * process behave exactly like ranks in different processes.  The objects
 * live here, below point-to-point, which reads them on every call; src/comm
 * creates, frees and queries them (its attributes, keyvals and topologies
 * stay opaque here). */
#ifndef AMPI_CORE_COMM_H
#define AMPI_CORE_COMM_H

#include <stdbool.h>
#include <stdint.h>
#include "mpi.h"

/* An ordered set of world ranks (immutable once built, shared by count). */
typedef struct core_group {
    int refs;   /* handles and communicators using it */
    bool fixed; /* predefined (part of core_comm_state_t): never freed */
    int size;
    int me;     /* the owning rank's index in it, or MPI_UNDEFINED */
    int *ranks; /* world rank of each member; NULL: ranks[i] == i */
} core_group_t;

static inline int core_group_world(const core_group_t *g, int i) { return g->ranks ? g->ranks[i] : i; }

struct comm_attr;  /* src/comm: one cached attribute */
struct comm_topo;  /* src/comm: a topology */

typedef struct core_comm {
    MPI_Comm handle;
    uint32_t ctx;        /* point-to-point context; ctx + 1 for collectives */
    int rank, size;      /* of the calling rank, in this communicator */
    const int *members;  /* world rank of each member; NULL: the identity */
    MPI_Errhandler errh;
    int refs;            /* the handle, plus whoever still holds the object */
    bool predefined;     /* WORLD and SELF: never freed */
    core_group_t *group; /* members, shared with MPI_Comm_group's handles */
    struct comm_attr *attrs; /* cached attributes, in the order they were set */
    int nattrs, attr_cap;
    struct comm_topo *topo;  /* NULL: no topology */
    /* Intercommunicators: rank and group are the local group's, while size
     * and members describe the remote group, because point-to-point names
     * its peers there.  NULL: an intracommunicator. */
    core_group_t *remote;
    struct core_comm *local; /* an intracommunicator over the local group, for
                                the agreements of dup and merge */
    char name[MPI_MAX_OBJECT_NAME];
    /* Buffered sends (src/pt2pt/p2p_bsend.c): the buffer attached to this
     * communicator, and the slot of the session it came from (NULL: none). */
    struct p2p_bsend_state *bsend;
    struct p2p_bsend_state **session_bsend;
    /* The collectives' agreement that the ranks pass device buffers
     * (src/coll/coll_dev.c): calls that asked so far, and the verdict. */
    uint32_t dev_asked;
    bool dev_agreed;
} core_comm_t;

/* World rank of communicator rank r (r valid).  A table lookup, except for
 * MPI_COMM_WORLD and its copies, whose table would be the identity. */
static inline int core_comm_world_rank(const core_comm_t *c, int r) { return c->members ? c->members[r] : r; }

struct comm_keyval; /* src/comm */

/* One rank's communicators, groups and keyvals. */
typedef struct core_comm_state {
    core_comm_t world, self;
    core_group_t world_group, self_group, empty_group;
    int self_member;           /* self_group's member table */
    core_comm_t **comms;       /* by MPI_Comm handle; NULL: free slot */
    int ncomms;
    core_group_t **groups;     /* by MPI_Group handle */
    int ngroups;
    struct comm_keyval **keyvals; /* by keyval - COMM_KEYVAL_FIRST */
    int nkeyvals;
    uint32_t next_ctx;         /* every communicator of ours has ctx < next_ctx */
    uint32_t next_nbctx;       /* the same among contexts >= COMM_CTX_NB_FIRST (comm.h) */
} core_comm_state_t;

static inline core_comm_t *core_comm_lookup(const core_comm_state_t *s, MPI_Comm h)
{
    return (unsigned)h < (unsigned)s->ncomms ? s->comms[h] : NULL;
}

/* A request (or anything else) that may outlive MPI_Comm_free holds a
 * reference; the object goes when the last one is dropped, through the
 * destructor src/comm registers (it owns the attributes and topology). */
static inline void core_comm_retain(core_comm_t *c) { c->refs++; }
void core_comm_release(core_comm_t *c);
void core_comm_set_destroy(void (*destroy)(core_comm_t *c));

#endif
