/* What the schedule engine (coll_sched.c) and the algorithms written as
 * schedules (coll_sched_algo.c) share. */
#ifndef AMPI_COLL_SCHED_IMPL_H
#define AMPI_COLL_SCHED_IMPL_H

#include "coll/coll_sched.h"

typedef struct sched sched_t;

/* Posts the operations of step s->step (0 first) with sched_send and
 * sched_recv; returns true when the collective is over instead.  Called
 * with the worker's lock held, on any thread, once the previous step's
 * operations have all completed. */
typedef bool sched_step_fn(sched_t *s);

struct sched {
    sched_step_fn *step_fn;
    int step;
    int pending;   /* operations of this step not completed (+1 while posting) */
    int err;       /* first MPI error class */
    p2p_req_t *q;  /* the user's request */
    const core_comm_t *c;
    int me, n, world; /* rank and size in c, our world rank */
    uint32_t ctx, seq;
    struct sched *next_done;

    /* the algorithm's own state */
    const void *sbuf;
    void *rbuf;
    size_t bytes, rbytes; /* one block (alltoall: sent, received) */
    int root;
    coll_op_t op;
    size_t count;
    void *scratch;     /* freed at completion */
    void *acc, *other; /* allreduce: accumulator and partner's data */
    int pof2, rem, newrank, mask, red_peer;
    bool unfolded;
    bool halving, gathering; /* allreduce: reduce-scatter + allgather, and in which half */
    int lo, hi;              /* ... the blocks this rank holds */
    bool whole; /* every process sends what it receives: CMA receivers read whole messages */
    bool fold;   /* a reduction: a whole CMA message is folded into acc as it is read (coll_sched_cma.c) */
    bool folded; /* ... and the last one was: nothing left to combine */
    const void *in; /* allreduce, reduce: our operand while it is still the user's input (read, never
                     * written): the partner's first operand lands in acc and is combined with it there */

    /* a user buffer behind a host copy (device memory, a type with gaps):
     * stage (freed at completion) goes back into it when ubytes != 0 */
    void *stage, *stage_in;
    void *ubuf;
    int ucount;
    MPI_Datatype udt;
    size_t ubytes;
    void (*unstage)(sched_t *s); /* set: does the copy back instead (v-forms' blocks) */
};

/* The header of every schedule message.  The first five fields name the
 * exchange (collective, sender's comm rank, receiver's world rank, the
 * algorithm's tag); kind says what the message is, and the rest carries a
 * cross-memory-attach exchange's addresses (coll_sched_cma.c). */
enum { SCHED_DATA, SCHED_CMA, SCHED_CTS, SCHED_DONE, SCHED_FIN };
typedef struct sched_wire {
    uint32_t ctx, seq;
    int32_t src, dst_world, tag;
    uint32_t kind;
    int32_t pid;   /* CMA, CTS: the process whose memory addr is */
    uint32_t whole; /* CMA: the receiver reads it all (no CTS, no FIN) */
    uint64_t addr; /* CMA: the sender's buffer; CTS: the receiver's */
    uint64_t len;  /* CMA: the message's bytes; CTS: the bytes the sender writes */
} sched_wire_t;

/* Do a and b name the same exchange (kind and the rest aside)? */
static inline bool sched_wire_same(const sched_wire_t *a, const sched_wire_t *b)
{
    return a->ctx == b->ctx && a->seq == b->seq && a->src == b->src && a->dst_world == b->dst_world &&
           a->tag == b->tag;
}

/* What the schedules did and on which thread, for AMPI_DEBUG's report at
 * process end (coll_sched_tally_report): counted only while debugging. */
enum { SCHED_TALLY_STEPS, SCHED_TALLY_CMA_BYTES, SCHED_TALLY_CMA_NS, SCHED_TALLY_COPY_BYTES, SCHED_TALLY_KINDS };
void sched_tally(int kind, unsigned long n);
/* The clock for SCHED_TALLY_CMA_NS: 0 unless debugging. */
uint64_t sched_tally_clock(void);

/* One operation of s's step completed (with the lock held). */
void sched_op_done(sched_t *s);

/* Messages between processes that may read each other's memory, of at
 * least AMPI_CMA_SPLIT bytes, go by cross-memory attach, each side copying
 * half, or the receiver all of it when s->whole (coll_sched_cma.c):
 * sched_cma_send returns false when the message does not qualify (it then
 * goes through UCX); sched_cma_deliver gives a receive its SCHED_CMA
 * message h; sched_cma_control takes CTS, DONE and FIN messages. */
bool sched_cma_send(sched_t *s, int proc, const sched_wire_t *key, const void *buf, size_t len);
void sched_cma_deliver(sched_t *s, const sched_wire_t *h, void *buf, size_t len);
void sched_cma_control(const sched_wire_t *h);

/* Whether (buf, count, dt) travels from a host copy (device memory, a type
 * with gaps); *bytes: what it puts on the wire, packed. */
bool sched_staged(const void *buf, int count, MPI_Datatype dt, size_t *bytes);
/* A host copy of bytes for (buf, count, dt), filled from it when fill. */
void *sched_host_copy(const void *buf, int count, MPI_Datatype dt, size_t bytes, bool fill);
/* s->stage goes back into (buf, count, dt) at completion. */
void sched_unstage_into(sched_t *s, void *buf, int count, MPI_Datatype dt, size_t bytes);

/* The ranks' thread, at completion: copy the staged result back, free the copies. */
void sched_unstage(sched_t *s);

/* Send or receive len bytes to/from comm rank peer under message tag tag
 * (the algorithm's name for the exchange: both sides use the same one). */
void sched_send(sched_t *s, int peer, const void *buf, size_t len, int tag);
void sched_recv(sched_t *s, int peer, void *buf, size_t len, int tag);

/* Copy len bytes from src to dst as an operation of the step: where the
 * progress thread has a CPU of its own, a copy of 256 KiB or more happens
 * later, on whichever thread polls next (the progress thread while the
 * ranks compute), not in the call that posts it; others at once
 * (coll_sched.c). */
void sched_copy(sched_t *s, void *dst, const void *src, size_t len);

/* acc = lower op higher of our data and the partner's (other), by the
 * host kernel: the schedule's data is host memory, whatever thread runs
 * this.  The result may land in other; the pointers then swap.  While our
 * data is still the user's input (s->in), the partner's came into acc:
 * acc = s->in op acc, and s->in is done with. */
void sched_combine(sched_t *s, bool other_is_lower);

/* Creates the schedule and its request; nothing runs yet.  sched_new_seq:
 * with the sequence number seq (NULL: the next, as sched_new). */
sched_t *sched_new(p2p_rank_t *r, core_comm_t *c, sched_step_fn *fn, MPI_Request *request, int *err);
sched_t *sched_new_seq(p2p_rank_t *r, core_comm_t *c, sched_step_fn *fn, MPI_Request *request, int *err,
                       const uint32_t *seq);
/* Runs its first steps (until one waits) and hands it to the network. */
void sched_start(sched_t *s);

bool sched_bcast(sched_t *s);
bool sched_allreduce(sched_t *s);
bool sched_alltoall(sched_t *s);
bool sched_gather(sched_t *s);
bool sched_scatter(sched_t *s);
bool sched_reduce(sched_t *s);
bool sched_reduce_scatter(sched_t *s);
bool sched_allgather(sched_t *s);
bool sched_gatherv(sched_t *s);
bool sched_scatterv(sched_t *s);
bool sched_alltoallv(sched_t *s);

/* One block of a v-buffer (counts[i] elements of dt at displs[i] extents)
 * as the v-forms move it (coll_sched_vblock.c): at is where it lies in the
 * buffer they work on -- the user's (at == uat) or a host copy that holds
 * the blocks back to back, packed, in rank order -- and sched whether it
 * goes by the schedule. */
typedef struct {
    ptrdiff_t at;  /* bytes from the buffer worked on */
    size_t len;    /* bytes on the wire */
    ptrdiff_t uat; /* bytes from the user's buffer */
    int count;     /* elements of the user's type */
    bool sched;    /* the block goes by the schedule */
} sched_vblock_t;

/* Fills b[0..n-1] for (buf, counts, displs, dt): block i goes by the
 * schedule when i != self and coll_sched_wanted(c, its bytes times the
 * members) -- the rule the member at the other end applies to the same
 * block -- (*taken counts them); *total is the packed size.  Returns
 * whether the buffer needs a host copy (device memory, a type with gaps);
 * if not, every at is uat. */
bool sched_vblocks(const core_comm_t *c, sched_vblock_t *b, const void *buf, const int *counts, const int *displs,
                   MPI_Datatype dt, int self, size_t *total, int *taken);
/* The host copy host from the user's buffer, block by block, and back
 * (block skip excepted: -1 for none). */
void sched_vpack(const sched_vblock_t *b, int n, const void *ubuf, MPI_Datatype dt, char *host);
void sched_vunpack(const sched_vblock_t *b, int n, int skip, const char *host, void *ubuf, MPI_Datatype dt);

/* A collective in two parts: a schedule and a helper thread that owns the
 * user's request, moves the blocks off the schedule and waits for it.
 * sched_split starts helper(extra) under the schedule's sequence number,
 * which its messages share, and returns the schedule, not started, with its
 * request in *part.  NULL: *err set, nothing started; or *err MPI_SUCCESS
 * and *part NULL, the schedule not made (why in *part_err, which the helper
 * reports).  The helper runs on the PE's thread once the caller returns, so
 * it finds *part set; it makes the schedule's completion wake it
 * ((*part)->waiter = rank_self()) and ends with sched_part_wait. */
sched_t *sched_split(p2p_rank_t *r, core_comm_t *c, sched_step_fn *step, coll_nb_fn *helper, void *extra,
                     MPI_Request *request, p2p_req_t **part, int *part_err, int *err);
int sched_part_wait(p2p_req_t *part, int part_err);

#endif
