/* persist_wild.c - persistent receives with wildcards.
 *
 * Part 1: every rank (rank 0 too, as a self-send) sends ROUNDS messages of
 * varying length and tag to rank 0, which receives them all through ONE
 * persistent MPI_Recv_init(MPI_ANY_SOURCE, MPI_ANY_TAG) request, started
 * again for each message.  The status of each completion must name the true
 * source, tag and count, the data must be that message's, and per source the
 * rounds must come in order (non-overtaking).  Half of the rounds post the
 * receive before the sends (a barrier between), half after them.
 * Part 2: in a ring, each rank receives from its left neighbour through two
 * persistent requests started together with MPI_Startall: one with
 * (left, MPI_ANY_TAG), one with (MPI_ANY_SOURCE, a fixed tag), and checks
 * which message each one matched. */
#include "mpitest.h"

enum { ROUNDS = 4, MAXN = 64, TAG_BASE = 200, RING_TAG_A = 300, RING_TAG_B = 301 };

static int msg_count(int src, int round) { return 1 + (src * 7 + round * 13) % MAXN; }
static int msg_tag(int src, int round) { return TAG_BASE + (src % 16) * ROUNDS + round; }

static void clear(int *buf)
{
    for (int i = 0; i < MAXN; i++)
        buf[i] = -1;
}

/* Rank 0: take this round's message of every rank, from any source, with
 * the request already started for the first one when `started`. */
static int gather_round(int size, int round, int started, MPI_Request *req, int *buf, int *next)
{
    int errs = 0;
    for (int k = 0; k < size; k++) {
        MPI_Status st;
        if (k > 0 || !started) {
            clear(buf);
            MPI_Start(req);
        }
        MPI_Wait(req, &st);
        int src = st.MPI_SOURCE, got = -1;
        if (src < 0 || src >= size) {
            errs += mt_fail(0, "round %d: status source %d out of range", round, src);
            continue;
        }
        int r = next[src]++;
        MPI_Get_count(&st, MPI_INT, &got);
        if (r != round)
            errs += mt_fail(0, "from %d: round %d arrived in round %d", src, r, round);
        if (st.MPI_TAG != msg_tag(src, r))
            errs += mt_fail(0, "from %d round %d: status tag %d, expected %d", src, r, st.MPI_TAG, msg_tag(src, r));
        if (got != msg_count(src, r))
            errs += mt_fail(0, "from %d round %d: count %d, expected %d", src, r, got, msg_count(src, r));
        else if (mt_check_int(buf, (size_t)got, src, 0, (uint32_t)r) >= 0)
            errs += mt_fail(0, "from %d round %d: wrong data", src, r);
        else if (got < MAXN && buf[got] != -1)
            errs += mt_fail(0, "from %d round %d: written past the message", src, r);
    }
    return errs;
}

static int fan_in(int rank, int size)
{
    int errs = 0, buf[MAXN], sbuf[MAXN];
    MPI_Request req = MPI_REQUEST_NULL, sreq;
    int *next = rank == 0 ? mt_zalloc(sizeof(int) * (size_t)size) : NULL;
    if (rank == 0)
        MPI_Recv_init(buf, MAXN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    for (int round = 0; round < ROUNDS; round++) {
        int posted_first = round % 2 == 0;
        if (posted_first) { /* the first receive is posted before any send */
            if (rank == 0) {
                clear(buf);
                MPI_Start(&req);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        mt_fill_int(sbuf, (size_t)msg_count(rank, round), rank, 0, (uint32_t)round);
        MPI_Isend(sbuf, msg_count(rank, round), MPI_INT, 0, msg_tag(rank, round), MPI_COMM_WORLD, &sreq);
        if (!posted_first)
            MPI_Barrier(MPI_COMM_WORLD); /* the messages are sent before rank 0 starts */
        if (rank == 0)
            errs += gather_round(size, round, posted_first, &req, buf, next);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        /* the next round's sends start only after this one's are in */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Test(&req, &flag, &st); /* inactive: completes at once, empty status */
        if (!flag || st.MPI_SOURCE != MPI_ANY_SOURCE || st.MPI_TAG != MPI_ANY_TAG)
            errs += mt_fail(0, "inactive persistent request: flag %d source %d tag %d", flag, st.MPI_SOURCE,
                            st.MPI_TAG);
        MPI_Request_free(&req);
        if (req != MPI_REQUEST_NULL)
            errs += mt_fail(0, "MPI_Request_free left the handle set");
        free(next);
    }
    return errs;
}

static int ring(int rank, int size)
{
    int errs = 0, left = (rank + size - 1) % size, right = (rank + 1) % size;
    int a[MAXN], b[MAXN], sa[MAXN], sb[MAXN];
    MPI_Request rreq[2], sreq[2];
    MPI_Status st[2];
    MPI_Recv_init(a, MAXN, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq[0]);
    MPI_Recv_init(b, MAXN, MPI_INT, MPI_ANY_SOURCE, RING_TAG_B, MPI_COMM_WORLD, &rreq[1]);
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t ka = (uint32_t)(2 * round), kb = (uint32_t)(2 * round + 1);
        int na = 1 + (rank + round) % MAXN, nb = MAXN - (rank + round) % 8;
        int wna = 1 + (left + round) % MAXN, wnb = MAXN - (left + round) % 8;
        int posted_first = round % 2 == 0;
        mt_fill_int(sa, (size_t)na, rank, right, ka);
        mt_fill_int(sb, (size_t)nb, rank, right, kb);
        if (posted_first) {
            MPI_Startall(2, rreq);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        /* Tag A, then tag B from the one sender: A matches the first
         * request (left, ANY_TAG), which is ahead of the second in posting
         * order; B then matches the second (ANY_SOURCE, tag B).  Posted after
         * the messages came, the requests take them in the same order. */
        MPI_Isend(sa, na, MPI_INT, right, RING_TAG_A, MPI_COMM_WORLD, &sreq[0]);
        MPI_Isend(sb, nb, MPI_INT, right, RING_TAG_B, MPI_COMM_WORLD, &sreq[1]);
        if (!posted_first) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Startall(2, rreq);
        }
        MPI_Waitall(2, rreq, st);
        MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE);
        errs += mt_check_status(rank, "ring (left, ANY_TAG)", &st[0], MPI_INT, left, RING_TAG_A, wna);
        errs += mt_check_status(rank, "ring (ANY_SOURCE, tag B)", &st[1], MPI_INT, left, RING_TAG_B, wnb);
        if (mt_check_int(a, (size_t)wna, left, rank, ka) >= 0)
            errs += mt_fail(rank, "ring round %d: wrong data in the (left, ANY_TAG) request", round);
        if (mt_check_int(b, (size_t)wnb, left, rank, kb) >= 0)
            errs += mt_fail(rank, "ring round %d: wrong data in the (ANY_SOURCE, tag B) request", round);
        MPI_Barrier(MPI_COMM_WORLD); /* buffers are reused next round */
    }
    MPI_Request_free(&rreq[0]);
    MPI_Request_free(&rreq[1]);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += fan_in(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    errs += ring(rank, size);
    char ok[80];
    snprintf(ok, sizeof ok, "persist_wild: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
