/* Shared inside src/comm: handle tables, group and topology objects, and the
 * helpers that create communicators. */
#ifndef AMPI_COMM_INTERNAL_H
#define AMPI_COMM_INTERNAL_H

#include "comm/comm.h"
#include "pt2pt/p2p_api.h"

/* User keyvals are numbered from here, above the predefined attribute keys
 * (MPI_TAG_UB .. MPI_APPNUM), so the two can never be confused. */
#define COMM_KEYVAL_FIRST 16

struct comm_keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int refs;   /* the keyval handle (until Comm_free_keyval) + attributes set */
    bool freed; /* the handle is gone; attributes still using it remain */
};

typedef enum { COMM_TOPO_CART = MPI_CART, COMM_TOPO_GRAPH = MPI_GRAPH, COMM_TOPO_DIST = MPI_DIST_GRAPH } comm_topo_kind_t;

/* A topology, immutable once built and shared by Comm_dup's copies. */
struct comm_topo {
    int refs;
    comm_topo_kind_t kind;
    /* cart: dims[ndims], periods[ndims] */
    int ndims;
    int *dims, *periods;
    /* graph: the whole graph, index[nnodes] and edges[index[nnodes-1]] */
    int nnodes;
    int *index, *edges;
    /* distributed graph: this rank's neighbours (weights NULL if unweighted) */
    int indegree, outdegree;
    int *sources, *sourceweights, *dests, *destweights;
    bool weighted;
};

/* The calling rank's tables. */
static inline core_comm_state_t *comm_state(p2p_rank_t *r) { return &r->core.comms; }

/* Declares R (the calling rank) and S (its tables), or returns the error. */
#define COMM_ENTER(R, S, fn)  \
    P2P_ENTER(R, fn);         \
    core_comm_state_t *S = comm_state(R)

/* Declares C, the communicator behind handle h, or returns MPI_ERR_COMM. */
#define COMM_GET(C, S, h, fn)                        \
    core_comm_t *C = core_comm_lookup(S, h);                   \
    if (UTIL_UNLIKELY(!C))                           \
        return core_error(NULL, MPI_ERR_COMM, fn)

/* Returns MPI_ERR_COMM through C's handler if C is an intercommunicator
 * (for the calls MPI defines on intracommunicators only: topologies,
 * MPI_Comm_create_group, the local communicator of MPI_Intercomm_create). */
#define COMM_INTRA_ONLY(C, fn)                                                               \
    if (UTIL_UNLIKELY((C)->remote))                                                         \
    return core_error_msg(C, MPI_ERR_COMM, fn, "needs an intracommunicator")

/* ---- groups (comm_group.c) ---- */
core_group_t *comm_group_lookup(core_comm_state_t *s, MPI_Group h);
/* A new group of n members whose world ranks are ranks[] (copied); the
 * owning rank's position is computed from `world_me`. NULL: out of memory. */
core_group_t *comm_group_new(const int *ranks, int n, int world_me);
static inline void comm_group_retain(core_group_t *g) { g->refs++; }
void comm_group_release(core_group_t *g);
/* A handle for g (takes over one reference); MPI_GROUP_EMPTY for an empty
 * group. Returns MPI_GROUP_NULL when out of memory (g released). */
MPI_Group comm_group_handle(core_comm_state_t *s, core_group_t *g);
/* Same members in the same order. */
bool comm_group_same(const core_group_t *a, const core_group_t *b);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL into *result; an error class. */
int comm_group_compare(const core_group_t *g1, const core_group_t *g2, int *result);

/* ---- communicator objects (comm_state.c) ---- */
/* A new communicator over group g (reference taken over), with context ctx
 * and error handler errh, entered in the handle table.  The caller must be
 * a member.  NULL: out of memory (g released). */
core_comm_t *comm_new(core_comm_state_t *s, core_group_t *g, uint32_t ctx, MPI_Errhandler errh);
/* Frees c's handle slot and drops the handle's reference (the caller has
 * deleted the attributes). */
void comm_drop_handle(core_comm_state_t *s, core_comm_t *c);
/* Takes contexts [ctx, ctx + 2) for a new communicator of ours. */
void comm_ctx_taken(core_comm_state_t *s, uint32_t ctx);

/* ---- agreement and creation (comm_create.c) ---- */
/* Collective over parent: members with the same color >= 0 get a new
 * communicator ordered by (key, parent rank); *out NULL for MPI_UNDEFINED.
 * Returns an error class (already passed through no handler). */
int comm_split_internal(p2p_rank_t *r, core_comm_t *parent, int color, int key, core_comm_t **out);
/* Collective over parent: a communicator over the same group (nothing else
 * copied, the error handler excepted). */
int comm_dup_internal(p2p_rank_t *r, core_comm_t *parent, core_comm_t **out);

/* A communicator over g (reference taken over) with context ctx and
 * parent's error handler (what the standard asks of every constructor).
 * An error class. */
int comm_make(core_comm_state_t *s, core_group_t *g, uint32_t ctx, const core_comm_t *parent, core_comm_t **out);

/* ---- intercommunicators (comm_inter.c) ---- */
/* Gives c (just made over the local group) the remote group rg (taken over)
 * and the helper intracommunicator local (taken over: it goes with c). */
void comm_make_inter(core_comm_t *c, core_group_t *rg, core_comm_t *local);
/* Collective over both groups of c: a new intercommunicator over the same
 * groups (nothing else copied, the error handler excepted). */
int comm_inter_dup(p2p_rank_t *r, core_comm_t *c, core_comm_t **out);
/* MPI_Comm_split of an intercommunicator: members of one color form an
 * intercommunicator between the color's members in each group, ordered by
 * (key, rank); *out NULL for MPI_UNDEFINED or where either group has no
 * member of the color.  An error class (no handler run). */
int comm_inter_split(p2p_rank_t *r, core_comm_t *c, int color, int key, core_comm_t **out);

/* ---- attributes (comm_attr.c) ---- */
/* Runs the copy callbacks of old's attributes into new. */
int comm_attr_copy_all(core_comm_state_t *s, core_comm_t *oldc, core_comm_t *newc);
/* Deletes every attribute of c (delete callbacks run, newest first). */
int comm_attr_delete_all(core_comm_state_t *s, core_comm_t *c);
void comm_keyval_release(core_comm_state_t *s, int keyval);

/* ---- topologies (comm_topo*.c) ---- */
comm_topo_t *comm_topo_alloc(comm_topo_kind_t kind);
void comm_topo_release(comm_topo_t *t);
/* Collective over parent: its first `nodes` ranks (same order) form a new
 * communicator with topology t (NULL: out of memory); the others get *out
 * NULL.  t is taken over in every case.  An error class. */
int comm_topo_split(p2p_rank_t *r, core_comm_t *parent, int nodes, comm_topo_t *t, core_comm_t **out);

/* A table of *n elements of `elem` bytes grown to at least `need` (new ones
 * zeroed); returns the table (maybe moved), or NULL with tab and *n intact. */
void *comm_grow(void *tab, int *n, int need, size_t elem);

/* malloc'ed copy of n ints (n may be 0), or NULL: out of memory. */
int *comm_copy_ints(const int *src, int n);

#endif
