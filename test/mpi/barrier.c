/* barrier.c - no rank leaves barrier k before every rank entered it.
 *
 * In each of many rounds every rank sends a message to its right neighbour
 * just before entering the barrier; in every fifth round one "late" rank
 * first idles 30 ms and then also tells every other rank it is entering.
 * After the barrier these messages have been sent, so each rank must find
 * them (Iprobe, allowing 10 ms for delivery) right away.  A rank let out of
 * the barrier early would look while the late rank is still idling and not
 * find its message.  Contents carry the round, so a message from another
 * round is caught too. */
#include "mpitest.h"

enum { ROUNDS = 40, TAG_NEIGHBOUR = 60, TAG_LATE = 61 };
#define LATE_DELAY 0.03
#define GRACE 0.01

/* Wait up to GRACE for a message from src/tag to be visible. */
static int visible(int src, int tag)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    do
        MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    while (!flag && MPI_Wtime() - t0 < GRACE);
    return flag;
}

static int expect(int rank, int round, int src, int tag, const char *what)
{
    int errs = 0, got[2] = {-1, -1};
    if (!visible(src, tag))
        errs += mt_fail(rank, "round %d: %s sent by %d before the barrier is "
                        "not there after it", round, what, src);
    MPI_Recv(got, 2, MPI_INT, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got[0] != round || got[1] != src)
        errs += mt_fail(rank, "round %d: %s from %d carries round %d rank %d",
                        round, what, src, got[0], got[1]);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int late_rounds = 0;

    for (int k = 0; k < ROUNDS; k++) {
        int late = (k % 5 == 4) ? (k / 5) % size : -1;
        int msg[2] = {k, rank};
        MPI_Request req[2];
        int nreq = 0;
        if (rank == late) {
            mt_delay(LATE_DELAY);
            for (int r = 0; r < size; r++)
                if (r != rank)
                    MPI_Send(msg, 2, MPI_INT, r, TAG_LATE, MPI_COMM_WORLD);
        }
        /* Isend: with one rank the neighbour is ourselves */
        MPI_Isend(msg, 2, MPI_INT, right, TAG_NEIGHBOUR, MPI_COMM_WORLD,
                  &req[nreq++]);
        MPI_Barrier(MPI_COMM_WORLD);
        errs += expect(rank, k, left, TAG_NEIGHBOUR, "neighbour message");
        if (late >= 0 && late != rank)
            errs += expect(rank, k, late, TAG_LATE, "late rank's message");
        late_rounds += (late >= 0);
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    }

    char ok[80];
    snprintf(ok, sizeof ok, "barrier: %d ranks, %d rounds (%d with a late "
             "rank) OK", size, ROUNDS, late_rounds);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
