/* ampirun: runs P processes of one program on this node as a PMIx job.
 *
 *   ampirun [options] -np P [+vp V] prog [args...]
 *
 * Order matters: signals are blocked before PMIx starts its threads (they
 * inherit the mask, so the signals reach our signalfd and not a PMIx
 * thread), and the PMIx server exists before the first child does. */
#define _GNU_SOURCE
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* In sanitizer builds LeakSanitizer reads this at exit: PMIx keeps some
 * allocations of its server until the process ends, which would otherwise
 * turn every run into a failure (exit status 1) that is not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpmix.so\n";
}
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}

/* Children get fds 0-2 by dup2; if ampirun was started with one of them
 * closed, a pipe could land there and be clobbered.  Fill the gaps. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nul = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (nul >= 0 && nul != fd) {
                dup2(nul, fd);
                close(nul);
            }
        }
    }
}

static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    char *dir;
    if (asprintf(&dir, "%s/ampirun.XXXXXX", base) < 0)
        return NULL;
    if (mkdtemp(dir) == NULL) {
        launch_say("cannot create a directory in %s: %s", base, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

/* Die by the signal the user sent, so that a calling shell sees an
 * interrupted command (and stops a script on Ctrl-C) rather than a status. */
static void die_by_signal(int sig)
{
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached unless the signal is ignored */
}

int main(int argc, char **argv)
{
    launch_options_t opt;
    int rc = launch_parse_args(argc, argv, &opt);
    if (rc != 0) {
        launch_free_options(&opt);
        return rc > 0 ? 0 : 2;
    }
    ensure_std_fds();
    if (opt.wdir != NULL && chdir(opt.wdir) != 0) {
        launch_say("cannot change to the directory %s: %s", opt.wdir, strerror(errno));
        launch_free_options(&opt);
        return 2;
    }

    if (launch_signals_setup() != 0) {
        launch_say("cannot set up signal handling: %s", strerror(errno));
        launch_free_options(&opt);
        return 1;
    }

    char *tmpdir = make_tmpdir();
    int wake[2] = {-1, -1};
    int status = 1, term_signal = 0;
    if (tmpdir == NULL)
        goto out;
    if (launch_janitor_start(tmpdir) != 0)
        launch_say("warning: cannot start the clean-up process: a kill -9 of ampirun may leave "
                   "%s and shared-memory segments behind", tmpdir);
    if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        launch_say("cannot create a pipe: %s", strerror(errno));
        goto out;
    }
    if (launch_pmix_start(&opt, tmpdir, wake[1]) != 0)
        goto out;
    status = launch_run_job(&opt, wake[0], &term_signal);

out:
    launch_pmix_stop(status == 0 && term_signal == 0);
    if (wake[0] >= 0) {
        close(wake[0]);
        close(wake[1]);
    }
    /* The PMIx directory, and the segments of processes that died before
     * unlinking theirs. */
    launch_sweep(tmpdir, launch_nspace());
    launch_janitor_dismiss();
    free(tmpdir);
    launch_free_options(&opt);
    if (term_signal != 0)
        die_by_signal(term_signal);
    return status;
}
