/* The job: spawn P processes, then one poll loop on the main thread that
 * forwards output, reaps children, reads ampirun's own signals (signalfd)
 * and PMIx news (wake pipe), and enforces the deadlines.
 *
 * The first failure decides the exit status and ends the job: SIGTERM to
 * every process still alive, SIGKILL LAUNCH_KILL_GRACE_MS later.  Later
 * deaths are consequences and are not reported. */
#define _GNU_SOURCE
#include <sched.h>
#include "launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* How long to wait for pipes to reach end of file once every process has
 * been reaped: only a left-behind grandchild can hold them that long. */
#define DRAIN_MS 500

typedef struct job {
    const launch_options_t *opt;
    launch_proc_t *procs;
    int nprocs;
    int live; /* spawned and not yet reaped */
    int sig_fd, wake_fd;
    int report_fd[2]; /* the processes' reports (launch_report.c) */
    launch_report_buf_t report_buf;
    bool ending;         /* a failure, timeout or signal is ending the job */
    bool status_decided; /* exit_status holds the deciding failure */
    int exit_status;
    int term_signal; /* signal ampirun received, 0 if none */
    int64_t timeout_at, kill_at, drain_until; /* ms, -1 when unset */
} job_t;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Signal the orphans among our descendants (say, what a shell wrapper
 * started in the background): ampirun is their subreaper, so they are the
 * children of ours that are not in the process table. */
static void signal_strays(const job_t *job, int sig)
{
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        char path[64], stat[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (n <= 0)
            continue;
        stat[n] = '\0';
        /* "pid (comm) state ppid ...": comm may hold spaces and parens. */
        const char *after_comm = strrchr(stat, ')');
        char state;
        long ppid;
        if (after_comm == NULL || sscanf(after_comm + 1, " %c %ld", &state, &ppid) != 2 ||
            ppid != (long)self)
            continue;
        bool known = false;
        for (int r = 0; r < job->nprocs && !known; r++)
            known = job->procs[r].pid == (pid_t)pid;
        if (!known)
            kill((pid_t)pid, sig);
    }
    closedir(proc);
}

/* An ended job's last process is gone: whatever it left behind had its
 * chance to end with it.  Kill and reap the strays (a killed one's own
 * children become ours in turn), for up to a second. */
static void end_strays(const job_t *job)
{
    for (int tries = 0; tries < 100; tries++) {
        signal_strays(job, SIGKILL);
        pid_t pid;
        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (pid < 0 && errno == ECHILD)
            return; /* no child left at all */
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void signal_all(job_t *job, int sig)
{
    for (int r = 0; r < job->nprocs; r++)
        if (job->procs[r].pid > 0 && !job->procs[r].reaped)
            kill(job->procs[r].pid, sig);
    signal_strays(job, sig);
}

/* Start ending the job with status (nothing printed when fmt is NULL,
 * because the cause was reported already). */
static void fail(job_t *job, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(job_t *job, int status, const char *fmt, ...)
{
    if (job->ending)
        return;
    job->ending = true;
    job->status_decided = true;
    job->exit_status = status;
    if (fmt != NULL) {
        char msg[1536];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        launch_say("%s", msg);
    }
    signal_all(job, SIGTERM);
    job->kill_at = now_ms() + LAUNCH_KILL_GRACE_MS;
}

static void read_reports(job_t *job)
{
    launch_report_read(job->report_fd[0], &job->report_buf, job->procs, job->nprocs);
}

static void check_abort(job_t *job)
{
    launch_abort_info_t info;
    if (!launch_pmix_take_abort(&info))
        return;
    size_t len = strlen(info.msg);
    while (len > 0 && (info.msg[len - 1] == '\n' || info.msg[len - 1] == '\r'))
        info.msg[--len] = '\0';
    char who[96] = "";
    if (info.rank >= 0 && info.rank < job->nprocs) {
        read_reports(job);
        launch_describe(&job->procs[info.rank], who, sizeof who);
    } else {
        snprintf(who, sizeof who, "process %d", info.rank);
    }
    /* The message says what happened (the library's MPI_Abort says so and
     * names the rank): an internal error is not reported as MPI_Abort.  A
     * shell sees exit statuses modulo 256; keep what it would see. */
    fail(job, info.status & 0xff, "%s ended the job with status %d: %s", who, info.status,
         info.msg);
}

static void judge_exit(job_t *job, launch_proc_t *p, int status)
{
    /* An abort recorded by the PMIx thread precedes this process's exit
     * (the client waits for the server's reply), so it must be seen first:
     * the abort, not its consequence, is the cause to report. */
    check_abort(job);
    if (job->ending)
        return;
    /* What the process reported before it died is in the pipe by now. */
    read_reports(job);
    char who[96];
    launch_describe(p, who, sizeof who);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        char in_rank[48] = "";
        /* Under +vp a process holds several ranks: name the one running. */
        if (p->signal == sig && p->nranks > 1)
            snprintf(in_rank, sizeof in_rank, " in rank %d", p->signal_rank);
        fail(job, 128 + sig, "%s killed by signal %d (%s)%s", who, sig, strsignal(sig), in_rank);
        return;
    }
    int code = WEXITSTATUS(status);
    if (code != 0) {
        fail(job, code, "%s exited with status %d", who, code);
        return;
    }
    bool connected, finalized;
    launch_pmix_client_state(p->rank, &connected, &finalized);
    /* The others would wait for it forever in their next collective.  A
     * program that never connected (not an MPI program) is fine. */
    if (connected && !finalized)
        fail(job, 1, "%s exited without finalizing", who);
}

static void reap_children(job_t *job)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        for (int r = 0; r < job->nprocs; r++) {
            launch_proc_t *p = &job->procs[r];
            if (p->pid == pid && !p->reaped) {
                p->reaped = true;
                job->live--;
                judge_exit(job, p, status);
                if (job->ending && job->live == 0)
                    end_strays(job);
                break;
            }
        }
        /* Other pids are strays (see signal_strays), reaped only. */
    }
}

static void on_signal(job_t *job, int sig)
{
    if (job->term_signal != 0 || job->ending) {
        /* Asked again, or already ending: no more patience. */
        if (job->term_signal == 0)
            job->term_signal = sig;
        signal_all(job, SIGKILL);
        job->kill_at = -1;
        return;
    }
    job->term_signal = sig;
    job->ending = true;
    launch_say("received signal %d (%s), forwarding it to all processes", sig, strsignal(sig));
    signal_all(job, sig);
    job->kill_at = now_ms() + LAUNCH_KILL_GRACE_MS;
}

static void read_signals(job_t *job)
{
    struct signalfd_siginfo si;
    while (read(job->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        /* SIGCHLD needs nothing here: every loop turn reaps. */
        if (si.ssi_signo != SIGCHLD)
            on_signal(job, (int)si.ssi_signo);
    }
}

static void drain_wake_pipe(job_t *job)
{
    char buf[64];
    while (read(job->wake_fd, buf, sizeof buf) > 0)
        ;
    check_abort(job);
}

static bool pipes_open(const job_t *job)
{
    for (int r = 0; r < job->nprocs; r++)
        if (job->procs[r].out_fd >= 0 || job->procs[r].err_fd >= 0)
            return true;
    return false;
}

static void forward(job_t *job, int *fd, launch_linebuf_t *lb, int out_fd, int rank)
{
    int tag = job->opt->tag_output ? rank : -1;
    if (!launch_forward(*fd, lb, out_fd, tag)) {
        close(*fd);
        *fd = -1;
    }
}

static int poll_timeout(const job_t *job, int64_t now)
{
    int64_t next = -1;
    const int64_t deadlines[] = {job->ending ? -1 : job->timeout_at, job->kill_at,
                                 job->drain_until};
    for (size_t i = 0; i < sizeof deadlines / sizeof deadlines[0]; i++)
        if (deadlines[i] >= 0 && (next < 0 || deadlines[i] < next))
            next = deadlines[i];
    if (next < 0)
        return -1;
    return next <= now ? 0 : (int)(next - now);
}

static void check_deadlines(job_t *job)
{
    int64_t now = now_ms();
    if (!job->ending && job->timeout_at >= 0 && now >= job->timeout_at)
        fail(job, 124, "job timed out after %g seconds, killing all processes",
             job->opt->timeout_s);
    if (job->kill_at >= 0 && now >= job->kill_at) {
        signal_all(job, SIGKILL);
        job->kill_at = -1;
    }
    if (job->live == 0 && job->drain_until < 0)
        job->drain_until = now + DRAIN_MS;
}

static void event_loop(job_t *job)
{
    size_t cap = 3 + 2 * (size_t)job->nprocs;
    struct pollfd *fds = calloc(cap, sizeof *fds);
    /* Which stream each poll entry is: 2r for stdout, 2r+1 for stderr. */
    int *stream = calloc(cap, sizeof *stream);
    if (fds == NULL || stream == NULL) {
        launch_say("out of memory");
        fail(job, 1, NULL);
        signal_all(job, SIGKILL);
    }

    while (fds != NULL && stream != NULL) {
        reap_children(job);
        check_deadlines(job);
        if (job->live == 0 && (!pipes_open(job) || now_ms() >= job->drain_until))
            break;

        size_t n = 0;
        fds[n++] = (struct pollfd){.fd = job->sig_fd, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = job->wake_fd, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = job->report_fd[0], .events = POLLIN};
        for (int r = 0; r < job->nprocs; r++) {
            if (job->procs[r].out_fd >= 0) {
                stream[n] = 2 * r;
                fds[n++] = (struct pollfd){.fd = job->procs[r].out_fd, .events = POLLIN};
            }
            if (job->procs[r].err_fd >= 0) {
                stream[n] = 2 * r + 1;
                fds[n++] = (struct pollfd){.fd = job->procs[r].err_fd, .events = POLLIN};
            }
        }
        int ready = poll(fds, (nfds_t)n, poll_timeout(job, now_ms()));
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            launch_say("poll failed: %s", strerror(errno));
            fail(job, 1, NULL);
            signal_all(job, SIGKILL);
            break;
        }
        if (fds[0].revents != 0)
            read_signals(job);
        if (fds[1].revents != 0)
            drain_wake_pipe(job);
        if (fds[2].revents != 0)
            read_reports(job);
        for (size_t i = 3; i < n; i++) {
            if (fds[i].revents == 0)
                continue;
            launch_proc_t *p = &job->procs[stream[i] / 2];
            if (stream[i] % 2 == 0)
                forward(job, &p->out_fd, &p->out_buf, STDOUT_FILENO, p->rank);
            else
                forward(job, &p->err_fd, &p->err_buf, STDERR_FILENO, p->rank);
        }
    }
    free(fds);
    free(stream);
}

/* The environment every process shares: ampirun's, the -x settings and
 * AMPI_VP.  PMIx adds the per-process part. */
static char **base_environment(const launch_options_t *opt, int report_fd)
{
    char **env = launch_env_copy(environ);
    char vp[16], fd[16];
    snprintf(vp, sizeof vp, "%d", opt->nvp);
    snprintf(fd, sizeof fd, "%d", report_fd);
    if (env == NULL || launch_env_apply_exports(&env, opt->exports) != 0 ||
        launch_env_set(&env, "AMPI_VP", vp) != 0 ||
        launch_env_set(&env, "AMPI_LAUNCH_REPORT_FD", fd) != 0) {
        launch_env_free(env);
        return NULL;
    }
    return env;
}

/* The lowest-numbered hardware thread of CPU c's core (c itself when the
 * kernel does not say). */
static int first_sibling(int c)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
    FILE *f = fopen(path, "r");
    int first = c;
    if (f) {
        if (fscanf(f, "%d", &first) != 1)
            first = c;
        fclose(f);
    }
    return first;
}

/* The CPUs we may use, in order: one hardware thread of every core first,
 * then the cores' other threads, so that two processes never share a core
 * while a core is free (a spinning neighbour on the same core slows the
 * other's copies -- Open MPI's --bind-to core does the same).  Processes
 * get one each when there are enough (an oversubscribed job is better left
 * to the kernel).  Where there are twice as many, each process's progress
 * threads (nonblocking collectives, one-sided) get one more of their own,
 * so that they advance transfers while the ranks compute instead of taking
 * turns with them on one core. */
static void choose_cpus(job_t *job)
{
    cpu_set_t allowed;
    int cpus[CPU_SETSIZE], n = 0;
    for (int r = 0; r < job->nprocs; r++)
        job->procs[r].bind_cpu = job->procs[r].progress_cpu = -1;
    if (job->opt->bind_none || sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (!CPU_ISSET(c, &allowed))
                continue;
            int first = first_sibling(c);
            bool primary = first == c || first < 0 || first >= CPU_SETSIZE || !CPU_ISSET(first, &allowed);
            if (primary == (pass == 0))
                cpus[n++] = c;
        }
    if (n < job->nprocs)
        return;
    for (int r = 0; r < job->nprocs; r++) {
        job->procs[r].bind_cpu = cpus[r];
        if (n >= 2 * job->nprocs)
            job->procs[r].progress_cpu = cpus[job->nprocs + r];
    }
}

static void spawn_all(job_t *job, char *const *base_env, const char *path, int devnull)
{
    choose_cpus(job);
    for (int r = 0; r < job->nprocs && !job->ending; r++) {
        launch_proc_t *p = &job->procs[r];
        char **env = launch_env_copy(base_env);
        char cpu[16];
        snprintf(cpu, sizeof cpu, "%d", p->progress_cpu);
        /* a value the user set (-1: no CPU of their own) is kept */
        if (env != NULL && p->progress_cpu >= 0 && launch_env_get(env, "AMPI_PROGRESS_CPU") == NULL &&
            launch_env_set(&env, "AMPI_PROGRESS_CPU", cpu) != 0) {
            launch_env_free(env);
            env = NULL;
        }
        if (env == NULL || launch_pmix_prepare_client(r, &env) != 0) {
            launch_env_free(env);
            fail(job, 1, NULL);
            break;
        }
        /* Rank 0 talks to the user; the others must not steal input. */
        int stdin_fd = r == 0 ? STDIN_FILENO : devnull;
        int rc = launch_spawn(p, path, job->opt->prog_argv, env, stdin_fd, job->report_fd[1]);
        launch_env_free(env);
        if (rc != 0) {
            /* The shell's convention: 127 not found, 126 not executable. */
            fail(job, rc == ENOENT ? 127 : rc > 0 ? 126 : 1, NULL);
            break;
        }
        job->live++;
    }
}

int launch_run_job(const launch_options_t *opt, int wake_fd, int *term_signal)
{
    job_t job = {.opt = opt, .nprocs = opt->nprocs, .wake_fd = wake_fd, .sig_fd = -1,
                 .report_fd = {-1, -1}, .timeout_at = -1, .kill_at = -1, .drain_until = -1};
    *term_signal = 0;

    if (launch_report_open(job.report_fd) != 0) {
        launch_say("cannot create a pipe: %s", strerror(errno));
        return 1;
    }
    char **base_env = base_environment(opt, job.report_fd[1]);
    if (base_env == NULL) {
        launch_say("out of memory");
        close(job.report_fd[0]);
        close(job.report_fd[1]);
        return 1;
    }
    char *path = launch_find_program(opt->prog_argv[0], launch_env_get(base_env, "PATH"));
    if (path == NULL) {
        launch_say("%s: command not found", opt->prog_argv[0]);
        launch_env_free(base_env);
        close(job.report_fd[0]);
        close(job.report_fd[1]);
        return 127;
    }

    /* Orphaned descendants become our children, so that a failed job can
     * end them too (see signal_strays). */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t handled;
    launch_signals_handled(&handled);
    job.sig_fd = signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    job.procs = calloc((size_t)opt->nprocs, sizeof *job.procs);
    if (job.sig_fd < 0 || devnull < 0 || job.procs == NULL) {
        launch_say("cannot set up the job: %s", strerror(errno));
        job.exit_status = 1;
        goto out;
    }
    for (int r = 0; r < opt->nprocs; r++) {
        job.procs[r].rank = r;
        job.procs[r].signal_rank = -1;
        job.procs[r].out_fd = job.procs[r].err_fd = -1;
        launch_linebuf_init(&job.procs[r].out_buf);
        launch_linebuf_init(&job.procs[r].err_buf);
    }

    if (opt->timeout_s > 0)
        job.timeout_at = now_ms() + (int64_t)(opt->timeout_s * 1000.0);
    spawn_all(&job, base_env, path, devnull);
    event_loop(&job);

    /* The loop ends only when every process is reaped, unless poll failed:
     * then wait for the SIGKILLed ones rather than leave zombies behind. */
    for (int r = 0; r < opt->nprocs; r++) {
        launch_proc_t *p = &job.procs[r];
        if (p->pid > 0 && !p->reaped)
            waitpid(p->pid, NULL, 0);
        if (p->out_fd >= 0)
            close(p->out_fd);
        if (p->err_fd >= 0)
            close(p->err_fd);
        launch_linebuf_free(&p->out_buf);
        launch_linebuf_free(&p->err_buf);
    }
    *term_signal = job.status_decided ? 0 : job.term_signal;

out:
    close(job.report_fd[0]);
    close(job.report_fd[1]);
    if (job.sig_fd >= 0)
        close(job.sig_fd);
    if (devnull >= 0)
        close(devnull);
    free(job.procs);
    free(path);
    launch_env_free(base_env);
    return job.exit_status;
}
