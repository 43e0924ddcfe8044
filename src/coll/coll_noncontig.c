/* Blocking collectives on derived datatypes whose data is not one block of
 * size bytes at the buffer (vectors, structs with gaps, resized types...).
 *
 * The algorithms move byte blocks, so such a call runs on packed copies: a
 * rank packs what it sends (dt_pack) into a scratch buffer, the collective
 * runs on MPI_BYTE counts -- what MPI's type matching makes equal on both
 * ends: count * size bytes -- and the rank unpacks what it received.  Only
 * the ranks whose own types need it take this path; the others' byte blocks
 * are the same on the wire (the uniform forms run the uniform collective
 * on bytes, so every rank takes the same algorithm).  Blocks of the v-forms
 * lie back to back in the packed copies; the user's displacements apply when
 * packing and unpacking.
 * Device buffers are packed and unpacked by their GPU and the packed bytes
 * copied to and from host memory (coll_nc_pack_buf), so a rank whose buffer
 * is device memory takes the same way as its peers; the nonblocking forms:
 * coll_noncontig_nb.c.
 * Each function returns what the MPI_BYTE call returned: its error handler
 * has already run. */
#include "coll/coll_nc.h"
#include "gpu/gpu_dt.h"

#include <limits.h>
#include <stdlib.h>

bool coll_nc_type(MPI_Datatype dt)
{
    return !dt_is_predefined(dt) && dt_valid(dt) &&
           (!dt_is_contig(dt) || dt_contig_offset(dt) != 0 || dt_extent(dt) != (ptrdiff_t)dt_size(dt));
}

static int nc_count(const coll_nc_side_t *s, int i) { return s->counts ? s->counts[i] : s->count; }

static char *nc_block(const coll_nc_side_t *s, int i)
{
    ptrdiff_t at = s->displs ? (ptrdiff_t)s->displs[i] : (ptrdiff_t)i * s->count;
    return s->buf + at * dt_extent(s->dt);
}

/* Byte counts and offsets of the packed blocks; false when a count does
 * not fit an int. */
static bool nc_layout(const coll_nc_side_t *s, int n, int *bcounts, int *boffs, size_t *total)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t b = (size_t)nc_count(s, i) * dt_size(s->dt);
        if (b > INT_MAX || off > INT_MAX)
            return false;
        bcounts[i] = (int)b;
        boffs[i] = (int)off;
        off += b;
    }
    *total = off;
    return true;
}

/* The bytes that count elements of dt at buf span: *lo from buf, *len. */
static void span_of(int count, MPI_Datatype dt, ptrdiff_t *lo, size_t *len)
{
    const dt_type_t *d = dt_derived(dt);
    ptrdiff_t step = (ptrdiff_t)(count - 1) * dt_extent(dt);
    ptrdiff_t a = d->true_lb < d->true_lb + step ? d->true_lb : d->true_lb + step;
    ptrdiff_t b = d->true_ub > d->true_ub + step ? d->true_ub : d->true_ub + step;
    *lo = a;
    *len = (size_t)(b - a);
}

/* Without the library's kernels (a build without nvcc) a device buffer's
 * whole span goes through host memory: copied out, packed or unpacked
 * there, and (unpack) copied back, gaps included (they hold what they
 * held).  Correct, slow. */
static void span_pack(const void *buf, int count, MPI_Datatype dt, char *packed)
{
    ptrdiff_t lo;
    size_t len;
    span_of(count, dt, &lo, &len);
    char *h = coll_host_scratch(len);
    coll_dev_copy(h, (const char *)buf + lo, len);
    dt_pack(h - lo, count, dt, packed);
    coll_host_scratch_free(h);
}

static void span_unpack(const char *packed, size_t bytes, void *buf, int count, MPI_Datatype dt)
{
    ptrdiff_t lo;
    size_t len;
    span_of(count, dt, &lo, &len);
    char *h = coll_host_scratch(len);
    coll_dev_copy(h, (char *)buf + lo, len);
    dt_unpack(packed, bytes, h - lo, count, dt);
    coll_dev_copy((char *)buf + lo, h, len);
    coll_host_scratch_free(h);
}

/* Device memory is packed by the GPU into device scratch (one kernel or
 * strided copy for the whole block, gpu_dt.c) and that copied to host. */
void coll_nc_pack_buf(const void *buf, int count, MPI_Datatype dt, char *packed)
{
    size_t bytes = (size_t)count * dt_size(dt);
    if (!bytes || !p2p_is_device(buf, 1)) {
        dt_pack(buf, count, dt, packed);
        return;
    }
    if (!gpu_dt_available()) {
        span_pack(buf, count, dt, packed);
        return;
    }
    void *d = coll_dev_scratch(bytes);
    p2p_dev_pack_wait(d, buf, count, dt);
    coll_dev_copy(packed, d, bytes);
    coll_scratch_free(d);
}

void coll_nc_unpack_buf(const char *packed, size_t bytes, void *buf, int count, MPI_Datatype dt)
{
    if (!bytes || !p2p_is_device(buf, 1)) {
        dt_unpack(packed, bytes, buf, count, dt);
        return;
    }
    if (!gpu_dt_available()) {
        span_unpack(packed, bytes, buf, count, dt);
        return;
    }
    void *d = coll_dev_scratch(bytes);
    coll_dev_copy(d, packed, bytes);
    p2p_dev_unpack_wait(buf, d, count, bytes, dt);
    coll_scratch_free(d);
}

void coll_nc_pack(const coll_nc_side_t *s, int i, char *packed, const int *boffs)
{
    coll_nc_pack_buf(nc_block(s, i), nc_count(s, i), s->dt, packed + boffs[i]);
}

void coll_nc_unpack(const coll_nc_side_t *s, int i, const char *packed, const int *bcounts, const int *boffs)
{
    coll_nc_unpack_buf(packed + boffs[i], (size_t)bcounts[i], nc_block(s, i), nc_count(s, i), s->dt);
}

int coll_nc_prepare(const coll_nc_side_t *s, int n, coll_nc_pack_t *p)
{
    p->bcounts = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->bcounts);
    p->boffs = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->boffs);
    p->packed = NULL;
    if (!p->bcounts || !p->boffs)
        return MPI_ERR_NO_MEM;
    if (!nc_layout(s, n, p->bcounts, p->boffs, &p->total))
        return MPI_ERR_COUNT;
    p->packed = malloc(p->total ? p->total : 1);
    return p->packed ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void coll_nc_release(coll_nc_pack_t *p)
{
    free(p->bcounts);
    free(p->boffs);
    free(p->packed);
}

int coll_nc_prepare_sides(const coll_nc_side_t *ss, int nsend, coll_nc_pack_t *sp, const coll_nc_side_t *rs,
                          int nrecv, coll_nc_pack_t *rp)
{
    int err = nsend ? coll_nc_prepare(ss, nsend, sp) : MPI_SUCCESS;
    if (!err && nrecv)
        err = coll_nc_prepare(rs, nrecv, rp);
    return err;
}

static int nc_fail(MPI_Comm comm, int err, const char *fn)
{
    p2p_rank_t *r = p2p_self();
    return core_error(r ? p2p_comm(r, comm) : NULL, err, fn);
}

int coll_nc_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, int me)
{
    coll_nc_side_t s = { buf, NULL, NULL, count, dt };
    coll_nc_pack_t p;
    int err = coll_nc_prepare(&s, 1, &p);
    if (err) {
        coll_nc_release(&p);
        return nc_fail(comm, err, "MPI_Bcast");
    }
    if (me == root)
        coll_nc_pack(&s, 0, p.packed, p.boffs);
    err = PMPI_Bcast(p.packed, p.bcounts[0], MPI_BYTE, root, comm);
    if (!err && me != root)
        coll_nc_unpack(&s, 0, p.packed, p.bcounts, p.boffs);
    coll_nc_release(&p);
    return err;
}

/* Gather(v): the root unpacks every block (its own was packed in place). */
int coll_nc_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                    int recvcount, const int *displs, MPI_Datatype recvtype, int root, MPI_Comm comm, int me, int n)
{
    const char *fn = recvcounts ? "MPI_Gatherv" : "MPI_Gather";
    bool in_place = sendbuf == MPI_IN_PLACE, is_root = me == root;
    coll_nc_side_t ss = { (char *)sendbuf, NULL, NULL, sendcount, sendtype };
    coll_nc_side_t rs = { recvbuf, recvcounts, displs, recvcount, recvtype };
    coll_nc_pack_t sp = { 0 }, rp = { 0 };
    int err = coll_nc_prepare_sides(&ss, in_place ? 0 : 1, &sp, &rs, is_root ? n : 0, &rp);
    if (err) {
        coll_nc_release(&sp), coll_nc_release(&rp);
        return nc_fail(comm, err, fn);
    }
    if (!in_place)
        coll_nc_pack(&ss, 0, sp.packed, sp.boffs);
    else
        coll_nc_pack(&rs, root, rp.packed, rp.boffs);
    const void *sbuf = in_place ? MPI_IN_PLACE : sp.packed;
    int sbytes = in_place ? 0 : sp.bcounts[0];
    if (!recvcounts) /* the uniform form: the algorithm the other ranks run */
        err = PMPI_Gather(sbuf, sbytes, MPI_BYTE, rp.packed, is_root ? rp.bcounts[0] : 0, MPI_BYTE, root, comm);
    else if (is_root)
        err = PMPI_Gatherv(sbuf, sbytes, MPI_BYTE, rp.packed, rp.bcounts, rp.boffs, MPI_BYTE, root, comm);
    else
        err = PMPI_Gatherv(sbuf, sbytes, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, root, comm);
    if (!err && is_root)
        for (int i = 0; i < n; i++)
            coll_nc_unpack(&rs, i, rp.packed, rp.bcounts, rp.boffs);
    coll_nc_release(&sp), coll_nc_release(&rp);
    return err;
}

/* Scatter(v): the root packs every block; with MPI_IN_PLACE it keeps its own. */
int coll_nc_scatterv(const void *sendbuf, const int *sendcounts, int sendcount, const int *displs,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                     MPI_Comm comm, int me, int n)
{
    const char *fn = sendcounts ? "MPI_Scatterv" : "MPI_Scatter";
    bool in_place = recvbuf == MPI_IN_PLACE, is_root = me == root;
    coll_nc_side_t ss = { (char *)sendbuf, sendcounts, displs, sendcount, sendtype };
    coll_nc_side_t rs = { recvbuf, NULL, NULL, recvcount, recvtype };
    coll_nc_pack_t sp = { 0 }, rp = { 0 };
    int err = coll_nc_prepare_sides(&ss, is_root ? n : 0, &sp, &rs, in_place ? 0 : 1, &rp);
    if (err) {
        coll_nc_release(&sp), coll_nc_release(&rp);
        return nc_fail(comm, err, fn);
    }
    if (is_root)
        for (int i = 0; i < n; i++)
            if (!(in_place && i == root))
                coll_nc_pack(&ss, i, sp.packed, sp.boffs);
    void *rbuf = in_place ? MPI_IN_PLACE : rp.packed;
    int rbytes = in_place ? 0 : rp.bcounts[0];
    if (!sendcounts)
        err = PMPI_Scatter(sp.packed, is_root ? sp.bcounts[0] : 0, MPI_BYTE, rbuf, rbytes, MPI_BYTE, root, comm);
    else if (is_root)
        err = PMPI_Scatterv(sp.packed, sp.bcounts, sp.boffs, MPI_BYTE, rbuf, rbytes, MPI_BYTE, root, comm);
    else
        err = PMPI_Scatterv(NULL, NULL, NULL, MPI_BYTE, rbuf, rbytes, MPI_BYTE, root, comm);
    if (!err && !in_place)
        coll_nc_unpack(&rs, 0, rp.packed, rp.bcounts, rp.boffs);
    coll_nc_release(&sp), coll_nc_release(&rp);
    return err;
}

/* Allgather(v): with MPI_IN_PLACE a rank's own block is packed in place. */
int coll_nc_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int *recvcounts, int recvcount, const int *displs, MPI_Datatype recvtype,
                       MPI_Comm comm, int me, int n)
{
    const char *fn = recvcounts ? "MPI_Allgatherv" : "MPI_Allgather";
    bool in_place = sendbuf == MPI_IN_PLACE;
    coll_nc_side_t ss = { (char *)sendbuf, NULL, NULL, sendcount, sendtype };
    coll_nc_side_t rs = { recvbuf, recvcounts, displs, recvcount, recvtype };
    coll_nc_pack_t sp = { 0 }, rp = { 0 };
    int err = coll_nc_prepare_sides(&ss, in_place ? 0 : 1, &sp, &rs, n, &rp);
    if (err) {
        coll_nc_release(&sp), coll_nc_release(&rp);
        return nc_fail(comm, err, fn);
    }
    if (!in_place)
        coll_nc_pack(&ss, 0, sp.packed, sp.boffs);
    else
        coll_nc_pack(&rs, me, rp.packed, rp.boffs);
    const void *sbuf = in_place ? MPI_IN_PLACE : sp.packed;
    int sbytes = in_place ? 0 : sp.bcounts[0];
    if (!recvcounts)
        err = PMPI_Allgather(sbuf, sbytes, MPI_BYTE, rp.packed, rp.bcounts[0], MPI_BYTE, comm);
    else
        err = PMPI_Allgatherv(sbuf, sbytes, MPI_BYTE, rp.packed, rp.bcounts, rp.boffs, MPI_BYTE, comm);
    if (!err)
        for (int i = 0; i < n; i++)
            coll_nc_unpack(&rs, i, rp.packed, rp.bcounts, rp.boffs);
    coll_nc_release(&sp), coll_nc_release(&rp);
    return err;
}

/* Alltoall(v): with MPI_IN_PLACE the receive buffer is also what is sent. */
int coll_nc_alltoallv(const void *sendbuf, const int *sendcounts, int sendcount, const int *sdispls,
                      MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, int recvcount,
                      const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm, int n)
{
    const char *fn = recvcounts ? "MPI_Alltoallv" : "MPI_Alltoall";
    bool in_place = sendbuf == MPI_IN_PLACE;
    coll_nc_side_t ss = { (char *)sendbuf, sendcounts, sdispls, sendcount, sendtype };
    coll_nc_side_t rs = { recvbuf, recvcounts, rdispls, recvcount, recvtype };
    coll_nc_pack_t sp = { 0 }, rp = { 0 };
    int err = coll_nc_prepare_sides(&ss, in_place ? 0 : n, &sp, &rs, n, &rp);
    if (err) {
        coll_nc_release(&sp), coll_nc_release(&rp);
        return nc_fail(comm, err, fn);
    }
    for (int i = 0; i < n; i++) {
        if (in_place)
            coll_nc_pack(&rs, i, rp.packed, rp.boffs);
        else
            coll_nc_pack(&ss, i, sp.packed, sp.boffs);
    }
    if (!recvcounts)
        err = PMPI_Alltoall(in_place ? MPI_IN_PLACE : sp.packed, in_place ? 0 : sp.bcounts[0], MPI_BYTE, rp.packed,
                            rp.bcounts[0], MPI_BYTE, comm);
    else if (in_place)
        err = PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_BYTE, rp.packed, rp.bcounts, rp.boffs, MPI_BYTE, comm);
    else
        err = PMPI_Alltoallv(sp.packed, sp.bcounts, sp.boffs, MPI_BYTE, rp.packed, rp.bcounts, rp.boffs, MPI_BYTE,
                             comm);
    if (!err)
        for (int i = 0; i < n; i++)
            coll_nc_unpack(&rs, i, rp.packed, rp.bcounts, rp.boffs);
    coll_nc_release(&sp), coll_nc_release(&rp);
    return err;
}
