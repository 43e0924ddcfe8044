/* Nothing left behind.  A job's files are the PMIx server's directory (in
 * TMPDIR) and the processes' shared-memory segments in /dev/shm, named
 * "ampi-<namespace>-..." by src/shm/shm.c (our namespace: launch_nspace).
 * The processes unlink their segments once every peer has mapped them;
 * whatever a death before that point leaves, ampirun removes at the end of
 * the job -- and when ampirun itself dies without an ending (kill -9), a
 * janitor process does: it waits for ampirun's end of a pipe to close and
 * sweeps the same names (the processes die with ampirun: launch_spawn asks
 * the kernel for SIGKILL at their parent's death). */
#define _GNU_SOURCE
#include "launch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"

static int janitor_fd = -1;

const char *launch_nspace(void)
{
    /* The pid alone is not unique: containers with pid namespaces of their
     * own may share /dev/shm, and the sweep must only ever take ours. */
    static char name[64];
    if (name[0] == '\0') {
        unsigned salt;
        if (getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt)
            salt = (unsigned)time(NULL) ^ (unsigned)clock();
        snprintf(name, sizeof name, "ampirun-%ld-%08x", (long)getpid(), salt);
    }
    return name;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void launch_sweep(const char *tmpdir, const char *nspace)
{
    if (tmpdir != NULL)
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    char prefix[96];
    int len = snprintf(prefix, sizeof prefix, "ampi-%s-", nspace);
    DIR *d = opendir(SHM_DIR);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, (size_t)len) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void janitor(int fd, const char *tmpdir, const char *nspace)
{
    /* Its own session: a Ctrl-C at the terminal is for the job, not for
     * the janitor, and no stdio holds a pipe that a caller reads to EOF. */
    setsid();
    int nul = open("/dev/null", O_RDWR);
    for (int i = 0; i <= 2 && nul >= 0; i++)
        dup2(nul, i);
    /* Nor any other descriptor ampirun was started with (a caller's pipe
     * would otherwise stay open while the janitor waits). */
    if (dup2(fd, 3) == 3)
        fd = 3;
    for (int i = 4; i < 1024; i++)
        close(i);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    if (n == 1)
        _exit(0); /* ampirun cleaned up itself */
    /* ampirun died: its processes are being killed (their parent-death
     * signal); one might still be inside shm_open, so sweep again later. */
    static const long after_ms[] = {0, 100, 400, 1500};
    for (size_t i = 0; i < sizeof after_ms / sizeof after_ms[0]; i++) {
        pause_ms(after_ms[i]);
        launch_sweep(tmpdir, nspace);
    }
    _exit(0);
}

int launch_janitor_start(const char *tmpdir)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    const char *nspace = launch_nspace();
    /* A grandchild: not ampirun's child, so the job's reaping and its hunt
     * for strays never see it. */
    pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (child == 0) {
        close(fds[1]);
        pid_t grandchild = fork();
        if (grandchild == 0)
            janitor(fds[0], tmpdir, nspace);
        _exit(grandchild < 0 ? 1 : 0);
    }
    close(fds[0]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        close(fds[1]);
        return -1;
    }
    janitor_fd = fds[1];
    return 0;
}

void launch_janitor_dismiss(void)
{
    if (janitor_fd < 0)
        return;
    ssize_t n = write(janitor_fd, "q", 1);
    (void)n;
    close(janitor_fd);
    janitor_fd = -1;
}
