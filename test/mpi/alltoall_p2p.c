/* alltoall_p2p.c - every rank Isends to and Irecvs from every rank
 * (itself included) at once, several rounds, with small (400 B) and large
 * (256 KiB) messages.  Receives are posted in a different order each round
 * and sends go out rotated by rank, so many messages are in flight in
 * every direction; one round receives with MPI_ANY_SOURCE and works out
 * the sender from the status.  Data depends on sender, receiver and round. */
#include "mpitest.h"

enum { TAG = 70, SMALL = 100, LARGE = 1 << 16 /* ints: 256 KiB */ };
static const int round_len[] = {SMALL, SMALL, LARGE, SMALL, LARGE, SMALL};
enum { ROUNDS = sizeof round_len / sizeof round_len[0], ANY_ROUND = 3 };

static int one_round(int rank, int size, int round, int **sbuf, int **rbuf,
                     MPI_Request *req, MPI_Status *st)
{
    int n = round_len[round], errs = 0, wildcard = (round == ANY_ROUND);
    uint32_t key = (uint32_t)round;
    /* a tag per round: a fast rank's next-round message must not match
     * this round's wildcard receives */
    int tag = TAG + round;

    for (int i = 0; i < size; i++) {
        /* post order: ascending, descending, or even-first by round */
        int src = (round % 3 == 0) ? i
                  : (round % 3 == 1) ? size - 1 - i
                  : (2 * i < size ? 2 * i : 2 * (i - (size + 1) / 2) + 1);
        MPI_Irecv(rbuf[src], n, MPI_INT, wildcard ? MPI_ANY_SOURCE : src, tag,
                  MPI_COMM_WORLD, &req[src]);
    }
    for (int i = 0; i < size; i++) {
        int dst = (rank + i) % size;
        mt_fill_int(sbuf[dst], (size_t)n, rank, dst, key);
        MPI_Isend(sbuf[dst], n, MPI_INT, dst, tag, MPI_COMM_WORLD,
                  &req[size + dst]);
    }
    MPI_Waitall(2 * size, req, st);

    char *seen = mt_zalloc((size_t)size);
    for (int slot = 0; slot < size; slot++) {
        int src = wildcard ? st[slot].MPI_SOURCE : slot;
        char what[48];
        snprintf(what, sizeof what, "round %d slot %d", round, slot);
        if (src < 0 || src >= size || seen[src]++) {
            errs += mt_fail(rank, "%s: source %d invalid or repeated", what,
                            src);
            continue;
        }
        errs += mt_check_status(rank, what, &st[slot], MPI_INT, src, tag, n);
        long bad = mt_check_int(rbuf[slot], (size_t)n, src, rank, key);
        if (bad >= 0)
            errs += mt_fail(rank, "%s: data from %d wrong at int %ld", what,
                            src, bad);
    }
    free(seen);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int **sbuf = mt_malloc((size_t)size * sizeof(int *));
    int **rbuf = mt_malloc((size_t)size * sizeof(int *));
    MPI_Request *req = mt_malloc(2 * (size_t)size * sizeof(MPI_Request));
    MPI_Status *st = mt_malloc(2 * (size_t)size * sizeof(MPI_Status));
    for (int i = 0; i < size; i++) {
        sbuf[i] = mt_malloc(LARGE * sizeof(int));
        rbuf[i] = mt_malloc(LARGE * sizeof(int));
    }

    for (int round = 0; round < (int)ROUNDS; round++)
        errs += one_round(rank, size, round, sbuf, rbuf, req, st);

    char ok[80];
    snprintf(ok, sizeof ok, "alltoall_p2p: %d ranks, %d rounds OK", size,
             (int)ROUNDS);
    mt_finish(errs, ok);
    for (int i = 0; i < size; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    free(st);
    MPI_Finalize();
    return 0;
}
