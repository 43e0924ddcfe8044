/* Nonblocking collectives as schedules that progress while ranks compute.
 *
 * A helper thread of the rank (coll_nb.c) moves its collective only while
 * its PE runs it, that is while some rank of the process is inside MPI.
 * Here a collective is instead a short program of steps, each a set of
 * sends and receives on the nonblocking collectives' UCX worker
 * (src/ucx/ucx_async.h); the completion of a step's last operation starts
 * the next step from the completion callback, on whichever thread
 * progressed the worker, the process's progress thread included.  The
 * user's request completes on the ranks' thread (the progress hook).
 *
 * Taken for MPI_Ibcast, MPI_Iallreduce, MPI_Ireduce, MPI_Ireduce_scatter(_block)
 * (those four: predefined ops on types without gaps), MPI_Ialltoall,
 * MPI_Igather, MPI_Iscatter and MPI_Iallgather(v) of at least
 * AMPI_NBC_PROGRESS_MIN bytes (MPI_Igatherv, MPI_Iscatterv and
 * MPI_Ialltoallv: block by block, below) on
 * intracommunicators that span several processes, when the worker exists (jobs of several processes; off with
 * AMPI_NBC_PROGRESS=0).  Every member decides alike, from what all of them
 * share: a rank whose buffer is device memory or whose type has gaps works
 * on a packed host copy, filled at the call and copied back when the
 * request completes (on the rank's own thread). */
#ifndef AMPI_COLL_SCHED_H
#define AMPI_COLL_SCHED_H

#include "coll/coll_nb.h"

/* Whether the collectives above on c take a schedule (the same answer on
 * every member): bytes is what every member has alike, the message of
 * Ibcast and Ireduce, twice the message of Iallreduce (every member sends
 * and receives its vector whole: two members' one exchange reads the
 * partner's vector straight into the result, as the helper threads' pull
 * does -- MPI_Iallreduce + MPI_Wait of 64 KiB between 2 processes on the
 * 2 x H200 host, 15.70 us against their 15.68, while IMB-NBC's overlap
 * went from 0 to 73 %; on the 2-vCPU machine, whose progress thread shares
 * the ranks' core, 8.1 against 6.1 us), the whole input of
 * Ireduce_scatter(_block)
 * (every member knows every block), the whole receive buffer of Ialltoall
 * and Iallgather(v), the root's whole buffer of Igather and Iscatter (a
 * block times the members).  Below
 * AMPI_NBC_PROGRESS_MIN the helper threads' direct copies win: a schedule's
 * steps cross a thread and a UCX worker each (osu_iallreduce's pure
 * communication time, 2 processes on a loaded 2-vCPU machine: 5.5-21 against
 * 1.4-3.0 us at 1-4 KiB, 62-80 against 12-15 us at 64 KiB, 117-133 against
 * 139-177 us at 128 KiB), and a computation that short rarely outlasts the
 * transfer. */
bool coll_sched_wanted(const core_comm_t *c, size_t bytes);
/* What an Ibcast of bytes weighs for coll_sched_wanted: twice its bytes
 * where the job's progress threads have CPUs of their own
 * (ucx_async_job_has_cpu), since from 64 KiB the schedule's overlap is
 * then worth its cost when nothing overlaps (IMB-NBC Ibcast 64 KiB, 2
 * processes on the 2 x H100 host, 3 rounds: 51 % overlap against Open MPI's
 * 1-13 % and the helper threads' 0, t_pure 8.05 against Open MPI's 6.85
 * us); on a core shared with the ranks nothing overlaps and the schedule
 * only costs (t_pure 4.71 against the helper threads' 3.77 us on the
 * 2-vCPU machine). */
size_t coll_sched_bcast_weight(size_t bytes);
/* count elements of dt in bytes (0 for a count below 1 or an invalid type) */
static inline size_t coll_block_bytes(int count, MPI_Datatype dt)
{
    return count > 0 && dt_valid(dt) ? (size_t)count * dt_size(dt) : 0;
}

/* Start the schedule and return its request; MPI_SUCCESS or an error class.
 * The arguments have passed the collective's checks. */
int coll_sched_ibcast(p2p_rank_t *r, core_comm_t *c, void *buf, int count, MPI_Datatype dt, int root,
                      MPI_Request *request);
/* sbuf: the input (recvbuf for MPI_IN_PLACE); op->kernel set; op->dt without gaps */
int coll_sched_iallreduce(p2p_rank_t *r, core_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                          const coll_op_t *op, MPI_Request *request);
/* as iallreduce; rbuf significant at the root, where sbuf == rbuf is MPI_IN_PLACE */
int coll_sched_ireduce(p2p_rank_t *r, core_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                       const coll_op_t *op, int root, MPI_Request *request);
/* counts: each member's block (Ireduce_scatter), or NULL and count for all
 * (Ireduce_scatter_block); sbuf may be MPI_IN_PLACE (the input in rbuf) */
int coll_sched_ireduce_scatter(p2p_rank_t *r, core_comm_t *c, const void *sbuf, void *rbuf, const int counts[],
                               int count, const coll_op_t *op, MPI_Request *request);
/* sbuf may be MPI_IN_PLACE */
int coll_sched_ialltoall(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                         int rcount, MPI_Datatype rdt, MPI_Request *request);

/* The root's send buffer (scatter) or receive buffer (gather) is significant
 * at the root only; MPI_IN_PLACE there as for the blocking forms. */
int coll_sched_iscatter(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                        int rcount, MPI_Datatype rdt, int root, MPI_Request *request);
int coll_sched_igather(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                       int rcount, MPI_Datatype rdt, int root, MPI_Request *request);

/* sbuf may be MPI_IN_PLACE (our block is in rbuf then); the v-form's
 * blocks are rcounts[i] elements of rdt at displs[i] extents. */
int coll_sched_iallgather(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                          int rcount, MPI_Datatype rdt, MPI_Request *request);
int coll_sched_iallgatherv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt,
                           void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rdt, MPI_Request *request);

/* AMPI_NBC_PROGRESS_MIN in bytes. */
size_t coll_sched_min(void);

/* MPI_Igatherv and MPI_Iscatterv (coll_sched_rootedv.c): a member knows
 * its own block only, so the choice is made block by block -- member i's
 * goes by a schedule when coll_sched_wanted(c, its bytes times the
 * members), which the root and member i compute alike.  Returns false when
 * no block of this rank's part goes so (the caller starts the helper
 * thread), else true with the call's error class in *err.  The arguments
 * have passed the collective's checks. */
bool coll_sched_igatherv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rdt, int root, MPI_Request *request,
                         int *err);
bool coll_sched_iscatterv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const int *scounts, const int *displs,
                          MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
                          MPI_Request *request, int *err);

/* MPI_Ialltoallv (coll_sched_alltoallv.c): block by block as above, the
 * block from member i to member j by a schedule when coll_sched_wanted(c,
 * its bytes times the members), which both compute alike.  Returns false
 * when no block of this rank goes so (the caller starts the helper
 * thread), else true with the call's error class in *err.  sbuf may be
 * MPI_IN_PLACE; the arguments have passed the collective's checks. */
bool coll_sched_ialltoallv(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const int *scounts, const int *sdispls,
                           MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt,
                           MPI_Request *request, int *err);

/* With AMPI_DEBUG, at process end: how many schedule steps, CMA bytes and
 * own-block bytes the ranks' thread and the progress thread each handled. */
void coll_sched_tally_report(void);

/* The worker's handler of arriving schedule messages (ucx_async_init). */
bool coll_sched_arrived(const void *hdr, size_t hlen, const void *data, void *desc, size_t len);

#endif
