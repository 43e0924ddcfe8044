/* Collectives on intercommunicators (MPI-3.1 5.2.2).
 *
 * On an intercommunicator c, c->rank is the rank in the local group, while
 * c->size and the peers of point-to-point name the remote group; c->local
 * is an intracommunicator over the local group.  Each collective takes the
 * user's arguments in a coll_nb_args_t (counts NULL: the uniform form) and
 * checks them for this rank's part; request NULL runs it at once (the
 * blocking call), otherwise it starts as a nonblocking one -- or, under
 * MPI_Xxx_init, becomes a persistent request (coll_nb.h).  Each returns
 * MPI_SUCCESS or an error class for the caller's handler.
 *
 * Two designs, both correct for any pair of group sizes:
 *  - data that goes from every rank of one group to every rank of the other
 *    (gather, scatter, alltoall) travels straight over the intercommunicator
 *    as typed transfers (coll_neighbor.h plans), so derived types work;
 *  - reductions, broadcasts and allgathers run over the local
 *    intracommunicator, and the two leaders (local rank 0) exchange the
 *    group's result over the intercommunicator; the broadcasts within a
 *    group carry types with gaps packed (host buffers); the reductions take
 *    contiguous types.
 * MPI_IN_PLACE has no meaning on an intercommunicator: MPI_ERR_BUFFER. */
#ifndef AMPI_COLL_INTER_H
#define AMPI_COLL_INTER_H

#include "coll/coll_neighbor.h"

/* root: MPI_ROOT, MPI_PROC_NULL (the root's group) or a rank of the remote
 * group (the other group). */
int coll_inter_barrier(p2p_rank_t *r, core_comm_t *c, MPI_Request *request);
/* a->rbuf, a->rcount elements of a->rdt (MPI_DATATYPE_NULL where unused),
 * a->count bytes, a->root; the caller checked the buffer. */
int coll_inter_bcast(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request);
int coll_inter_gather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request);
int coll_inter_scatter(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request);
/* Reductions: a->count elements of dt, reduced with op (resolved here
 * into a->op). */
int coll_inter_reduce(p2p_rank_t *r, core_comm_t *c, coll_nb_args_t *a, MPI_Datatype dt, MPI_Op op,
                      MPI_Request *request);
int coll_inter_allreduce(p2p_rank_t *r, core_comm_t *c, coll_nb_args_t *a, MPI_Datatype dt, MPI_Op op,
                         MPI_Request *request);
/* a->rcounts: one count per rank of the local group (MPI_Reduce_scatter),
 * NULL for blocks of a->rcount (MPI_Reduce_scatter_block). */
int coll_inter_reduce_scatter(p2p_rank_t *r, core_comm_t *c, coll_nb_args_t *a, MPI_Datatype dt, MPI_Op op,
                              MPI_Request *request);
int coll_inter_allgather(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request);
int coll_inter_alltoall(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, MPI_Request *request);
int coll_inter_alltoallw(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, const int *scounts,
                         const int *sdispls, const MPI_Datatype *sdts, void *recvbuf, const int *rcounts,
                         const int *rdispls, const MPI_Datatype *rdts, MPI_Request *request);

/* What MPI_Xxx / MPI_Ixxx return for err, through C's handler. */
static inline int coll_inter_return(core_comm_t *c, int err, const char *fn)
{
    return err ? core_error(c, err, fn) : MPI_SUCCESS;
}

/* Shared by the files above (coll_inter.c). */
int coll_inter_check_root(const core_comm_t *c, int root);
/* Runs fn(a) at once with the blocking tag (request NULL) or starts it. */
int coll_inter_run(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, int blocking_tag,
                   MPI_Request *request);
/* The two leaders swap sbytes from sbuf for rbytes into rbuf; the other
 * ranks return at once. */
int coll_inter_leaders_xchg(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, void *rbuf,
                            size_t rbytes, int tag);
/* Address of block i of a typed layout: counts NULL means uniform blocks
 * of `count` elements in rank order; displacements count extents. */
void *coll_inter_block(const void *buf, const int *displs, int count, MPI_Datatype dt, int i);
/* Checks the n blocks of a typed side (counts NULL: n blocks of count). */
int coll_inter_check_side(const void *buf, const int *counts, const int *displs, int count, MPI_Datatype dt,
                          int n);

#endif
