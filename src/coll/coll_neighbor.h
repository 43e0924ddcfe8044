/* Neighbourhood collectives and MPI_Alltoallw: collectives whose every
 * block has its own peer, count and datatype.
 *
 * Each call is turned into a "plan": the list of typed sends and receives
 * it makes, with the peer, buffer address, count, datatype and tag of each.
 * Running a plan posts the receives, then the sends, on the collective
 * context, in steps of `window` transfers (0: all at once).  The requests
 * take the user's datatype as it is (the point-to-point layer packs and
 * unpacks non-contiguous types), so derived types need no extra code here.
 * Blocking calls run the plan at once; nonblocking ones hand it to a
 * helper thread (coll_nb.c), which runs and frees it. */
#ifndef AMPI_COLL_NEIGHBOR_H
#define AMPI_COLL_NEIGHBOR_H

#include "coll/coll_nb.h"

/* Tag of the blocking neighbourhood collectives: this base plus a slot tag
 * (< COLL_NB_TAG_SPAN).  It lies above the COLL_TAG_* of coll.h and below
 * every nonblocking tag (COLL_NB_TAG_BASE). */
#define COLL_TAG_NEIGHBOR 512
#define COLL_TAG_ALLTOALLW (COLL_TAG_NEIGHBOR + COLL_NB_TAG_SPAN)

/* One typed transfer of a plan; peer MPI_PROC_NULL: nothing to do. */
typedef struct coll_xfer {
    void *buf;
    int count;
    MPI_Datatype dt;
    int peer;
    int tag; /* added to the collective's tag: 0 .. COLL_NB_TAG_SPAN-1 */
} coll_xfer_t;

typedef struct coll_plan {
    int nsend, nrecv;
    coll_xfer_t *send, *recv; /* step k: recv[k] and send[k] (k < n of each) */
    int window;               /* steps in flight at a time; 0: all */
    void *scratch;            /* coll_scratch space the transfers use, freed with the plan */
} coll_plan_t;

/* A plan with room for nsend sends and nrecv receives (never NULL). */
coll_plan_t *coll_plan_new(int nsend, int nrecv);
void coll_plan_free(coll_plan_t *p);

/* Runs p with tags tag + xfer.tag; returns the first error class. */
int coll_plan_run(p2p_rank_t *r, core_comm_t *c, const coll_plan_t *p, int tag);

/* Blocking (request NULL): runs p with tag `blocking_tag` and frees it.
 * Nonblocking: starts p on a helper thread, which frees it when done; the
 * plan's datatypes are kept alive until then.  Either way p belongs to
 * the callee.  Returns MPI_SUCCESS or an error class. */
int coll_plan_exec(p2p_rank_t *r, core_comm_t *c, coll_plan_t *p, int blocking_tag, MPI_Request *request);

/* The neighbours of a communicator with a topology, in MPI 3.1's order:
 * Cartesian: for each dimension the -1 then the +1 neighbour (MPI_PROC_NULL
 * past a non-periodic edge); graph: MPI_Graph_neighbors of the rank, as
 * sources and destinations; distributed graph: its sources and
 * destinations as given. */
typedef struct coll_nbrs {
    int indeg, outdeg;
    int *src, *dst;
    bool cart;
} coll_nbrs_t;

/* Fills *nb (free with coll_nbrs_free); returns MPI_ERR_TOPOLOGY when the
 * communicator has none, MPI_ERR_NO_MEM. */
int coll_nbrs_get(core_comm_t *c, coll_nbrs_t *nb);
void coll_nbrs_free(coll_nbrs_t *nb);

/* Slot tags.  Messages between two ranks match in the order they were
 * posted, which pairs the k-th edge a->b of a graph with the k-th one at b
 * as MPI asks, so graphs need one tag.  A Cartesian dimension of size 1 or
 * 2 (periodic) makes one rank both the -1 and the +1 neighbour, and what a
 * rank sends to its -1 neighbour arrives in that neighbour's +1 slot: the
 * tag is the receiver's slot (slot ^ 1 for a send). */
static inline int coll_nbrs_recv_tag(const coll_nbrs_t *nb, int slot)
{
    return nb->cart ? slot % COLL_NB_TAG_SPAN : 0;
}
static inline int coll_nbrs_send_tag(const coll_nbrs_t *nb, int slot)
{
    return nb->cart ? (slot ^ 1) % COLL_NB_TAG_SPAN : 0;
}

/* Argument check of one (buf, count, type) of a plan: any committed type,
 * derived ones included; 0 or an error class. */
int coll_check_typed(const void *buf, int count, MPI_Datatype dt);

/* Address of a block `disp` elements of dt (or bytes, unit 1) from buf. */
static inline void *coll_disp(const void *buf, ptrdiff_t disp, ptrdiff_t unit)
{
    return (char *)buf + disp * unit;
}

#endif
