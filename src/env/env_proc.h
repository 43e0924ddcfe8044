/* Setting a process up and tearing it down, shared by the two ways a
 * process lives: AMPI_Run (the library owns main and runs V/P ranks as
 * user-level threads, env_run.c) and library mode (the program owns main,
 * MPI_Init makes the process one rank, env_lib.c). */
#ifndef AMPI_ENV_PROC_H
#define AMPI_ENV_PROC_H

#include <stdbool.h>
#include "ucx/ucx_pmix.h"

/* The job this process belongs to (PMIx), the log's process tag and the
 * settings, checked: a misspelt value stops the job here, before any rank
 * runs, rather than quietly running it with the default. */
void env_proc_join(ucx_job_t *job);
/* After env_proc_join: the process's ranks (vp in
 * the job), GPU, UCX and the shared-memory rings, ready for the ranks to
 * run.  any_thread: MPI calls may come from any OS thread, one at a time. */
void env_proc_start(const ucx_job_t *job, int vp, bool any_thread);
/* After every rank of the process ended: flush, fence, tear down. */
void env_proc_end(void);

#endif
