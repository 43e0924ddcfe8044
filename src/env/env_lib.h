/* Library mode: the program owns main (Python with mpi4py, a plug-in, a
 * program linked with plain `cc ... -lampi`), so no start-up of ours ran
 * and MPI_Init itself sets the process up as one MPI rank.  Any OS thread
 * of the process may then call MPI; the calls are serialized
 * (rank/rank_host.h), so MPI_THREAD_MULTIPLE is granted. */
#ifndef AMPI_ENV_LIB_H
#define AMPI_ENV_LIB_H

#include <stdbool.h>
#include "pt2pt/p2p.h"

/* From MPI_Init/MPI_Init_thread on a thread that runs no rank: sets the
 * process up and returns its rank, or NULL when the process already runs
 * ranks of its own (a program started by ampicc's start-up, called from
 * another OS thread). */
p2p_rank_t *env_lib_start(void);
/* Whether this process runs in library mode (after env_lib_start). */
bool env_lib_mode(void);
/* From MPI_Finalize, after the rank finalized: tears the process down. */
void env_lib_end(p2p_rank_t *r);
/* Whether the calling OS thread is the one that called MPI_Init. */
bool env_lib_is_main_thread(void);

#endif
