/* libmode.c - a program linked with plain `cc ... -lampi`, without ampicc's
 * start-up: its main is its own, so MPI_Init makes each process one MPI
 * rank (library mode).  A ring with checked data, the thread level asked
 * for on the command line ("single", "funneled", "serialized", "multiple";
 * none: MPI_Init) granted and reported by MPI_Query_thread, and
 * MPI_Is_thread_main true on this thread.  Expected: exit 0 and one OK
 * line per rank. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { N = 1000, TAG = 3 };

static int level_of(const char *name)
{
    static const char *const names[] = { "single", "funneled", "serialized", "multiple" };
    static const int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                  MPI_THREAD_MULTIPLE };
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0)
            return levels[i];
    return -1;
}

int main(int argc, char **argv)
{
    int required = argc > 1 ? level_of(argv[1]) : -1, provided = -1, errs = 0;
    if (required >= 0)
        MPI_Init_thread(&argc, &argv, required, &provided);
    else
        MPI_Init(&argc, &argv);
    int rank, size, query = -1, is_main = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Query_thread(&query);
    MPI_Is_thread_main(&is_main);
    if (required >= 0 && provided != required) {
        printf("FAIL rank %d: asked for thread level %d, provided %d\n", rank, required, provided);
        errs++;
    }
    if (required >= 0 && query != provided) {
        printf("FAIL rank %d: MPI_Query_thread says %d, MPI_Init_thread provided %d\n", rank, query, provided);
        errs++;
    }
    if (required < 0 && query != MPI_THREAD_MULTIPLE) {
        printf("FAIL rank %d: MPI_Query_thread says %d after MPI_Init in library mode\n", rank, query);
        errs++;
    }
    if (!is_main) {
        printf("FAIL rank %d: MPI_Is_thread_main false on the thread that called MPI_Init\n", rank);
        errs++;
    }
    static int out[N], in[N]; /* one rank per process: globals are the process's */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        out[i] = rank * 100003 + i;
    MPI_Sendrecv(out, N, MPI_INT, to, TAG, in, N, MPI_INT, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        if (in[i] != from * 100003 + i) {
            printf("FAIL rank %d: element %d is %d, expected %d\n", rank, i, in[i], from * 100003 + i);
            errs++;
            break;
        }
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total == 0)
        printf("libmode: rank %d of %d, thread level %d OK\n", rank, size, query);
    MPI_Finalize();
    return total != 0;
}
