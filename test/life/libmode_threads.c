/* libmode_threads.c - library mode (linked with plain cc -lampi) with
 * MPI_THREAD_MULTIPLE: two OS threads per process call MPI at once.  The
 * worker thread receives round after round from the left neighbour in
 * blocking MPI_Recv while the main thread sends to the right neighbour and
 * runs Isend/Irecv/Waitall exchanges of its own on another tag, so a thread
 * blocked inside MPI must let the other's calls through.  Every message is
 * checked.  Expected: exit 0 and one OK line per rank. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

enum { ROUNDS = 200, N = 64, TAG_WORKER = 1, TAG_MAIN = 2 };

typedef struct {
    int rank, size, errs;
} ctx_t;

static int value(int src, int round, int i) { return src * 1000003 + round * 131 + i; }

static void *worker(void *arg)
{
    ctx_t *c = arg;
    int from = (c->rank + c->size - 1) % c->size, buf[N];
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Recv(buf, N, MPI_INT, from, TAG_WORKER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            if (buf[i] != value(from, round, i)) {
                printf("FAIL rank %d: worker round %d element %d is %d\n", c->rank, round, i, buf[i]);
                c->errs++;
                break;
            }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    ctx_t c = { 0, 0, 0 };
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    if (provided != MPI_THREAD_MULTIPLE) {
        printf("FAIL rank %d: MPI_THREAD_MULTIPLE asked, %d provided\n", c.rank, provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pthread_t t;
    pthread_create(&t, NULL, worker, &c);
    int to = (c.rank + 1) % c.size, from = (c.rank + c.size - 1) % c.size;
    int out[N], mine[N], theirs[N];
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++)
            out[i] = value(c.rank, round, i);
        MPI_Send(out, N, MPI_INT, to, TAG_WORKER, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            mine[i] = -value(c.rank, round, i);
        MPI_Request q[2];
        MPI_Irecv(theirs, N, MPI_INT, from, TAG_MAIN, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(mine, N, MPI_INT, to, TAG_MAIN, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            if (theirs[i] != -value(from, round, i)) {
                printf("FAIL rank %d: main round %d element %d is %d\n", c.rank, round, i, theirs[i]);
                c.errs++;
                break;
            }
    }
    pthread_join(t, NULL);
    int is_main = 0, total = 0;
    MPI_Is_thread_main(&is_main);
    if (!is_main) {
        printf("FAIL rank %d: MPI_Is_thread_main false on the thread that called MPI_Init_thread\n", c.rank);
        c.errs++;
    }
    MPI_Allreduce(&c.errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total == 0)
        printf("libmode_threads: rank %d of %d, %d rounds on two threads OK\n", c.rank, c.size, ROUNDS);
    MPI_Finalize();
    return total != 0;
}
