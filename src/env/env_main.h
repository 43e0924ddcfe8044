/* What libampi_main.a (env_main.c, linked into the program by ampicc) asks
 * of the library.  The wrapper links with --wrap=main, --wrap=exit and
 * --wrap=atexit: the C runtime's call of main reaches __wrap_main, which
 * hands the program's own main to AMPI_Run; the program's calls of exit and
 * atexit reach these hooks first.  Exported (AMPI_ prefix) because the
 * archive lives in the program and the library in libampi.so. */
#ifndef AMPI_ENV_MAIN_H
#define AMPI_ENV_MAIN_H

/* Runs user_main once per MPI rank of this process (env_run.c); returns the
 * process's exit status. */
int AMPI_Run(int argc, char **argv, int (*user_main)(int, char **));

/* exit(status) called by the program: on a rank's own thread it ends that
 * rank alone (ending the job first if the rank is between MPI_Init and
 * MPI_Finalize) and never returns; elsewhere it returns and the process
 * exits as usual. */
void AMPI_Rank_exit(int status);

/* atexit(fn) called by the program: nonzero when a rank already registered
 * fn, so that handlers run once per process, not once per rank. */
int AMPI_Atexit_seen(void (*fn)(void));

/* atexit(fn) called by a privatized program's copy (the image that
 * `ampicc -privatize` links, env_priv.c): when every rank has a copy of its
 * own and the caller is a rank's own thread, fn is that rank's and runs at
 * its end, after the handlers it registered later (as exit runs them); 0
 * then.  Otherwise -1, and the caller treats fn as atexit does above. */
int AMPI_Rank_atexit(void (*fn)(void));

/* Adds fn to the handlers of the rank whose own thread calls (env_run.c):
 * 0, or -1 when no rank's own thread calls or memory runs out. */
int env_rank_atexit_add(void (*fn)(void));

#endif
