/* Nonblocking collectives: MPI_Ibcast & co. run the blocking algorithm of
 * their collective on a helper user-level thread of the calling rank (see
 * coll_nb.c).  Each collective's file checks the arguments at the call
 * (errors are raised there, like the blocking form's) and hands over the
 * arguments and the function that runs the algorithm. */
#ifndef AMPI_COLL_NB_H
#define AMPI_COLL_NB_H

#include "coll/coll.h"
#include "coll/coll_op.h"

/* What the algorithm needs after the call has returned.  Buffers and
 * count/displacement arrays are the user's: MPI forbids touching them until
 * completion.  Handles are resolved (op) or retained (datatypes) at the
 * call, since the user may free them before completion.  Each collective
 * uses the fields it needs. */
typedef struct coll_nb_args {
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype sdt, rdt;
    coll_op_t op;       /* reductions: resolved at the call */
    size_t count;       /* elements (reductions) or bytes (bcast) */
    void *extra;        /* a collective's own state for its function (it frees it) */
} coll_nb_args_t;

/* A datatype argument the collective does not use on this rank (MPI lets
 * it be anything) stays MPI_DATATYPE_NULL: the start retains the others. */
static inline MPI_Datatype coll_nb_type(bool used, MPI_Datatype t) { return used ? t : MPI_DATATYPE_NULL; }

/* Runs the algorithm with the collective tag `tag` on the helper thread;
 * returns an MPI error class. */
typedef int coll_nb_fn(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag);

/* Tags of nonblocking collectives: NB_TAG_BASE + NB_TAG_SPAN * (sequence
 * number % 2^20) + 0..NB_TAG_SPAN-1 (barrier rounds), far above the fixed
 * tags of the blocking forms (0..31, COLL_TAG_*), so no message of one
 * collective can match a receive of another that is outstanding. */
#define COLL_NB_TAG_BASE 1024
#define COLL_NB_TAG_SPAN 64

/* The next nonblocking collective's sequence number of rank r on c: the
 * same on every member (they start the collectives of c in one order). */
uint32_t coll_nb_next_seq(p2p_rank_t *r, const core_comm_t *c);

/* The tags of the nonblocking collective with sequence number seq. */
int coll_nb_tag(uint32_t seq);
/* coll_nb_start with the tags `tag` (coll_nb_tag of a sequence number the
 * caller took): a collective whose parts run both as a schedule and on a
 * helper thread (coll_sched_rootedv.c).  Not while capturing. */
int coll_nb_start_tag(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, int tag,
                      MPI_Request *request);
/* Starts fn(a) on a helper thread of rank r over communicator c and
 * returns its request in *request.  Returns MPI_SUCCESS or an error class
 * (nothing started then). */
int coll_nb_start(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, MPI_Request *request);
/* Persistent collectives (MPI 4.0 5.13): MPI_Xxx_init calls MPI_Ixxx with
 * capturing on (coll_persist.c), and coll_nb_start then makes an inactive
 * persistent request instead of starting: every MPI_Start runs fn(a) on a
 * helper thread like a nonblocking call.  coll_nb_persist does it directly;
 * dispose (may be NULL) frees what a holds when the request is freed. */
void coll_nb_capture(bool on);
bool coll_nb_capturing(void);
int coll_nb_persist(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, MPI_Request *request,
                    void (*dispose)(const coll_nb_args_t *a));
/* Checks and starts a collective of uniform blocks (Iallgather, Ialltoall):
 * send (count, type) -- or MPI_IN_PLACE -- and receive (count, type).
 * Returns MPI_SUCCESS or the error class for the caller's handler. */
int coll_nb_start_uniform(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          MPI_Request *request);

/* Derived datatypes with gaps (coll_noncontig_nb.c): coll_nb_nc(a) says
 * whether a used side of a has such a type; coll_nc_nb_run then runs fn on
 * packed copies of the sides that do (send_many / recv_many: that side has
 * a block per rank, else one); coll_nc_nb_bcast is MPI_Ibcast's algorithm
 * for them (a->rbuf, a->rcount elements of a->rdt). */
bool coll_nb_nc(const coll_nb_args_t *a);
int coll_nc_nb_run(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag, coll_nb_fn *fn, bool send_many,
                   bool recv_many);
int coll_nc_nb_bcast(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag);

/* Reductions on such types (coll_noncontig_red.c): the blocking form with
 * request NULL, else the nonblocking one (persistent while capturing);
 * each checks its arguments and returns an error class. */
int coll_nc_reduce(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                   MPI_Op op, int root, MPI_Request *request);
int coll_nc_allreduce(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype dt, MPI_Op op, MPI_Request *request);
int coll_nc_reduce_scatter(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, void *recvbuf,
                           const int *recvcounts, int recvcount, MPI_Datatype dt, MPI_Op op, MPI_Request *request);
int coll_nc_scan(p2p_rank_t *r, core_comm_t *c, bool exclusive, const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype dt, MPI_Op op, MPI_Request *request);

/* Frees the finished helper threads, the sequence tables and the cached
 * scratch space.  Called once after the PE's scheduler has returned (every
 * helper is DONE then). */
void coll_nb_fini(void);

#endif
