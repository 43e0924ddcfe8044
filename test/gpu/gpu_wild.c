/* gpu_wild.c - matching with device buffers: wildcards, order, probes,
 * matched probes, persistent requests, Waitany/Waitsome.
 *
 *   any source   every rank sends two messages (small, 256 KiB) from device
 *                memory to each root in turn, the root receives them with
 *                MPI_ANY_SOURCE/MPI_ANY_TAG into device memory and checks
 *                the sender, the tag order per sender and the data
 *   order        eight messages with one tag to the right neighbour, small
 *                and 4 MiB mixed, device and host mixed: received in send
 *                order, once into pre-posted receives and once after the
 *                sends (unexpected messages)
 *   probe        Probe/Iprobe, then a receive into a device buffer of the
 *                probed size
 *   mprobe       Mprobe/Mrecv, Improbe/Imrecv, also with MPI_ANY_SOURCE
 *   persistent   Send_init/Recv_init on device (and mixed) buffers over 20
 *                iterations with new data each time, Startall and Start
 *   waitany      receives from every rank into device buffers completed by
 *                Waitany, then by Waitsome; each checked when it completes
 * Phases are separated by barriers, so a wildcard receive only ever sees
 * messages of its own phase.
 */
#include "gputest.h"

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)

typedef struct {
    int rank, size;
    unsigned char *stage; /* pinned, STAGE_BYTES */
} ctx_t;

enum { STAGE_BYTES = 4 * 1024 * 1024 + 4096 };

static int left_of(const ctx_t *c) { return (c->rank + c->size - 1) % c->size; }
static int right_of(const ctx_t *c) { return (c->rank + 1) % c->size; }

/* Receive buffer of `n` bytes plus poisoned guard. */
static gt_buf recv_buf(size_t n, int dev)
{
    gt_buf b = gt_alloc(n + GT_GUARD, dev);
    gt_set(b, 0, GT_POISON, n + GT_GUARD);
    return b;
}

/* ---- any source ------------------------------------------------------------ */
enum { ANY_TAG0 = 100, ANY_MSGS = 2 };

static size_t any_size(int src, int j)
{
    return j == 0 ? 24 + (size_t)src : 256 * KiB + 8 * (size_t)src;
}

static int any_source(ctx_t *c)
{
    int errs = 0, me = c->rank, n = c->size;
    const size_t cap = any_size(n, 1);
    for (int root = 0; root < n; root++) {
        gt_buf sb[ANY_MSGS];
        MPI_Request sreq[ANY_MSGS];
        for (int j = 0; j < ANY_MSGS; j++) {
            size_t len = any_size(me, j);
            sb[j] = gt_alloc(len, 1);
            gt_fill(sb[j], len, gt_seed((uint64_t)me, (uint64_t)root, len,
                                        (uint64_t)j), c->stage);
            errs += GT_MPI(me, "any source send",
                           MPI_Isend(sb[j].p, (int)len, MPI_BYTE, root,
                                     ANY_TAG0 + j, MPI_COMM_WORLD, &sreq[j]));
        }
        if (me == root) {
            int *next = gt_zalloc((size_t)n * sizeof *next);
            gt_buf rb = recv_buf(cap, 1);
            for (int k = 0; k < n * ANY_MSGS; k++) {
                MPI_Status st;
                gt_set(rb, 0, GT_POISON, cap + GT_GUARD);
                int rc = MPI_Recv(rb.p, (int)cap, MPI_BYTE, MPI_ANY_SOURCE,
                                  MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                errs += gt_mpi_ok(me, rc, "MPI_Recv", "any source");
                if (rc != MPI_SUCCESS)
                    continue;
                int src = st.MPI_SOURCE, j = st.MPI_TAG - ANY_TAG0, cnt = -1;
                char what[120];
                snprintf(what, sizeof what, "any source: message %d of root %d "
                         "(source %d, tag %d)", k, root, src, st.MPI_TAG);
                if (src < 0 || src >= n || j < 0 || j >= ANY_MSGS) {
                    errs += gt_fail(me, "%s: no such sender or tag", what);
                    continue;
                }
                /* non-overtaking: a sender's messages match in send order */
                if (j != next[src])
                    errs += gt_fail(me, "%s: expected tag %d from it next", what,
                                    ANY_TAG0 + next[src]);
                next[src] = j + 1;
                size_t len = any_size(src, j);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                if (cnt != (int)len) {
                    errs += gt_fail(me, "%s: count %d, expected %zu", what, cnt,
                                    len);
                    continue;
                }
                errs += gt_verify(me, what, rb, len,
                                  gt_seed((uint64_t)src, (uint64_t)root, len,
                                          (uint64_t)j),
                                  cap - len + GT_GUARD, c->stage);
            }
            for (int s = 0; s < n; s++)
                if (next[s] != ANY_MSGS)
                    errs += gt_fail(me, "any source: root %d got %d messages "
                                    "from %d, expected %d", root, next[s], s,
                                    ANY_MSGS);
            gt_free(&rb);
            free(next);
        }
        errs += GT_MPI(me, "any source", MPI_Waitall(ANY_MSGS, sreq,
                                                     MPI_STATUSES_IGNORE));
        for (int j = 0; j < ANY_MSGS; j++)
            gt_free(&sb[j]);
    }
    return errs;
}

/* ---- order ----------------------------------------------------------------- */
enum { ORDER_MSGS = 8, ORDER_TAG = 150 };
static const size_t order_len[ORDER_MSGS] = {
    64, 4 * MiB, 8, 4 * MiB + 3, 1, 4 * MiB, 0, 4096};

/* Which messages go through host memory: sender and receiver differ, so
 * that host->device, device->host and device->device are interleaved. */
static int order_send_dev(int i) { return i % 3 != 2; }
static int order_recv_dev(int i) { return i % 4 != 3; }

static int order(ctx_t *c, int prepost)
{
    int errs = 0, me = c->rank, left = left_of(c), right = right_of(c);
    const size_t cap = 4 * MiB + 8;
    gt_buf sb[ORDER_MSGS], rb[ORDER_MSGS];
    MPI_Request sreq[ORDER_MSGS], rreq[ORDER_MSGS];
    MPI_Status st[ORDER_MSGS];
    uint64_t key = prepost ? 1000 : 2000;

    for (int i = 0; i < ORDER_MSGS; i++) {
        sb[i] = gt_alloc(order_len[i], order_send_dev(i));
        gt_fill(sb[i], order_len[i], gt_seed((uint64_t)me, (uint64_t)right,
                                             order_len[i], key + (uint64_t)i),
                c->stage);
        rb[i] = recv_buf(cap, order_recv_dev(i));
    }
    if (prepost)
        for (int i = 0; i < ORDER_MSGS; i++)
            errs += GT_MPI(me, "order", MPI_Irecv(rb[i].p, (int)cap, MPI_BYTE,
                                                  left, ORDER_TAG,
                                                  MPI_COMM_WORLD, &rreq[i]));
    /* the sends alternate between blocking and nonblocking; a blocking one
     * needs the receives pre-posted (or a nonblocking one in the other
     * variant) to complete when it is a large message to a waiting peer */
    for (int i = 0; i < ORDER_MSGS; i++) {
        if (prepost && i % 2 == 1) {
            errs += GT_MPI(me, "order", MPI_Send(sb[i].p, (int)order_len[i],
                                                 MPI_BYTE, right, ORDER_TAG,
                                                 MPI_COMM_WORLD));
            sreq[i] = MPI_REQUEST_NULL;
        } else {
            errs += GT_MPI(me, "order", MPI_Isend(sb[i].p, (int)order_len[i],
                                                  MPI_BYTE, right, ORDER_TAG,
                                                  MPI_COMM_WORLD, &sreq[i]));
        }
    }
    if (prepost) {
        errs += GT_MPI(me, "order", MPI_Waitall(ORDER_MSGS, rreq, st));
    } else {
        for (int i = 0; i < ORDER_MSGS; i++)
            errs += GT_MPI(me, "order", MPI_Recv(rb[i].p, (int)cap, MPI_BYTE,
                                                 left, ORDER_TAG,
                                                 MPI_COMM_WORLD, &st[i]));
    }
    for (int i = 0; i < ORDER_MSGS; i++) {
        char what[120];
        snprintf(what, sizeof what, "order (%s): message %d of %zu B %s->%s",
                 prepost ? "pre-posted" : "unexpected", i, order_len[i],
                 gt_kind(order_send_dev(i)), gt_kind(order_recv_dev(i)));
        int e = gt_check_status(me, what, &st[i], MPI_BYTE, left, ORDER_TAG,
                                (int)order_len[i]);
        if (e == 0)
            e = gt_verify(me, what, rb[i], order_len[i],
                          gt_seed((uint64_t)left, (uint64_t)me, order_len[i],
                                  key + (uint64_t)i),
                          cap - order_len[i] + GT_GUARD, c->stage);
        errs += e;
    }
    errs += GT_MPI(me, "order", MPI_Waitall(ORDER_MSGS, sreq,
                                            MPI_STATUSES_IGNORE));
    for (int i = 0; i < ORDER_MSGS; i++) {
        gt_free(&sb[i]);
        gt_free(&rb[i]);
    }
    return errs;
}

/* ---- probe and matched probe ------------------------------------------------- */
enum { PROBE_MSGS = 4, PROBE_TAG0 = 200, MPROBE_TAG0 = 300 };
static const size_t probe_len[PROBE_MSGS] = {40, 70000, 0, 4 * MiB + 5};

/* Send the PROBE_MSGS messages to the right neighbour (from device memory,
 * the third from host memory); the caller waits for sreq. */
static int probe_sends(ctx_t *c, int tag0, uint64_t key, gt_buf *sb,
                       MPI_Request *sreq)
{
    int errs = 0, me = c->rank, right = right_of(c);
    for (int i = 0; i < PROBE_MSGS; i++) {
        sb[i] = gt_alloc(probe_len[i], i != 2);
        gt_fill(sb[i], probe_len[i], gt_seed((uint64_t)me, (uint64_t)right,
                                             probe_len[i], key + (uint64_t)i),
                c->stage);
        errs += GT_MPI(me, "probe send",
                       MPI_Isend(sb[i].p, (int)probe_len[i], MPI_BYTE, right,
                                 tag0 + i, MPI_COMM_WORLD, &sreq[i]));
    }
    return errs;
}

/* Check a probe's status and return the probed byte count (or -1). */
static int probed(ctx_t *c, const char *what, const MPI_Status *st, int i,
                  int tag0)
{
    int left = left_of(c);
    if (gt_check_status(c->rank, what, st, MPI_BYTE, left, tag0 + i,
                        (int)probe_len[i]))
        return -1;
    return (int)probe_len[i];
}

static int probe(ctx_t *c)
{
    int errs = 0, me = c->rank, left = left_of(c);
    const uint64_t key = 3000;
    gt_buf sb[PROBE_MSGS];
    MPI_Request sreq[PROBE_MSGS];
    errs += probe_sends(c, PROBE_TAG0, key, sb, sreq);
    for (int i = 0; i < PROBE_MSGS; i++) {
        char what[100];
        MPI_Status st;
        snprintf(what, sizeof what, "%s message %d (%zu B)",
                 i % 2 ? "Iprobe" : "Probe", i, probe_len[i]);
        if (i % 2 == 0) {
            errs += GT_MPI(me, what, MPI_Probe(left, MPI_ANY_TAG,
                                               MPI_COMM_WORLD, &st));
        } else {
            int flag = 0;
            while (!flag) {
                int rc = MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                                    &st);
                if (gt_mpi_ok(me, rc, "MPI_Iprobe", what))
                    return errs + 1;
            }
        }
        /* probes see messages in send order, so the tag tells which */
        int n = probed(c, what, &st, i, PROBE_TAG0);
        if (n < 0) {
            errs++;
            n = (int)probe_len[i];
        }
        gt_buf rb = recv_buf((size_t)n, 1);
        MPI_Status rst;
        int rc = MPI_Recv(rb.p, n, MPI_BYTE, left, st.MPI_TAG, MPI_COMM_WORLD,
                          &rst);
        errs += gt_mpi_ok(me, rc, "MPI_Recv", what);
        if (rc == MPI_SUCCESS &&
            !gt_check_status(me, what, &rst, MPI_BYTE, left, PROBE_TAG0 + i, n))
            errs += gt_verify(me, what, rb, (size_t)n,
                              gt_seed((uint64_t)left, (uint64_t)me,
                                      (uint64_t)n, key + (uint64_t)i),
                              GT_GUARD, c->stage);
        gt_free(&rb);
    }
    errs += GT_MPI(me, "probe", MPI_Waitall(PROBE_MSGS, sreq,
                                            MPI_STATUSES_IGNORE));
    for (int i = 0; i < PROBE_MSGS; i++)
        gt_free(&sb[i]);
    return errs;
}

static int mprobe(ctx_t *c)
{
    int errs = 0, me = c->rank, left = left_of(c);
    const uint64_t key = 4000;
    gt_buf sb[PROBE_MSGS];
    MPI_Request sreq[PROBE_MSGS];
    static const char *const how[PROBE_MSGS] = {
        "Mprobe(left, ANY_TAG)/Mrecv", "Improbe(left, ANY_TAG)/Imrecv",
        "Mprobe(ANY_SOURCE, tag)/Imrecv", "Improbe(ANY_SOURCE, ANY_TAG)/Mrecv"};
    errs += probe_sends(c, MPROBE_TAG0, key, sb, sreq);
    for (int i = 0; i < PROBE_MSGS; i++) {
        char what[120];
        snprintf(what, sizeof what, "%s message %d (%zu B)", how[i], i,
                 probe_len[i]);
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int src = i < 2 ? left : MPI_ANY_SOURCE;
        int tag = i == 2 ? MPROBE_TAG0 + i : MPI_ANY_TAG;
        if (i % 2 == 0) {
            errs += GT_MPI(me, what, MPI_Mprobe(src, tag, MPI_COMM_WORLD, &msg,
                                                &st));
        } else {
            int flag = 0;
            while (!flag) {
                int rc = MPI_Improbe(src, tag, MPI_COMM_WORLD, &flag, &msg, &st);
                if (gt_mpi_ok(me, rc, "MPI_Improbe", what))
                    return errs + 1;
            }
        }
        int n = probed(c, what, &st, i, MPROBE_TAG0);
        if (n < 0 || msg == MPI_MESSAGE_NULL) {
            /* without the right message handle nothing more can be checked */
            return errs + 1 + gt_fail(me, "%s: no usable message", what);
        }
        gt_buf rb = recv_buf((size_t)n, 1);
        MPI_Status rst;
        int rc;
        if (i == 0 || i == 3) {
            rc = MPI_Mrecv(rb.p, n, MPI_BYTE, &msg, &rst);
        } else {
            MPI_Request req;
            rc = MPI_Imrecv(rb.p, n, MPI_BYTE, &msg, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, &rst);
        }
        errs += gt_mpi_ok(me, rc, "matched receive", what);
        if (msg != MPI_MESSAGE_NULL)
            errs += gt_fail(me, "%s: message handle not MPI_MESSAGE_NULL after "
                            "the receive", what);
        if (rc == MPI_SUCCESS &&
            !gt_check_status(me, what, &rst, MPI_BYTE, left, MPROBE_TAG0 + i, n))
            errs += gt_verify(me, what, rb, (size_t)n,
                              gt_seed((uint64_t)left, (uint64_t)me,
                                      (uint64_t)n, key + (uint64_t)i),
                              GT_GUARD, c->stage);
        gt_free(&rb);
    }
    errs += GT_MPI(me, "mprobe", MPI_Waitall(PROBE_MSGS, sreq,
                                             MPI_STATUSES_IGNORE));
    for (int i = 0; i < PROBE_MSGS; i++)
        gt_free(&sb[i]);
    return errs;
}

/* ---- persistent ------------------------------------------------------------- */
enum { PERS_CH = 4, PERS_ITERS = 20, PERS_TAG0 = 400 };
/* channel: bytes, send buffer on device?, receive buffer on device? */
static const struct {
    size_t len;
    int send_dev, recv_dev;
} pers_ch[PERS_CH] = {{64, 1, 1}, {1 * MiB, 1, 1}, {4097, 0, 1}, {70000, 1, 0}};

static int persistent(ctx_t *c)
{
    int errs = 0, me = c->rank, left = left_of(c), right = right_of(c);
    gt_buf sb[PERS_CH], rb[PERS_CH];
    MPI_Request req[2 * PERS_CH]; /* receives, then sends */
    for (int k = 0; k < PERS_CH; k++) {
        int n = (int)pers_ch[k].len;
        sb[k] = gt_alloc(pers_ch[k].len, pers_ch[k].send_dev);
        rb[k] = recv_buf(pers_ch[k].len, pers_ch[k].recv_dev);
        errs += GT_MPI(me, "Recv_init", MPI_Recv_init(rb[k].p, n, MPI_BYTE,
                                                      left, PERS_TAG0 + k,
                                                      MPI_COMM_WORLD, &req[k]));
        errs += GT_MPI(me, "Send_init",
                       MPI_Send_init(sb[k].p, n, MPI_BYTE, right, PERS_TAG0 + k,
                                     MPI_COMM_WORLD, &req[PERS_CH + k]));
    }
    if (errs)
        return errs;
    for (int it = 0; it < PERS_ITERS && errs == 0; it++) {
        for (int k = 0; k < PERS_CH; k++) {
            gt_fill(sb[k], pers_ch[k].len,
                    gt_seed((uint64_t)me, (uint64_t)right, (uint64_t)k,
                            5000 + (uint64_t)it), c->stage);
            gt_set(rb[k], 0, GT_POISON, pers_ch[k].len + GT_GUARD);
        }
        MPI_Status st[2 * PERS_CH];
        if (it % 2 == 0) {
            errs += GT_MPI(me, "Startall", MPI_Startall(PERS_CH, req));
            errs += GT_MPI(me, "Startall", MPI_Startall(PERS_CH, req + PERS_CH));
            errs += GT_MPI(me, "Waitall", MPI_Waitall(2 * PERS_CH, req, st));
        } else {
            for (int k = 0; k < 2 * PERS_CH; k++)
                errs += GT_MPI(me, "Start", MPI_Start(&req[k]));
            for (int k = 2 * PERS_CH - 1; k >= 0; k--)
                errs += GT_MPI(me, "Wait", MPI_Wait(&req[k], &st[k]));
        }
        for (int k = 0; k < PERS_CH && errs == 0; k++) {
            char what[120];
            snprintf(what, sizeof what, "persistent iteration %d, %zu B %s->%s",
                     it, pers_ch[k].len, gt_kind(pers_ch[k].send_dev),
                     gt_kind(pers_ch[k].recv_dev));
            errs += gt_check_status(me, what, &st[k], MPI_BYTE, left,
                                    PERS_TAG0 + k, (int)pers_ch[k].len);
            errs += gt_verify(me, what, rb[k], pers_ch[k].len,
                              gt_seed((uint64_t)left, (uint64_t)me,
                                      (uint64_t)k, 5000 + (uint64_t)it),
                              GT_GUARD, c->stage);
        }
    }
    for (int k = 0; k < 2 * PERS_CH; k++)
        errs += GT_MPI(me, "Request_free", MPI_Request_free(&req[k]));
    for (int k = 0; k < PERS_CH; k++) {
        gt_free(&sb[k]);
        gt_free(&rb[k]);
    }
    return errs;
}

/* ---- Waitany / Waitsome ----------------------------------------------------- */
static size_t wait_len(int src, int dst)
{
    /* one large message from every third pair, distinct sizes elsewhere */
    if ((src + 2 * dst) % 3 == 0)
        return 1 * MiB + (size_t)src;
    return 1000 * (size_t)src + 37 * (size_t)dst + 5;
}

static int check_wait_recv(ctx_t *c, const char *how, int idx,
                           const MPI_Status *st, gt_buf rb, uint64_t key)
{
    char what[100];
    int me = c->rank;
    size_t len = wait_len(idx, me);
    snprintf(what, sizeof what, "%s: receive from %d (%zu B)", how, idx, len);
    if (gt_check_status(me, what, st, MPI_BYTE, idx, 600, (int)len))
        return 1;
    return gt_verify(me, what, rb, len,
                     gt_seed((uint64_t)idx, (uint64_t)me, len, key), GT_GUARD,
                     c->stage);
}

static int wait_some_any(ctx_t *c, int use_some)
{
    int errs = 0, me = c->rank, n = c->size;
    const char *how = use_some ? "Waitsome" : "Waitany";
    const uint64_t key = use_some ? 6001 : 6000;
    gt_buf *sb = gt_malloc((size_t)n * sizeof *sb);
    gt_buf *rb = gt_malloc((size_t)n * sizeof *rb);
    MPI_Request *rreq = gt_malloc((size_t)n * sizeof *rreq);
    MPI_Request *sreq = gt_malloc((size_t)n * sizeof *sreq);
    MPI_Status *st = gt_malloc((size_t)n * sizeof *st);
    int *idx = gt_malloc((size_t)n * sizeof *idx);
    int *done = gt_zalloc((size_t)n * sizeof *done);

    for (int p = 0; p < n; p++) {
        rb[p] = recv_buf(wait_len(p, me), 1);
        errs += GT_MPI(me, how, MPI_Irecv(rb[p].p, (int)wait_len(p, me),
                                          MPI_BYTE, p, 600, MPI_COMM_WORLD,
                                          &rreq[p]));
    }
    for (int p = 0; p < n; p++) {
        size_t len = wait_len(me, p);
        sb[p] = gt_alloc(len, 1);
        gt_fill(sb[p], len, gt_seed((uint64_t)me, (uint64_t)p, len, key),
                c->stage);
        errs += GT_MPI(me, how, MPI_Isend(sb[p].p, (int)len, MPI_BYTE, p, 600,
                                          MPI_COMM_WORLD, &sreq[p]));
    }
    /* each receive is checked as soon as it is reported complete: its data
     * must be in device memory by then */
    for (int got = 0; got < n && errs == 0;) {
        int count = 0;
        if (use_some) {
            errs += GT_MPI(me, how, MPI_Waitsome(n, rreq, &count, idx, st));
        } else {
            count = 1;
            errs += GT_MPI(me, how, MPI_Waitany(n, rreq, &idx[0], &st[0]));
        }
        if (errs)
            break;
        if (count < 1 || count > n - got) {
            errs += gt_fail(me, "%s: %d completed with %d of %d open", how,
                            count, n - got, n);
            break;
        }
        for (int k = 0; k < count; k++) {
            int p = idx[k];
            if (p < 0 || p >= n || done[p]) {
                errs += gt_fail(me, "%s: index %d reported (again?)", how, p);
                continue;
            }
            if (rreq[p] != MPI_REQUEST_NULL)
                errs += gt_fail(me, "%s: completed request %d not set to "
                                "MPI_REQUEST_NULL", how, p);
            done[p] = 1;
            errs += check_wait_recv(c, how, p, &st[k], rb[p], key);
        }
        got += count;
    }
    if (errs == 0) {
        /* all requests are now null: the "nothing active" answers */
        int i = 0, count = 0;
        errs += GT_MPI(me, how, MPI_Waitany(n, rreq, &i, MPI_STATUS_IGNORE));
        if (i != MPI_UNDEFINED)
            errs += gt_fail(me, "%s: Waitany on null requests gave index %d, "
                            "expected MPI_UNDEFINED", how, i);
        errs += GT_MPI(me, how, MPI_Waitsome(n, rreq, &count, idx,
                                             MPI_STATUSES_IGNORE));
        if (count != MPI_UNDEFINED)
            errs += gt_fail(me, "%s: Waitsome on null requests gave %d, "
                            "expected MPI_UNDEFINED", how, count);
    }
    if (use_some) {
        for (int left = n; left > 0 && errs == 0;) {
            int count = 0;
            errs += GT_MPI(me, how, MPI_Waitsome(n, sreq, &count, idx,
                                                 MPI_STATUSES_IGNORE));
            if (count < 1 || count > left)
                errs += gt_fail(me, "%s: %d sends completed with %d open", how,
                                count, left);
            left -= count;
        }
    }
    if (errs) /* the receives may still be active: nothing is freed */
        return errs;
    errs += GT_MPI(me, how, MPI_Waitall(n, sreq, MPI_STATUSES_IGNORE));
    for (int p = 0; p < n; p++) {
        gt_free(&sb[p]);
        gt_free(&rb[p]);
    }
    free(sb);
    free(rb);
    free(rreq);
    free(sreq);
    free(st);
    free(idx);
    free(done);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    gt_init(&argc, &argv, &rank, &size);
    ctx_t c = {.rank = rank, .size = size};
    GT_CUDA(cudaMallocHost((void **)&c.stage, STAGE_BYTES));

    static const char *const phase[] = {"any source", "order (pre-posted)",
                                        "order (unexpected)", "probe",
                                        "mprobe", "persistent", "Waitany",
                                        "Waitsome"};
    for (int ph = 0; ph < (int)(sizeof phase / sizeof phase[0]); ph++) {
        int e = 0;
        switch (ph) {
        case 0: e = any_source(&c); break;
        case 1: e = order(&c, 1); break;
        case 2: e = order(&c, 0); break;
        case 3: e = probe(&c); break;
        case 4: e = mprobe(&c); break;
        case 5: e = persistent(&c); break;
        case 6: e = wait_some_any(&c, 0); break;
        default: e = wait_some_any(&c, 1); break;
        }
        errs += e;
        /* a failed phase may leave messages behind for the next one's
         * wildcard receives: stop at the first */
        int all = 0;
        MPI_Allreduce(&e, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (all) {
            if (rank == 0)
                gt_note("gpu_wild: stopping after the failed phase %s",
                        phase[ph]);
            break;
        }
        if (rank == 0)
            gt_note("gpu_wild: %s done", phase[ph]);
    }
    GT_CUDA(cudaFreeHost(c.stage));
    return gt_finish(rank, errs, "gpu_wild");
}
