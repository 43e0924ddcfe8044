/* globals_c.c - mutable C globals of every kind, each rank giving them values
 * of its own and checking them after the other ranks of its process ran
 * (barriers and yields switch ranks).  Built with `ampicc -privatize`, every
 * rank has its own copy and the program prints "globals_c: OK"; with
 * AMPI_PRIVATIZE=off (one copy per process) ranks that share a process see
 * each other's values and it prints FAIL lines (test/privat/run.sh runs both).
 *
 * Covered: a global counter, a global holding the rank, a static inside a
 * function, a thread-local, a global of a static library (archive), errno
 * across a rank switch (kept per rank with or without privatization), and
 * options parsed with getopt into globals. */
#include <mpi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int counter;                  /* a plain global */
static int my_rank = -1;      /* a file-scope static holding the rank */
_Thread_local int tls_value;  /* thread-local: per OS thread, so shared by ranks unless privatized */
extern int archive_counter;   /* defined in globals_archive.c, linked from an archive */
int archive_bump(void);

static int rank, failures;

#define CHECK(cond, ...)                                                                                \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            printf("FAIL rank %d: ", rank);                                                             \
            printf(__VA_ARGS__);                                                                        \
            printf("\n");                                                                               \
            failures++;                                                                                 \
        }                                                                                               \
    } while (0)

static int next_id(void)
{
    static int calls; /* a static inside a function */
    return ++calls;
}

/* Options parsed with getopt into globals, which each rank then adjusts
 * (as the OSU benchmarks do): run.sh passes "-a -a -n 5 -r 3:9".  The value
 * of -r is split in place with strtok, as OSU does with -m: every rank must
 * have argument strings of its own. */
static int opt_a, opt_n = -1, opt_lo = -1, opt_hi = -1;

static void parse_options(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "an:r:")) != -1) {
        if (c == 'a')
            opt_a++;
        else if (c == 'n')
            opt_n = atoi(optarg);
        else if (c == 'r') {
            char *lo = strtok(optarg, ":"), *hi = strtok(NULL, ":");
            opt_lo = lo ? atoi(lo) : -1;
            opt_hi = hi ? atoi(hi) : -1;
        }
    }
    CHECK(optind == argc, "getopt: optind %d after parsing, expected %d", optind, argc);
    opt_n += rank;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    my_rank = rank;
    for (int i = 0; i <= rank; i++)
        counter++;
    tls_value = 1000 + rank;
    for (int i = 0; i < rank + 2; i++)
        archive_bump();
    int first = next_id();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(my_rank == rank, "global my_rank is %d", my_rank);
    CHECK(counter == rank + 1, "global counter is %d, expected %d", counter, rank + 1);
    CHECK(tls_value == 1000 + rank, "thread-local is %d, expected %d", tls_value, 1000 + rank);
    CHECK(archive_counter == rank + 2, "archive global is %d, expected %d", archive_counter, rank + 2);
    CHECK(first == 1, "first call of next_id returned %d", first);
    MPI_Barrier(MPI_COMM_WORLD);
    int second = next_id();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(second == 2, "second call of next_id returned %d", second);

    errno = 100 + rank;
    AMPI_Yield();
    MPI_Barrier(MPI_COMM_WORLD); /* the other ranks set errno meanwhile */
    errno = 100 + rank;
    AMPI_Yield();
    CHECK(errno == 100 + rank, "errno is %d after a yield, expected %d", errno, 100 + rank);

    parse_options(argc, argv);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(opt_a == 2, "getopt: %d options -a, expected 2", opt_a);
    CHECK(opt_n == 5 + rank, "getopt: option value %d, expected %d", opt_n, 5 + rank);
    CHECK(opt_lo == 3 && opt_hi == 9, "argument 3:9 split into %d and %d", opt_lo, opt_hi);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("globals_c: OK (%d ranks)\n", size);
        else
            printf("globals_c: %d failures\n", total);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
