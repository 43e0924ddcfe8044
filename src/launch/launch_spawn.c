/* Starting the processes.  ampirun blocks the signals it reads through a
 * signalfd and ignores SIGPIPE; a child must not inherit either, so the
 * original mask and dispositions are restored between fork and exec (with
 * async-signal-safe calls only: PMIx's threads exist by then). */
#define _GNU_SOURCE
#include <sched.h>
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static sigset_t saved_mask;

/* Dispositions ampirun changes: SIGPIPE is ignored (a closed stdout must not
 * kill the launcher), SIGINT/SIGTERM/SIGCHLD are set to default because a
 * signal ignored on entry (e.g. a background job of a non-interactive shell)
 * would be discarded instead of reaching the signalfd. */
static const int changed_signals[] = {SIGPIPE, SIGINT, SIGTERM, SIGCHLD};
#define NCHANGED (sizeof changed_signals / sizeof changed_signals[0])
static struct sigaction saved_actions[NCHANGED];

void launch_signals_handled(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    /* SIGHUP keeps its disposition: under nohup it stays ignored. */
    sigaddset(set, SIGHUP);
}

int launch_signals_setup(void)
{
    sigset_t set;
    launch_signals_handled(&set);
    if (pthread_sigmask(SIG_BLOCK, &set, &saved_mask) != 0)
        return -1;
    for (size_t i = 0; i < NCHANGED; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = changed_signals[i] == SIGPIPE ? SIG_IGN : SIG_DFL;
        sigemptyset(&sa.sa_mask);
        if (sigaction(changed_signals[i], &sa, &saved_actions[i]) != 0)
            return -1;
    }
    return 0;
}

static void restore_signals_in_child(void)
{
    for (size_t i = 0; i < NCHANGED; i++)
        sigaction(changed_signals[i], &saved_actions[i], NULL);
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

static void close_pair(int p[2])
{
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    p[0] = p[1] = -1;
}

int launch_spawn(launch_proc_t *proc, const char *path, char *const *argv, char *const *env,
                 int stdin_fd, int report_fd)
{
    pid_t launcher = getpid();
    int out[2] = {-1, -1}, err[2] = {-1, -1}, exec_status[2] = {-1, -1};
    /* Close-on-exec everywhere: a child must not hold other children's
     * pipes, or ampirun would never see their end of file. */
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
        pipe2(exec_status, O_CLOEXEC) != 0) {
        launch_say("cannot create pipes for process %d: %s", proc->rank, strerror(errno));
        close_pair(out), close_pair(err), close_pair(exec_status);
        return -1;
    }

    pid_t pid = fork();
    if (pid < 0) {
        launch_say("cannot fork process %d: %s", proc->rank, strerror(errno));
        close_pair(out), close_pair(err), close_pair(exec_status);
        return -1;
    }
    if (pid == 0) {
        /* dup2 clears close-on-exec on the copies. */
        if (dup2(stdin_fd, STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
            dup2(err[1], STDERR_FILENO) < 0) {
            int e = errno;
            ssize_t n = write(exec_status[1], &e, sizeof e);
            (void)n;
            _exit(127);
        }
        if (stdin_fd == STDIN_FILENO) {
            /* dup2 onto itself keeps the flags: make sure it stays open. */
            int flags = fcntl(STDIN_FILENO, F_GETFD);
            if (flags >= 0)
                fcntl(STDIN_FILENO, F_SETFD, flags & ~FD_CLOEXEC);
        }
        /* The one fd of ampirun's a process keeps: its reports. */
        int report_flags = fcntl(report_fd, F_GETFD);
        if (report_flags >= 0)
            fcntl(report_fd, F_SETFD, report_flags & ~FD_CLOEXEC);
        /* Die with ampirun, even by kill -9: the job is over then, and
         * nobody would reap or end it (launch_clean.c sweeps its files). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != launcher)
            _exit(127); /* ampirun died before the request took effect */
        restore_signals_in_child();
        if (proc->bind_cpu >= 0) {
            /* like mpirun --bind-to core: a process that stays on its core
             * keeps its caches and its polling loop never migrates */
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(proc->bind_cpu, &set);
            (void)sched_setaffinity(0, sizeof set, &set);
        }
        execve(path, argv, env);
        int e = errno;
        ssize_t n = write(exec_status[1], &e, sizeof e);
        (void)n;
        _exit(127);
    }

    close(out[1]);
    close(err[1]);
    close(exec_status[1]);
    /* The status pipe closes at a successful exec: nothing to read means the
     * program runs; an int means exec (or the redirection) failed. */
    int child_errno = 0;
    ssize_t n;
    do
        n = read(exec_status[0], &child_errno, sizeof child_errno);
    while (n < 0 && errno == EINTR);
    close(exec_status[0]);
    if (n > 0) {
        launch_say("cannot execute %s: %s", path, strerror(child_errno));
        waitpid(pid, NULL, 0);
        close(out[0]);
        close(err[0]);
        return child_errno > 0 ? child_errno : -1;
    }

    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
    proc->pid = pid;
    proc->out_fd = out[0];
    proc->err_fd = err[0];
    return 0;
}
