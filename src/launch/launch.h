/* ampirun: single-node launcher with an embedded PMIx server.
 *
 * Threads: the main thread owns the processes, their pipes, signals and the
 * exit decision.  PMIx module callbacks run on the PMIx progress thread; they
 * only record facts (connected, finalized, abort) under a mutex and wake the
 * main thread through a pipe, so no launcher state is touched concurrently. */
#ifndef LAUNCH_H
#define LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

/* Processes that ignore SIGTERM get SIGKILL this long after it, chosen so
 * that every process is gone within 2 s of a failure. */
#define LAUNCH_KILL_GRACE_MS 1500

/* ---- command line (launch_args.c) ---- */
typedef struct launch_options {
    int nprocs;            /* P: PMIx job size */
    int nvp;               /* V: virtual ranks, passed as AMPI_VP */
    const char *nvp_source; /* "+vp" or "AMPI_VP" when V was given, else NULL */
    double timeout_s;      /* 0: no limit */
    bool tag_output;       /* prefix forwarded lines with "[p] " */
    bool bind_none;        /* --bind-to none: leave placement to the kernel */
    char **exports;        /* -x NAME[=VALUE] entries, NULL-terminated */
    char **prog_argv;      /* program and its arguments (points into argv) */
    const char *wdir;      /* -wdir DIR: the processes' working directory */
    char **owned;          /* strings built while parsing (-genv's NAME=VALUE) */
    size_t nowned;
} launch_options_t;

/* Returns 0 on success, 1 when help was printed (exit 0), -1 on a usage
 * error (already reported). */
int launch_parse_args(int argc, char **argv, launch_options_t *opt);
void launch_free_options(launch_options_t *opt);
/* Shared by both parsers: a positive int, or -1 after a message. */
int launch_parse_count(const char *text, const char *option, int *out);
/* Append a -x entry (kept by pointer: the string must outlive opt). */
int launch_add_export(launch_options_t *opt, const char *entry);
/* Open MPI/MPICH options (launch_compat.c): 1 when argv[*i] was one (and
 * *i moved past its values), 0 when it is none of them, -1 on an error
 * already reported. */
int launch_parse_compat(int argc, char **argv, int *i, launch_options_t *opt);

/* ---- environment arrays (launch_env.c) ---- */
/* Env arrays are malloc'd, NULL-terminated arrays of malloc'd "NAME=VALUE"
 * strings, the form PMIx_server_setup_fork edits in place. */
char **launch_env_copy(char *const *env);
int launch_env_set(char ***env, const char *name, const char *value);
const char *launch_env_get(char *const *env, const char *name);
void launch_env_free(char **env);
/* Apply -x entries: NAME=VALUE sets, bare NAME exports ampirun's value. */
int launch_env_apply_exports(char ***env, char *const *exports);
/* Path of prog as execve needs it, searched in path_var when prog has no
 * '/'; NULL when not found.  The result is malloc'd. */
char *launch_find_program(const char *prog, const char *path_var);

/* ---- output forwarding and messages (launch_output.c) ---- */
typedef struct launch_linebuf {
    char *data;
    size_t len, cap;
} launch_linebuf_t;

/* Print "ampirun: <message>\n" to stderr in a single write. */
void launch_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void launch_linebuf_init(launch_linebuf_t *lb);
void launch_linebuf_free(launch_linebuf_t *lb);
/* Read what fd has, forward every complete line to out_fd (prefixed with
 * "[rank] " when rank >= 0).  Returns false at end of file or on error:
 * the rest is flushed and the caller closes fd. */
bool launch_forward(int fd, launch_linebuf_t *lb, int out_fd, int rank);

/* ---- PMIx server (launch_pmix.c) ---- */
typedef struct launch_abort_info {
    int rank;
    int status;
    char msg[1024];
} launch_abort_info_t;

/* Start the server library in tmpdir and register the job's namespace.
 * wake_fd gets a byte whenever a callback recorded something. */
int launch_pmix_start(const launch_options_t *opt, const char *tmpdir, int wake_fd);
/* Register rank as a client and add its PMIx variables to *env. */
int launch_pmix_prepare_client(int rank, char ***env);
void launch_pmix_client_state(int rank, bool *connected, bool *finalized);
/* True (once) when a client called PMIx_Abort; fills *out. */
bool launch_pmix_take_abort(launch_abort_info_t *out);
/* Finalize the server; job_was_clean: every process finished normally. */
void launch_pmix_stop(bool job_was_clean);

/* ---- processes (launch_spawn.c) ---- */
typedef struct launch_proc {
    int rank;
    pid_t pid;                 /* 0 before spawn */
    int out_fd, err_fd;        /* read ends of its stdout/stderr; -1 when closed */
    launch_linebuf_t out_buf, err_buf;
    bool reaped;
    int bind_cpu;              /* CPU the process is pinned to, -1 none */
    int progress_cpu;          /* CPU for its progress threads, -1 none */
    int first_rank, nranks;    /* its MPI ranks, as it reported them (0: none) */
    int signal_rank, signal;   /* the rank that got a fatal signal (signal 0: none) */
} launch_proc_t;

/* ---- reports from the processes (launch_report.c) ---- */
typedef struct launch_report_buf {
    char line[128];
    size_t len;
} launch_report_buf_t;

/* The report pipe: fds[0] for ampirun (non-blocking), fds[1] for the
 * children (AMPI_LAUNCH_REPORT_FD); both close-on-exec in ampirun. */
int launch_report_open(int fds[2]);
/* Read what the pipe holds and note it in procs. */
void launch_report_read(int fd, launch_report_buf_t *lb, launch_proc_t *procs, int nprocs);
/* "process P (pid N, ranks A-B)" as far as known. */
void launch_describe(const launch_proc_t *p, char *out, size_t cap);

/* ---- nothing left behind (launch_clean.c) ---- */
/* The job's PMIx namespace, unique on this node. */
const char *launch_nspace(void);
/* Remove tmpdir (when not NULL) and the shared-memory segments of the job
 * with PMIx namespace nspace. */
void launch_sweep(const char *tmpdir, const char *nspace);
/* Start the process that sweeps after an ampirun killed without an ending;
 * before any thread exists.  launch_janitor_dismiss: we swept ourselves. */
int launch_janitor_start(const char *tmpdir);
void launch_janitor_dismiss(void);

/* fork/exec one process with env; stdin_fd becomes its stdin.  Returns 0,
 * or after reporting why: the errno of a failed exec, -1 for other errors. */
int launch_spawn(launch_proc_t *proc, const char *path, char *const *argv,
                 char *const *env, int stdin_fd, int report_fd);
/* Block the signals the job loop reads through a signalfd (before PMIx
 * starts its threads, so they inherit the mask) and ignore SIGPIPE; what was
 * there before is saved and given back to every child before exec. */
int launch_signals_setup(void);
/* The set launch_signals_setup blocked: SIGCHLD, SIGINT, SIGTERM, SIGHUP. */
void launch_signals_handled(sigset_t *set);

/* ---- the job (launch_job.c) ---- */
/* Spawn all processes, forward output, watch them and decide the exit
 * status: 0 when all finished cleanly, the first failure's status, 124 on
 * timeout.  *term_signal is set when ampirun itself was signalled. */
int launch_run_job(const launch_options_t *opt, int wake_fd, int *term_signal);

#endif
