/* ring.c - a token travels around all ranks for several laps.  The payload
 * size changes per lap and its contents depend on (lap, sender, receiver),
 * so each hop checks it came from the right neighbour in the right lap. */
#include "mpitest.h"

enum { LAPS = 12, TAG_TOKEN = 7, MAX_INTS = 1 << 18 /* 1 MiB */ };

/* Payload length of a lap: small, medium and large in turn. */
static int lap_ints(int lap)
{
    static const int lengths[] = {1, 1000, 16384, 0, 3, MAX_INTS};
    return lengths[lap % (int)(sizeof lengths / sizeof lengths[0])];
}

/* The token is [lap, hop, payload...]; hop counts sends since the start. */
static int check_token(int rank, const int *tok, MPI_Status *st, int lap,
                       int prev)
{
    int errs = 0, n = lap_ints(lap), count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    if (count != n + 2)
        return mt_fail(rank, "lap %d: token has %d ints, expected %d", lap,
                       count, n + 2);
    if (tok[0] != lap)
        errs += mt_fail(rank, "token lap %d, expected %d", tok[0], lap);
    if (st->MPI_SOURCE != prev || st->MPI_TAG != TAG_TOKEN)
        errs += mt_fail(rank, "lap %d: token from %d tag %d", lap,
                        st->MPI_SOURCE, st->MPI_TAG);
    long bad = mt_check_int(tok + 2, (size_t)n, prev, rank, (uint32_t)lap);
    if (bad >= 0)
        errs += mt_fail(rank, "lap %d: payload from %d wrong at int %ld", lap,
                        prev, bad);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int *tok = mt_malloc((MAX_INTS + 2) * sizeof(int));
    int *out = mt_malloc((MAX_INTS + 2) * sizeof(int));

    for (int lap = 0; lap < LAPS; lap++) {
        int n = lap_ints(lap);
        MPI_Status st;
        if (rank == 0) {
            /* Isend first: with one rank the token goes to ourselves. */
            MPI_Request req;
            out[0] = lap;
            out[1] = 0;
            mt_fill_int(out + 2, (size_t)n, 0, next, (uint32_t)lap);
            MPI_Isend(out, n + 2, MPI_INT, next, TAG_TOKEN, MPI_COMM_WORLD,
                      &req);
            MPI_Recv(tok, MAX_INTS + 2, MPI_INT, prev, TAG_TOKEN,
                     MPI_COMM_WORLD, &st);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            errs += check_token(rank, tok, &st, lap, prev);
            if (tok[1] != size - 1)
                errs += mt_fail(rank, "lap %d: token made %d hops, expected %d",
                                lap, tok[1] + 1, size);
        } else {
            MPI_Recv(tok, MAX_INTS + 2, MPI_INT, prev, TAG_TOKEN,
                     MPI_COMM_WORLD, &st);
            errs += check_token(rank, tok, &st, lap, prev);
            if (tok[1] != rank - 1)
                errs += mt_fail(rank, "lap %d: hop count %d, expected %d", lap,
                                tok[1], rank - 1);
            out[0] = lap;
            out[1] = tok[1] + 1;
            mt_fill_int(out + 2, (size_t)n, rank, next, (uint32_t)lap);
            MPI_Send(out, n + 2, MPI_INT, next, TAG_TOKEN, MPI_COMM_WORLD);
        }
    }

    char ok[80];
    snprintf(ok, sizeof ok, "ring: %d ranks, %d laps OK", size, LAPS);
    mt_finish(errs, ok);
    free(tok);
    free(out);
    MPI_Finalize();
    return 0;
}
