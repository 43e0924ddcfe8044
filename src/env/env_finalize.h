/* The end of a process's ranks (env_init.c). */
#ifndef AMPI_ENV_FINALIZE_H
#define AMPI_ENV_FINALIZE_H

/* A rank of this process is done with MPI: at the end of MPI_Finalize, or
 * when it returns from main without finalizing.  The last one gives back
 * the library's objects in the device's context (gpu_release) before any
 * rank returns from MPI_Finalize, since the program may reset the device
 * right after it. */
void env_rank_leaves(void);

#endif
