/* mpi_prog: the MPI program the launcher tests run (built with ampicc).
 *
 *   mpi_prog hello             a barrier; rank 0 prints "hello N ranks"
 *   mpi_prog segv|fpe|abort R  rank R dies of that signal, the others wait
 *   mpi_prog overflow R        rank R overflows its stack
 *   mpi_prog mpi_abort R       rank R calls MPI_Abort(MPI_COMM_WORLD, 7)
 *   mpi_prog hang              every rank waits for a message that never comes
 *   mpi_prog quiet             hello without the per-rank lines; after the
 *                              barrier each process prints "peak P kB" (its
 *                              VmHWM) once
 *   mpi_prog progress_cpu      an Ibcast of 1 MiB (which starts the process's
 *                              progress thread), then each process prints
 *                              "process on cpus L: N threads on cpus C" -- L its
 *                              main thread's allowed CPUs, C AMPI_PROGRESS_CPU,
 *                              N how many of its other threads may run on C only
 *
 * Every rank (but in quiet mode) prints "rank R pid P" after MPI_Init. */
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int keep_recursing = 1; /* hides the endless recursion */

static long __attribute__((noinline)) recurse_forever(long n)
{
    volatile char pad[512];
    pad[n & 511] = (char)n;
    return (keep_recursing ? recurse_forever(n + 1) : 0) + pad[n & 511];
}

/* Not inlined, so that the backtrace has a frame with this name.  Not
 * checked by UBSan (a sanitizer build): the misaligned store and the
 * division by zero are the point, and must reach the signal handler. */
__attribute__((noinline, no_sanitize("undefined"))) static void die_in_rank(const char *how, int rank)
{
    if (strcmp(how, "segv") == 0)
        *(volatile int *)(uintptr_t)rank = 1; /* rank is small: an unmapped page */
    if (strcmp(how, "fpe") == 0) {
        volatile int zero = 0;
        printf("%d\n", rank / zero);
    }
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "overflow") == 0)
        printf("%ld\n", recurse_forever(0));
    if (strcmp(how, "mpi_abort") == 0)
        MPI_Abort(MPI_COMM_WORLD, 7);
}

/* The Cpus_allowed_list of /proc/self/task/TID/status (TID 0: the process). */
static void allowed_cpus(long tid, char *out, size_t len)
{
    char path[64], line[256];
    if (tid)
        snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    snprintf(out, len, "?");
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            char *v = line + 18;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = '\0';
            snprintf(out, len, "%s", v);
        }
    if (f)
        fclose(f);
}

static void report_progress_cpu(void)
{
    static char buf[1 << 20];
    MPI_Request req;
    MPI_Ibcast(buf, (int)sizeof buf, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    static bool printed; /* once per process */
    if (printed)
        return;
    printed = true;
    const char *want = getenv("AMPI_PROGRESS_CPU");
    char mine[128], theirs[128];
    allowed_cpus((long)getpid(), mine, sizeof mine);
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == (long)getpid())
            continue;
        allowed_cpus(tid, theirs, sizeof theirs);
        n += want != NULL && strcmp(theirs, want) == 0;
    }
    if (d)
        closedir(d);
    printf("process on cpus %s: %d threads on cpus %s\n", mine, n, want ? want : "unset");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "hello";
    bool quiet = strcmp(mode, "quiet") == 0;
    if (!quiet) {
        printf("rank %d pid %ld\n", rank, (long)getpid());
        fflush(stdout);
    }
    if (strcmp(mode, "hang") == 0) {
        /* a receive, not sleep(): the other ranks of the process run on */
        int x;
        MPI_Recv(&x, 1, MPI_INT, rank, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(mode, "hello") != 0 && strcmp(mode, "progress_cpu") != 0 && !quiet) {
        int victim = argc > 2 ? atoi(argv[2]) : 0;
        if (rank == victim)
            die_in_rank(mode, rank);
        /* the others wait for a message that never comes */
        int x;
        MPI_Recv(&x, 1, MPI_INT, victim, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (strcmp(mode, "progress_cpu") == 0)
        report_progress_cpu();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("hello %d ranks\n", size);
    /* once per process: the ranks of a process share its globals */
    static bool peak_printed;
    if (quiet && !peak_printed) {
        peak_printed = true;
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0)
                printf("peak %ld kB\n", strtol(line + 6, NULL, 10));
        if (f)
            fclose(f);
    }
    MPI_Finalize();
    return 0;
}
