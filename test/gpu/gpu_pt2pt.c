/* gpu_pt2pt.c - point-to-point transfers with CUDA device buffers.
 *
 * Every pair of ranks (i < j, both directions) and every rank with itself
 * exchanges messages whose send and receive buffers are device or host
 * memory (placements DD, DH, HD and the host-only control HH), sizes 0 B to
 * 64 MiB (to 1 MiB with more than 4 ranks), with Send, Ssend, Bsend (host
 * attach buffer, device send buffer), Isend/Irecv, Sendrecv and
 * Sendrecv_replace.  Every received byte is compared with a pattern of
 * (source, destination, size, case index); the bytes after the message are
 * checked to be untouched.  Each pair also receives too-long messages into a
 * device buffer: MPI_ERR_TRUNCATE, nothing written past the posted count,
 * and the pair still works afterwards.
 *
 * Pairs run in rounds of a round-robin tournament so that all ranks are
 * busy at once; both ranks of a pair walk the same list of cases, so each
 * message is matched by (source, tag) without any extra synchronisation.
 */
#include "gputest.h"

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)

enum mode { M_SEND, M_SSEND, M_BSEND, M_ISEND, M_SENDRECV, M_REPLACE, M_COUNT };
static const char *const mode_name[M_COUNT] = {
    "Send", "Ssend", "Bsend", "Isend/Irecv", "Sendrecv", "Sendrecv_replace"};

typedef struct {
    int send_dev, recv_dev; /* 1: device buffer, 0: host buffer */
    const char *name;
} placement;
static const placement placements[] = {
    {1, 1, "DD"}, {1, 0, "DH"}, {0, 1, "HD"}, {0, 0, "HH"}};

static const size_t all_sizes[] = {0,       1,       8,       4095,    4096,
                                   65536,   1 * MiB, 4 * MiB, 64 * MiB};

typedef struct {
    int rank, size;
    size_t max;           /* largest message of this run */
    gt_buf sbuf[2];       /* send buffers: [0] host, [1] device */
    gt_buf rbuf[2];       /* receive buffers, room for a message + slack + guard */
    unsigned char *stage; /* pinned host copy of a device buffer */
    int packs_device;     /* Bsend/Sendrecv_replace may use device memory */
    int verbose;
} ctx_t;

/* How a message of n bytes is described to MPI: MPI_DOUBLE where allowed and
 * n is a multiple of 8 (a second datatype through the same paths), else
 * MPI_BYTE.  `room` is the receive count: larger than the message by a
 * sixteenth where the receiver may post more than is sent. */
typedef struct {
    MPI_Datatype type;
    size_t esize;
    int count, room;
} shape_t;

static shape_t shape_of(size_t n, int wide, int slack)
{
    shape_t s = {MPI_BYTE, 1, 0, 0};
    if (wide && n % 8 == 0) {
        s.type = MPI_DOUBLE;
        s.esize = 8;
    }
    s.count = (int)(n / s.esize);
    s.room = slack ? s.count + s.count / 16 + 1 : s.count;
    return s;
}

/* Bytes a receive buffer needs for any message of this run. */
static size_t room_bytes(size_t max) { return max + max / 16 + 8 + GT_GUARD; }

/* Poison the receive area (posted room plus guard) before a receive. */
static void prepare_recv(gt_buf b, shape_t s)
{
    gt_set(b, 0, GT_POISON, (size_t)s.room * s.esize + GT_GUARD);
}

static int check_recv(ctx_t *c, const char *what, gt_buf b, const MPI_Status *st,
                      int src, int tag, shape_t s, uint64_t seed)
{
    size_t n = (size_t)s.count * s.esize;
    size_t after = (size_t)s.room * s.esize - n + GT_GUARD;
    int errs = gt_check_status(c->rank, what, st, s.type, src, tag, s.count);
    return errs + gt_verify(c->rank, what, b, n, seed, after, c->stage);
}

static int tag_of(uint32_t key) { return (int)(key % GT_TAG_MAX); }

/* One message src -> dst with a blocking send mode; the receiver posts a
 * blocking receive.  With src == dst (Bsend only) the send comes first. */
static int one_way(ctx_t *c, int mode, const placement *pl, size_t n, int src,
                   int dst, uint32_t key)
{
    int errs = 0, me = c->rank, tag = tag_of(key);
    uint64_t seed = gt_seed((uint64_t)src, (uint64_t)dst, n, key);
    char what[160];
    snprintf(what, sizeof what, "%s %s %zu B %d->%d", mode_name[mode],
             pl->name, n, src, dst);
    shape_t s = shape_of(n, 0, mode != M_SSEND);

    if (me == src) {
        gt_buf b = c->sbuf[pl->send_dev];
        gt_fill(b, n, seed, c->stage);
        int rc;
        if (mode == M_SEND)
            rc = MPI_Send(b.p, s.count, s.type, dst, tag, MPI_COMM_WORLD);
        else if (mode == M_SSEND)
            rc = MPI_Ssend(b.p, s.count, s.type, dst, tag, MPI_COMM_WORLD);
        else
            rc = MPI_Bsend(b.p, s.count, s.type, dst, tag, MPI_COMM_WORLD);
        errs += gt_mpi_ok(me, rc, mode_name[mode], what);
        /* The buffer is the caller's again: overwrite it, so that a library
         * still reading it (e.g. Bsend not having copied yet) delivers
         * wrong data. */
        gt_set(b, 0, 0x5A, n);
    }
    if (me == dst) {
        gt_buf b = c->rbuf[pl->recv_dev];
        MPI_Status st;
        prepare_recv(b, s);
        int rc = MPI_Recv(b.p, s.room, s.type, src, tag, MPI_COMM_WORLD, &st);
        errs += gt_mpi_ok(me, rc, "MPI_Recv", what);
        if (rc == MPI_SUCCESS)
            errs += check_recv(c, what, b, &st, src, tag, s, seed);
    }
    return errs;
}

/* Both ranks send to each other at once (Isend/Irecv or Sendrecv) from a
 * send buffer of the placement's send kind into one of its receive kind. */
static int exchange(ctx_t *c, int mode, const placement *pl, size_t n,
                    int peer, uint32_t key)
{
    int errs = 0, me = c->rank, tag = tag_of(key), rc;
    uint64_t out = gt_seed((uint64_t)me, (uint64_t)peer, n, key);
    uint64_t in = gt_seed((uint64_t)peer, (uint64_t)me, n, key);
    char what[160];
    snprintf(what, sizeof what, "%s %s %zu B %d<->%d", mode_name[mode],
             pl->name, n, me, peer);
    shape_t s = shape_of(n, mode == M_ISEND, 1);
    gt_buf sb = c->sbuf[pl->send_dev], rb = c->rbuf[pl->recv_dev];
    MPI_Status st;

    gt_fill(sb, n, out, c->stage);
    prepare_recv(rb, s);
    if (mode == M_ISEND) {
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Status sts[2];
        /* alternate which is posted first: a send before its matching
         * receive exists takes the unexpected-message path */
        int r = (int)(key & 1), w = 1 - r; /* indices of receive, send */
        if (r == 0)
            errs += GT_MPI(me, what, MPI_Irecv(rb.p, s.room, s.type, peer, tag,
                                               MPI_COMM_WORLD, &req[r]));
        errs += GT_MPI(me, what, MPI_Isend(sb.p, s.count, s.type, peer, tag,
                                           MPI_COMM_WORLD, &req[w]));
        if (r == 1)
            errs += GT_MPI(me, what, MPI_Irecv(rb.p, s.room, s.type, peer, tag,
                                               MPI_COMM_WORLD, &req[r]));
        rc = MPI_Waitall(2, req, sts);
        errs += gt_mpi_ok(me, rc, "MPI_Waitall", what);
        st = sts[r];
    } else {
        rc = MPI_Sendrecv(sb.p, s.count, s.type, peer, tag, rb.p, s.room,
                          s.type, peer, tag, MPI_COMM_WORLD, &st);
        errs += gt_mpi_ok(me, rc, "MPI_Sendrecv", what);
    }
    if (rc == MPI_SUCCESS)
        errs += check_recv(c, what, rb, &st, peer, tag, s, in);
    return errs;
}

/* Sendrecv_replace: the lower rank's buffer is of the placement's send
 * kind, the higher rank's of its receive kind (a rank with itself: send
 * kind), so DH and HD also cover device <-> host in both directions. */
static int replace(ctx_t *c, const placement *pl, size_t n, int lo, int hi,
                   uint32_t key)
{
    int me = c->rank, peer = me == lo ? hi : lo, tag = tag_of(key);
    int dev = me == lo ? pl->send_dev : pl->recv_dev;
    uint64_t out = gt_seed((uint64_t)me, (uint64_t)peer, n, key);
    uint64_t in = gt_seed((uint64_t)peer, (uint64_t)me, n, key);
    char what[160];
    snprintf(what, sizeof what, "Sendrecv_replace %s buffer %zu B %d<->%d",
             gt_kind(dev), n, me, peer);
    shape_t s = shape_of(n, 0, 0);
    gt_buf b = c->rbuf[dev];
    MPI_Status st;

    gt_set(b, n, GT_POISON, GT_GUARD);
    gt_fill(b, n, out, c->stage);
    int rc = MPI_Sendrecv_replace(b.p, s.count, s.type, peer, tag, peer, tag,
                                  MPI_COMM_WORLD, &st);
    int errs = gt_mpi_ok(me, rc, "MPI_Sendrecv_replace", what);
    if (rc == MPI_SUCCESS)
        errs += check_recv(c, what, b, &st, peer, tag, s, in);
    return errs;
}

/* Whether a case runs; must give the same answer on both ranks of a pair. */
static int case_runs(const ctx_t *c, int mode, const placement *pl, int self)
{
    /* a blocking send to oneself may wait for the receive that follows it */
    if (self && (mode == M_SEND || mode == M_SSEND))
        return 0;
    if (!c->packs_device && mode == M_BSEND && pl->send_dev)
        return 0;
    if (!c->packs_device && mode == M_REPLACE && (pl->send_dev || pl->recv_dev))
        return 0;
    return 1;
}

/* Receive a too-long message into a device buffer: MPI_ERR_TRUNCATE and the
 * bytes past the posted count untouched (the first `room` bytes are
 * undefined).  The sender then sends a normal message that must arrive. */
static int truncated(ctx_t *c, int src, int dst, int send_dev, size_t n,
                     size_t room, int nonblocking, uint32_t key)
{
    int errs = 0, me = c->rank, tag = tag_of(key), rc;
    const size_t follow = 4096;
    uint64_t seed = gt_seed((uint64_t)src, (uint64_t)dst, n, key);
    uint64_t seed2 = gt_seed((uint64_t)src, (uint64_t)dst, follow, key + 1);
    char what[160];
    snprintf(what, sizeof what, "%s of %zu B from %s into %zu B device %d->%d",
             nonblocking ? "Irecv+Wait" : "Recv", n, gt_kind(send_dev), room,
             src, dst);
    gt_buf sb = c->sbuf[send_dev], rb = c->rbuf[1];
    MPI_Request sreq = MPI_REQUEST_NULL;
    MPI_Status st;

    /* nonblocking sends, so that a rank can also truncate its own message */
    if (me == src) {
        gt_fill(sb, n, seed, c->stage);
        errs += GT_MPI(me, what, MPI_Isend(sb.p, (int)n, MPI_BYTE, dst, tag,
                                           MPI_COMM_WORLD, &sreq));
        if (src != dst)
            errs += GT_MPI(me, what, MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    if (me == dst) {
        gt_set(rb, 0, GT_POISON, room + GT_GUARD);
        if (nonblocking) {
            MPI_Request rreq;
            rc = MPI_Irecv(rb.p, (int)room, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                           &rreq);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&rreq, &st);
        } else {
            rc = MPI_Recv(rb.p, (int)room, MPI_BYTE, src, tag, MPI_COMM_WORLD,
                          &st);
        }
        int cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (rc == MPI_SUCCESS)
            errs += gt_fail(me, "%s: succeeded, expected MPI_ERR_TRUNCATE", what);
        else if (cls != MPI_ERR_TRUNCATE)
            errs += gt_fail(me, "%s: error class %d, expected MPI_ERR_TRUNCATE "
                            "(%d)", what, cls, MPI_ERR_TRUNCATE);
        const unsigned char *h = gt_get(rb, room, GT_GUARD, c->stage);
        long bad = gt_bytes_diff(h, GT_GUARD, GT_POISON);
        if (bad >= 0)
            errs += gt_fail(me, "%s: byte %ld past the posted count was "
                            "overwritten", what, bad);
    }
    if (me == src && src == dst)
        errs += GT_MPI(me, what, MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* the pair (and the receive buffer) must still work */
    if (me == src) {
        gt_fill(sb, follow, seed2, c->stage);
        errs += GT_MPI(me, what, MPI_Isend(sb.p, (int)follow, MPI_BYTE, dst, tag,
                                           MPI_COMM_WORLD, &sreq));
    }
    if (me == dst) {
        char what2[200];
        snprintf(what2, sizeof what2, "message after %s", what);
        shape_t s = shape_of(follow, 0, 0);
        prepare_recv(rb, s);
        rc = MPI_Recv(rb.p, s.room, s.type, src, tag, MPI_COMM_WORLD, &st);
        errs += gt_mpi_ok(me, rc, "MPI_Recv", what2);
        if (rc == MPI_SUCCESS)
            errs += check_recv(c, what2, rb, &st, src, tag, s, seed2);
    }
    if (me == src)
        errs += GT_MPI(me, what, MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    return errs;
}

static int truncation_cases(ctx_t *c, int lo, int hi, uint32_t *key)
{
    static const size_t len[2][2] = {{16, 8}, {1 * MiB, 64 * KiB}};
    int errs = 0;
    for (int big = 0; big < 2; big++) {
        if (len[big][0] > c->max)
            continue;
        for (int send_dev = 1; send_dev >= 0; send_dev--)
            for (int nb = 0; nb < 2; nb++)
                for (int dir = 0; dir < (lo == hi ? 1 : 2); dir++) {
                    *key += 2;
                    errs += truncated(c, dir ? hi : lo, dir ? lo : hi,
                                      send_dev, len[big][0], len[big][1], nb,
                                      *key);
                }
    }
    return errs;
}

/* All cases between lo and hi (lo == hi: a rank with itself). */
static int pair_cases(ctx_t *c, int lo, int hi)
{
    int errs = 0, me = c->rank, peer = me == lo ? hi : lo, self = lo == hi;
    uint32_t key = 0;
    for (size_t p = 0; p < sizeof placements / sizeof placements[0]; p++) {
        const placement *pl = &placements[p];
        for (size_t i = 0; i < sizeof all_sizes / sizeof all_sizes[0]; i++) {
            size_t n = all_sizes[i];
            if (n > c->max)
                continue;
            for (int mode = 0; mode < M_COUNT; mode++) {
                if (!case_runs(c, mode, pl, self))
                    continue;
                key++;
                if (c->verbose)
                    gt_note("rank %d: %s %s %zu B with %d", me,
                            mode_name[mode], pl->name, n, peer);
                switch (mode) {
                case M_SEND:
                case M_SSEND:
                case M_BSEND:
                    errs += one_way(c, mode, pl, n, lo, hi, key);
                    if (!self)
                        errs += one_way(c, mode, pl, n, hi, lo, key);
                    break;
                case M_ISEND:
                case M_SENDRECV:
                    errs += exchange(c, mode, pl, n, peer, key);
                    break;
                default:
                    errs += replace(c, pl, n, lo, hi, key);
                    break;
                }
            }
        }
    }
    return errs + truncation_cases(c, lo, hi, &key);
}

/* Round-robin tournament (circle method) over m = n rounded up to even
 * players: in round r player i < m-1 meets (r - i) mod (m-1), or player m-1
 * when that is i itself.  A partner >= n (the padding player) means a rest. */
static int partner(int i, int n, int r)
{
    int m = n + (n & 1), k = m - 1, p = -1;
    if (i < k) {
        p = ((r - i) % k + k) % k;
        if (p == i)
            p = k;
    } else {
        for (int j = 0; j < k; j++)
            if (((r - j) % k + k) % k == j)
                p = j;
    }
    return p < n ? p : -1;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    gt_init(&argc, &argv, &rank, &size);
    double t0 = MPI_Wtime();

    ctx_t c = {.rank = rank, .size = size};
    c.max = gt_max_bytes(size > 4 ? 1 * MiB : 64 * MiB);
    c.packs_device = gt_packs_device();
    const char *v = getenv("GPU_TEST_VERBOSE");
    c.verbose = v && *v && strcmp(v, "0") != 0;
    size_t cap = room_bytes(c.max);
    for (int d = 0; d < 2; d++) {
        c.sbuf[d] = gt_alloc(cap, d);
        c.rbuf[d] = gt_alloc(cap, d);
    }
    GT_CUDA(cudaMallocHost((void **)&c.stage, cap));
    /* room for two messages: the space of a buffered send that the peer has
     * received may be released only at a later progress call */
    int attach_size = (int)(2 * (c.max + MPI_BSEND_OVERHEAD) + 4096);
    void *attach = gt_malloc((size_t)attach_size);
    errs += GT_MPI(rank, "setup", MPI_Buffer_attach(attach, attach_size));
    if (rank == 0 && !c.packs_device)
        gt_note("gpu_pt2pt: this MPI does not copy device memory in its "
                "datatype engine: Bsend from and Sendrecv_replace on device "
                "buffers skipped");

    errs += pair_cases(&c, rank, rank);
    int m = size + (size & 1);
    for (int r = 0; r < m - 1; r++) {
        if (rank == 0)
            gt_note("gpu_pt2pt: round %d of %d (%.1f s)", r + 1, m - 1,
                    MPI_Wtime() - t0);
        int p = partner(rank, size, r);
        if (p >= 0)
            errs += pair_cases(&c, rank < p ? rank : p, rank < p ? p : rank);
    }

    void *detached = NULL;
    int detached_size = 0;
    errs += GT_MPI(rank, "end", MPI_Buffer_detach(&detached, &detached_size));
    free(attach);
    GT_CUDA(cudaFreeHost(c.stage));
    for (int d = 0; d < 2; d++) {
        gt_free(&c.sbuf[d]);
        gt_free(&c.rbuf[d]);
    }
    if (rank == 0)
        gt_note("gpu_pt2pt: %d ranks, messages up to %zu B, %.1f s", size,
                c.max, MPI_Wtime() - t0);
    return gt_finish(rank, errs, "gpu_pt2pt");
}
