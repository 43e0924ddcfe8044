/* plugin.c - a plug-in built with `ampicc -shared`: the program that loads
 * it (plugin_host.c, no MPI of its own) owns main, so MPI_Init in here
 * makes each process one MPI rank (library mode).  A reduction over the
 * ranks, checked. */
#include <mpi.h>
#include <stdio.h>

int plugin_run(void);

int plugin_run(void)
{
    int initialized = 1;
    MPI_Initialized(&initialized);
    if (initialized) {
        printf("FAIL: MPI initialized before the plug-in's MPI_Init\n");
        return 1;
    }
    MPI_Init(NULL, NULL);
    int rank, size, sum = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int bad = sum != size * (size - 1) / 2;
    if (bad)
        printf("FAIL rank %d: sum of ranks %d\n", rank, sum);
    else
        printf("plugin: rank %d of %d OK\n", rank, size);
    MPI_Finalize();
    return bad;
}
