/* main_elsewhere.c - main lives in a file that does not include mpi.h and
 * calls the MPI part in main_elsewhere_mpi.c.  Expected: exit 0 and one line
 * per rank. */
#include <stdio.h>

int mpi_part(int argc, char **argv);

int main(int argc, char **argv)
{
    int status = mpi_part(argc, argv);
    printf("main_elsewhere: main returns %d\n", status);
    return status;
}
