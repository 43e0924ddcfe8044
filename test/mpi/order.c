/* order.c - MPI's non-overtaking rule.
 *  1. pairs (even -> odd): 8 B and 1 MiB messages alternate on one tag; they
 *     must be received in send order, both when sent with Isend and received
 *     one by one, and when sent with blocking Send into pre-posted Irecvs;
 *  2. every rank (rank 0 included) sends tagged messages to rank 0, which
 *     receives them all with MPI_ANY_SOURCE/MPI_ANY_TAG: per sender they
 *     must arrive in order, and status.MPI_SOURCE/MPI_TAG must be right;
 *  3. a receive for a later tag may overtake an earlier message of another
 *     tag from the same sender (matching is by tag, not just arrival). */
#include "mpitest.h"

enum {
    TAG_SEQ = 20, TAG_ANY_BASE = 100, TAG_A = 200, TAG_B = 201,
    PAIR_MSGS = 12, BIG = 1 << 18,        /* ints: 1 MiB */
    TO0_MSGS = 8, TO0_BIG = 1 << 16,      /* ints: 256 KiB */
};

/* Message i of the pair stream: 2 ints (8 B) or 1 MiB, alternating. */
static int pair_len(int i) { return (i % 2) ? BIG : 2; }
static int to0_len(int i) { return (i % 2) ? TO0_BIG : 2; }

static int check_msg(int rank, const char *what, const int *buf,
                     const MPI_Status *st, int src, int tag, int len,
                     uint32_t key)
{
    int errs = mt_check_status(rank, what, st, MPI_INT, src, tag, len);
    if (errs)
        return errs;
    long bad = mt_check_int(buf, (size_t)len, src, rank, key);
    if (bad >= 0)
        errs += mt_fail(rank, "%s: data wrong at int %ld", what, bad);
    return errs;
}

static void pair_send(int rank, int peer, int phase, int **bufs)
{
    MPI_Request req[PAIR_MSGS];
    for (int i = 0; i < PAIR_MSGS; i++)
        mt_fill_int(bufs[i], (size_t)pair_len(i), rank, peer,
                    (uint32_t)(phase * 100 + i));
    if (phase == 0) {
        for (int i = 0; i < PAIR_MSGS; i++)
            MPI_Isend(bufs[i], pair_len(i), MPI_INT, peer, TAG_SEQ,
                      MPI_COMM_WORLD, &req[i]);
        MPI_Waitall(PAIR_MSGS, req, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < PAIR_MSGS; i++)
            MPI_Send(bufs[i], pair_len(i), MPI_INT, peer, TAG_SEQ,
                     MPI_COMM_WORLD);
    }
}

static int pair_recv(int rank, int peer, int phase, int **bufs)
{
    int errs = 0;
    char what[48];
    MPI_Status st[PAIR_MSGS];
    MPI_Request req[PAIR_MSGS];
    if (phase == 0) {
        /* one by one, each into a buffer big enough for either size */
        for (int i = 0; i < PAIR_MSGS; i++) {
            MPI_Recv(bufs[0], BIG, MPI_INT, peer, TAG_SEQ, MPI_COMM_WORLD,
                     &st[0]);
            snprintf(what, sizeof what, "Isend stream msg %d", i);
            errs += check_msg(rank, what, bufs[0], &st[0], peer, TAG_SEQ,
                              pair_len(i), (uint32_t)i);
        }
        return errs;
    }
    for (int i = 0; i < PAIR_MSGS; i++)
        MPI_Irecv(bufs[i], BIG, MPI_INT, peer, TAG_SEQ, MPI_COMM_WORLD,
                  &req[i]);
    MPI_Waitall(PAIR_MSGS, req, st);
    for (int i = 0; i < PAIR_MSGS; i++) {
        snprintf(what, sizeof what, "Send stream msg %d", i);
        errs += check_msg(rank, what, bufs[i], &st[i], peer, TAG_SEQ,
                          pair_len(i), (uint32_t)(100 + i));
    }
    return errs;
}

/* Part 2: rank 0 drains everything with wildcards. */
static int wildcard_to_zero(int rank, int size)
{
    int errs = 0;
    int *out[TO0_MSGS];
    MPI_Request req[TO0_MSGS];
    for (int i = 0; i < TO0_MSGS; i++) {
        out[i] = mt_malloc((size_t)to0_len(i) * sizeof(int));
        mt_fill_int(out[i], (size_t)to0_len(i), rank, 0, (uint32_t)(500 + i));
        MPI_Isend(out[i], to0_len(i), MPI_INT, 0, TAG_ANY_BASE + i,
                  MPI_COMM_WORLD, &req[i]);
    }
    if (rank == 0) {
        int *next = mt_malloc((size_t)size * sizeof(int));
        int *buf = mt_malloc(TO0_BIG * sizeof(int));
        for (int r = 0; r < size; r++)
            next[r] = 0;
        for (int k = 0; k < size * TO0_MSGS; k++) {
            MPI_Status st;
            MPI_Recv(buf, TO0_BIG, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE;
            if (src < 0 || src >= size || next[src] >= TO0_MSGS) {
                errs += mt_fail(rank, "wildcard recv: unexpected source %d "
                                "(tag %d)", src, st.MPI_TAG);
                continue;
            }
            int i = next[src]++;
            char what[48];
            snprintf(what, sizeof what, "wildcard msg %d from %d", i, src);
            errs += check_msg(rank, what, buf, &st, src, TAG_ANY_BASE + i,
                              to0_len(i), (uint32_t)(500 + i));
        }
        free(next);
        free(buf);
    }
    MPI_Waitall(TO0_MSGS, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < TO0_MSGS; i++)
        free(out[i]);
    return errs;
}

/* Part 3: to the right neighbour, tag A then tag B; received B first. */
static int tag_bypass(int rank, int size)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size, errs = 0;
    int a[4], b[4], ra[4], rb[4];
    MPI_Request req[2];
    MPI_Status st;
    mt_fill_int(a, 4, rank, to, 600);
    mt_fill_int(b, 4, rank, to, 601);
    MPI_Isend(a, 4, MPI_INT, to, TAG_A, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(b, 4, MPI_INT, to, TAG_B, MPI_COMM_WORLD, &req[1]);
    MPI_Recv(rb, 4, MPI_INT, from, TAG_B, MPI_COMM_WORLD, &st);
    errs += check_msg(rank, "tag B first", rb, &st, from, TAG_B, 4, 601);
    MPI_Recv(ra, 4, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    errs += check_msg(rank, "tag A second", ra, &st, from, TAG_A, 4, 600);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;
    int *bufs[PAIR_MSGS];

    if (peer < size) {
        for (int i = 0; i < PAIR_MSGS; i++)
            bufs[i] = mt_malloc(BIG * sizeof(int));
        for (int phase = 0; phase < 2; phase++) {
            if (rank % 2 == 0)
                pair_send(rank, peer, phase, bufs);
            else
                errs += pair_recv(rank, peer, phase, bufs);
        }
        for (int i = 0; i < PAIR_MSGS; i++)
            free(bufs[i]);
    } else if (size == 1) {
        mt_skipped("order: 1 rank, the pair streams need 2 (only the wildcard and tag checks ran)");
    }

    errs += wildcard_to_zero(rank, size);
    /* rank 0's wildcard receives must not see part 3's messages */
    MPI_Barrier(MPI_COMM_WORLD);
    errs += tag_bypass(rank, size);

    char ok[80];
    snprintf(ok, sizeof ok, "order: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
