/* rma_passive.c - passive-target operations complete while the target
 * computes without calling MPI.
 *
 * Rank 0 (the target) enters a loop that makes no MPI call and ends only
 * when a flag word of its own window turns 1 (or after a generous bound,
 * which counts as a failure).  The last rank, in another process when there
 * is one, meanwhile locks rank 0's window, puts data, reads it back, adds
 * to a counter, and finally sets the flag, each in its own lock/unlock
 * epoch: every unlock returns only once the target has applied the
 * operations, so the flag can only turn 1 if the target's process made
 * progress on its own (the progress thread).  The target then checks the
 * data.  With several ranks per process (+vp) the origin first does the same
 * epochs to rank 1, a rank of the target's process that waits in
 * MPI_Barrier meanwhile: its PE is held by the computing rank 0, so these
 * too complete only through the progress thread.
 * With one process every rank is a thread of the target's process and the
 * origin cannot run while the target spins (one PE per process, and a rank
 * keeps its PE until it calls MPI), so there the epochs run before the
 * target waits (the same checks, no concurrency). */
#include <time.h>
#include "mpitest.h"

enum { N = 1024 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Put, get back, accumulate to target t, each in its own epoch. */
static int epochs_to(MPI_Win win, int rank, int t)
{
    int errs = 0, data[N], back[N], add = 3;
    for (int i = 0; i < N; i++)
        data[i] = 9000 + i;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    MPI_Put(data, N, MPI_INT, t, 2, N, MPI_INT, win);
    MPI_Win_unlock(t, win);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    MPI_Get(back, N, MPI_INT, t, 2, N, MPI_INT, win);
    MPI_Accumulate(&add, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(t, win);
    for (int i = 0; i < N; i++)
        if (back[i] != data[i]) {
            errs += mt_fail(rank, "passive get from %d: element %d is %d, expected %d", t, i, back[i], data[i]);
            break;
        }
    return errs;
}

/* blocked: rank 1, in rank 0's process, waiting in MPI_Barrier (-1: none) */
static int origin_epochs(MPI_Win win, int rank, int blocked)
{
    int errs = 0, one = 1;
    if (blocked > 0)
        errs += epochs_to(win, rank, blocked);
    errs += epochs_to(win, rank, 0);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
    return errs;
}

/* The target side's checks (rank 0, and rank 1 when it was a target). */
static int check_target(const int *base, int rank)
{
    int errs = 0, flag = rank == 0 ? 1 : 0;
    if (base[0] != flag || base[1] != 3)
        errs += mt_fail(rank, "flag %d counter %d, expected %d and 3", base[0], base[1], flag);
    for (int i = 0; i < N; i++)
        if (base[2 + i] != 9000 + i) {
            errs += mt_fail(rank, "passive put: element %d is %d", i, base[2 + i]);
            break;
        }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int *base;
    MPI_Win win;
    MPI_Win_allocate((N + 2) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, (N + 2) * sizeof(int));
    /* ranks fill processes in blocks, so the last rank lives in another
     * process than rank 0 whenever there are several (the library sets
     * AMPI_LOCAL_SIZE to the processes of the node: one node here) */
    const char *ls = getenv("AMPI_LOCAL_SIZE");
    int nprocs = ls ? atoi(ls) : 1;
    int origin = size - 1;
    /* rank 1 shares rank 0's process when each process has several ranks */
    int blocked = size / nprocs >= 2 && origin != 1 ? 1 : -1;
    /* Once rank 0 spins its process runs no other rank, so no rank may
     * still need one of them: everyone leaves a barrier and says so before
     * rank 0 stops calling MPI (a rank may leave a barrier before its peers
     * have). */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        MPI_Send(NULL, 0, MPI_INT, 0, 1, MPI_COMM_WORLD);
    else
        for (int i = 1; i < size; i++)
            MPI_Recv(NULL, 0, MPI_INT, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int concurrent = nprocs > 1 && size > 1;
    if (!concurrent) {
        if (rank == origin)
            errs += origin_epochs(win, rank, blocked);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (rank == origin) {
        errs += origin_epochs(win, rank, blocked);
    } else if (rank == 0) {
        /* compute: no MPI call until the flag turns 1 */
        volatile int *flag = base;
        double t0 = now();
        while (*flag != 1 && now() - t0 < 60.0)
            ;
        if (*flag != 1)
            errs += mt_fail(rank, "the origin's epochs did not complete while the target computed");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 || rank == blocked) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        errs += check_target(base, rank);
        MPI_Win_unlock(rank, win);
    }
    MPI_Win_free(&win);
    mt_finish(errs, "rma_passive OK");
    MPI_Finalize();
    return 0;
}
