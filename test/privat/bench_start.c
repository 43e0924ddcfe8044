/* Benchmark (not a test; test/privat/bench.sh runs it): start-up and memory
 * of many ranks in one process.  Each rank writes a global and a 4 KiB
 * static buffer (so that a privatized copy's pages are touched), then after
 * a barrier rank 0 prints the process's resident memory and its number of
 * memory mappings. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int counter;
static char buffer[4096];

static void print_status(int size)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS", 5) || !strncmp(line, "RssAnon", 7) || !strncmp(line, "RssShmem", 8))
            printf("bench_start: %d ranks: %s", size, line);
    if (f)
        fclose(f);
    int maps = 0;
    f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f))
        maps++;
    if (f)
        fclose(f);
    printf("bench_start: %d ranks: mappings %d\n", size, maps);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    counter += rank;
    memset(buffer, rank, sizeof buffer);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        print_status(size);
    MPI_Finalize();
    return 0;
}
