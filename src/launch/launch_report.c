/* The processes' reports to ampirun.  One pipe, whose write end every
 * process inherits (AMPI_LAUNCH_REPORT_FD names it); the library writes
 * single lines shorter than PIPE_BUF, so lines of several processes never
 * interleave:
 *   "ranks P FIRST COUNT"  process P runs MPI ranks FIRST .. FIRST+COUNT-1
 *   "signal P RANK SIG"    rank RANK of process P got the fatal signal SIG
 * A process reports before it dies, so draining the pipe before judging a
 * death always finds what that process said. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int launch_report_open(int fds[2])
{
    /* Close-on-exec in ampirun; launch_spawn clears it in each child. */
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    return 0;
}

static void take_line(const char *line, launch_proc_t *procs, int nprocs)
{
    int p, a, b;
    if (sscanf(line, "ranks %d %d %d", &p, &a, &b) == 3 && p >= 0 && p < nprocs && b > 0) {
        procs[p].first_rank = a;
        procs[p].nranks = b;
    } else if (sscanf(line, "signal %d %d %d", &p, &a, &b) == 3 && p >= 0 && p < nprocs) {
        procs[p].signal_rank = a;
        procs[p].signal = b;
    }
}

void launch_report_read(int fd, launch_report_buf_t *lb, launch_proc_t *procs, int nprocs)
{
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != '\n') {
                if (lb->len + 1 < sizeof lb->line)
                    lb->line[lb->len++] = buf[i];
                continue;
            }
            lb->line[lb->len] = '\0';
            take_line(lb->line, procs, nprocs);
            lb->len = 0;
        }
    }
}

void launch_describe(const launch_proc_t *p, char *out, size_t cap)
{
    if (p->nranks == 1)
        snprintf(out, cap, "process %d (pid %ld, rank %d)", p->rank, (long)p->pid, p->first_rank);
    else if (p->nranks > 1)
        snprintf(out, cap, "process %d (pid %ld, ranks %d-%d)", p->rank, (long)p->pid,
                 p->first_rank, p->first_rank + p->nranks - 1);
    else
        snprintf(out, cap, "process %d (pid %ld)", p->rank, (long)p->pid);
}
