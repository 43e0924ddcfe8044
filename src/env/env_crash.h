/* A rank's fatal signal, and the reports a process gives its launcher
 * (ampirun passes AMPI_LAUNCH_REPORT_FD; other launchers get nothing). */
#ifndef AMPI_ENV_CRASH_H
#define AMPI_ENV_CRASH_H

/* Tell the launcher which MPI ranks this process runs. */
void env_report_ranks(int proc, int first, int count);
/* Handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT: the running
 * rank and its backtrace, once per process.  Before rank_guard_install,
 * whose stack-overflow handler passes other faults on to these. */
void env_crash_install(int proc);

#endif
