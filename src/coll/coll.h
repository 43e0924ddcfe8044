/* Host collectives: shared argument checks, tags and buffer helpers.
 *
 * Every collective talks on the communicator's collective context (c->ctx + 1,
 * set by coll_isend/coll_irecv) so it never matches user messages.  Blocking
 * collectives are entered by all members in the same order and messages
 * between two ranks do not overtake each other, so one tag per collective is
 * enough for correctness; distinct tags only make a mismatched call sequence
 * (a user error) fail visibly instead of mixing data.  MPI_Barrier uses the
 * tags 0..31 (its rounds). */
#ifndef AMPI_COLL_H
#define AMPI_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "pt2pt/p2p_api.h"
#include "coll/coll_dev.h"
#include "coll/coll_p2p.h"

enum {
    COLL_TAG_BCAST = 100,
    COLL_TAG_REDUCE,
    COLL_TAG_ALLREDUCE,
    COLL_TAG_GATHER,
    COLL_TAG_SCATTER,
    COLL_TAG_ALLGATHER,
    COLL_TAG_ALLTOALL,
    COLL_TAG_REDSCAT,
    COLL_TAG_SCAN,
    COLL_TAG_EXSCAN,
    COLL_TAG_NCCL, /* the NCCL set-up exchange of a communicator (coll_dev_nccl.c) */
    COLL_TAG_INTER, /* MPI_Barrier on an intercommunicator (coll_inter.c) */
    COLL_TAG_DEVICE, /* the agreement on device buffers (coll_dev_agreed) */
};

/* Declares R (calling rank) and C (its communicator, intra- or
 * intercommunicator) or returns the error. */
#define COLL_ENTER_ANY(R, C, comm, fn)         \
    P2P_ENTER(R, fn);                          \
    core_comm_t *C = p2p_comm(R, comm);        \
    if (UTIL_UNLIKELY(!C))                     \
        return core_error(NULL, MPI_ERR_COMM, fn)

/* The same for the collectives that MPI defines on intracommunicators
 * only (the scans; neighbourhood collectives need a topology, which an
 * intercommunicator never has). */
#define COLL_ENTER(R, C, comm, fn)   \
    COLL_ENTER_ANY(R, C, comm, fn);  \
    if (UTIL_UNLIKELY(C->remote))    \
    return core_error_msg(C, MPI_ERR_COMM, fn, "not defined on an intercommunicator")

/* Returns the error class ERR through the communicator's handler if COND. */
#define COLL_CHECK(C, cond, err, fn)           \
    do {                                       \
        if (UTIL_UNLIKELY(cond))               \
            return core_error(C, err, fn);      \
    } while (0)

/* Count/type check of a (buf, count, type) argument triple; returns 0 or
 * an error class.  A call with two buffers of one count and type (the
 * reductions) checks these once, then each buffer (coll_check_ptr): the
 * same answer as coll_check_buf on both. */
static inline int coll_check_type(int count, MPI_Datatype dt)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!dt_valid(dt))
        return MPI_ERR_TYPE;
    /* collectives move count * coll_elem() contiguous bytes: derived types
     * with gaps or offsets take the packing paths (coll_noncontig.c) */
    if (!dt_is_predefined(dt) &&
        (!dt_is_contig(dt) || dt_contig_offset(dt) != 0 || dt_extent(dt) != (ptrdiff_t)dt_size(dt)))
        return MPI_ERR_UNSUPPORTED_OPERATION;
    return MPI_SUCCESS;
}

/* The buffer of a triple that passed coll_check_type. */
static inline int coll_check_ptr(const void *buf, int count, MPI_Datatype dt)
{
    /* NULL is MPI_BOTTOM: fine for derived types of absolute addresses */
    if (count > 0 && dt_size(dt) > 0 && ((!buf && dt_is_predefined(dt)) || buf == MPI_IN_PLACE))
        return MPI_ERR_BUFFER;
    /* device buffers are fine (coll_dev.h), with any op in reductions */
    return MPI_SUCCESS;
}

/* Count/type/buffer check of one (buf, count, type) argument triple;
 * returns 0 or an error class. */
static inline int coll_check_buf(const void *buf, int count, MPI_Datatype dt)
{
    int err = coll_check_type(count, dt);
    return err ? err : coll_check_ptr(buf, count, dt);
}

/* Same for a vector argument (counts[], displs[] of `n` ranks). */
int coll_check_vec(const void *buf, const int *counts, const int *displs, int n, MPI_Datatype dt);

/* Bytes of `count` elements; size_t because totals may pass 2^31. */
/* (a + b) mod n for 0 <= a, b and a + b < 2n, by a compare: % is an integer division,
 * tens of cycles on the collectives' latency path (tree and ring ranks). */
static inline int coll_mod_add(int a, int b, int n) { return a + b >= n ? a + b - n : a + b; }

/* Bytes of one element as the collectives move it: its extent for a
 * predefined type, so the padded pairs (MPI_DOUBLE_INT...) travel as the C
 * structs the MAXLOC/MINLOC kernels work on (every rank names the same
 * predefined type); its size for the others (contiguous ones: the same). */
static inline size_t coll_elem(MPI_Datatype dt)
{
    return dt_is_predefined(dt) ? (size_t)dt_extent(dt) : dt_size(dt);
}

static inline size_t coll_bytes(size_t count, MPI_Datatype dt) { return count * coll_elem(dt); }

/* Address of element `idx` of buf (predefined types: extent == size). */
static inline void *coll_at(const void *buf, size_t idx, MPI_Datatype dt)
{
    return (char *)buf + idx * (size_t)dt_extent(dt);
}

/* Copy between user or scratch buffers of any memory kind; with a GPU in
 * use a device buffer on either side makes it a device copy (coll_dev.c). */
static inline void coll_copy(void *dst, const void *src, size_t bytes)
{
    if (!bytes || dst == src)
        return;
    if (UTIL_UNLIKELY(gpu_enabled()))
        coll_dev_copy(dst, src, bytes);
    else
        memmove(dst, src, bytes);
}

/* Keeps the first error of a sequence of steps in *err. */
static inline void coll_keep_err(int *err, int e)
{
    if (!*err)
        *err = e;
}

/* malloc that aborts the job on failure (never returns NULL): host memory
 * for the library's own bookkeeping.  Scratch copies of user data come
 * from coll_scratch (coll_dev.h), which follows the user's memory kind. */
void *coll_malloc(size_t bytes);

/* Host scratch space (coll_util.c says why it is cached): at least `bytes`
 * bytes, 64-byte aligned, never NULL; the collectives reach it through
 * coll_scratch (coll_dev.h).  Only coll_host_scratch_free releases it (into
 * the calling rank's cache, or to the system); NULL is fine.
 * coll_scratch_fini frees the cache: once, after the PE's scheduler has
 * returned (coll_nb_fini). */
void *coll_host_scratch(size_t bytes);
void coll_host_scratch_free(void *p);
void coll_scratch_fini(void);

/* Where each rank's block lies in a gather/scatter-like buffer: uniform
 * blocks of `count` elements in rank order, or the user's counts[] and
 * displs[], or counts[] with element offsets offs[] (internal callers,
 * whose offsets may pass INT_MAX). */
typedef struct coll_layout {
    const int *counts;
    const int *displs;
    const size_t *offs;
    size_t count;
    MPI_Datatype dt;
} coll_layout_t;

static inline size_t coll_lay_count(const coll_layout_t *l, int i)
{
    return l->counts ? (size_t)l->counts[i] : l->count;
}
static inline size_t coll_lay_bytes(const coll_layout_t *l, int i) { return coll_bytes(coll_lay_count(l, i), l->dt); }
static inline void *coll_lay_at(const coll_layout_t *l, const void *buf, int i)
{
    if (l->displs) /* the user's displacements may be negative */
        return (char *)buf + (ptrdiff_t)l->displs[i] * (ptrdiff_t)dt_extent(l->dt);
    return coll_at(buf, l->offs ? l->offs[i] : (size_t)i * l->count, l->dt);
}

/* Internal forms without argument checks, shared between collectives. */
/* Rounds use the tags base .. base + 31. */
int coll_barrier(p2p_rank_t *r, core_comm_t *c, int base);
int coll_bcast(p2p_rank_t *r, core_comm_t *c, void *buf, size_t bytes, int root, int tag);
struct coll_op;
int coll_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                const struct coll_op *op, int root, int tag);
/* in == out: in place. */
int coll_allreduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                   const struct coll_op *op, int tag);
/* Every member of c is a rank of our process (and no GPU is in use, whose
 * buffers could lie on several devices): the same answer on every member. */
bool coll_all_local(const core_comm_t *c);
/* Reduce (all: Allreduce) among ranks of one process: the members send the
 * addresses of their buffers to the root, which reduces straight from every
 * input and writes every output, then releases the members -- 2(n-1) small
 * messages, n-1 reductions and n-1 copies, against log2(n) rounds of
 * messages, copies and reductions per rank through the message layer. */
int coll_local_reduce(p2p_rank_t *r, core_comm_t *c, const void *in, void *out, size_t count, MPI_Datatype dt,
                      const struct coll_op *op, int root, bool all, int tag);
/* Blocking collectives on derived types that are not one plain block run
 * on packed copies (coll_noncontig.c): coll_nc_type(dt) says whether dt is
 * such a type; the coll_nc_* forms take the user's arguments (counts NULL:
 * the uniform form) and return the error class of the call they make. */
bool coll_nc_type(MPI_Datatype dt);
/* MPI_Reduce_local on such a type (coll_noncontig_red.c): an error class. */
int coll_nc_reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op);
int coll_nc_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, int me);
int coll_nc_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                    int recvcount, const int *displs, MPI_Datatype recvtype, int root, MPI_Comm comm, int me, int n);
int coll_nc_scatterv(const void *sendbuf, const int *sendcounts, int sendcount, const int *displs,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                     MPI_Comm comm, int me, int n);
int coll_nc_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int *recvcounts, int recvcount, const int *displs, MPI_Datatype recvtype,
                       MPI_Comm comm, int me, int n);
int coll_nc_alltoallv(const void *sendbuf, const int *sendcounts, int sendcount, const int *sdispls,
                      MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, int recvcount,
                      const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm, int n);
/* The checks of the nonblocking and persistent forms, which take derived
 * types with gaps too (coll_noncontig_nb.c). */
static inline int coll_check_buf_nc(const void *buf, int count, MPI_Datatype dt)
{
    if (!coll_nc_type(dt))
        return coll_check_buf(buf, count, dt);
    return count < 0 ? MPI_ERR_COUNT : coll_check_ptr(buf, count, dt);
}
int coll_check_vec_nc(const void *buf, const int *counts, const int *displs, int n, MPI_Datatype dt);
/* Root's own block: sbuf == NULL (gather) or rbuf == NULL (scatter) when
 * it is already in place. */
int coll_gather(p2p_rank_t *r, core_comm_t *c, const void *sbuf, size_t sbytes, void *rbuf, const coll_layout_t *rl,
                int root, int tag);
int coll_scatter(p2p_rank_t *r, core_comm_t *c, const void *sbuf, const coll_layout_t *sl, void *rbuf, size_t rbytes,
                 int root, int tag);

#endif
