/* Fatal signals.  Under +vp one process runs many ranks, so "process 0 was
 * killed by SIGSEGV" does not say whose code faulted: the handler names the
 * rank that was running, prints that rank's backtrace (symbolized by
 * backtrace_symbols_fd, and by addr2line where installed, since the
 * executable's own functions are not in its dynamic symbol table), tells
 * ampirun through the report pipe, then lets the signal kill the process as
 * it would have without us (same status, core dump). */
#define _GNU_SOURCE
#include "env/env_crash.h"
#include "rank/rank_ult.h"
#include "util/util_sigsafe.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_FRAMES 64

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction prev_action[NFATAL];
static int report_fd = -1;
static int this_proc;
static atomic_int fired;

static dev_t report_dev;
static ino_t report_ino;

static int launcher_fd(void)
{
    const char *s = getenv("AMPI_LAUNCH_REPORT_FD");
    if (!s || !*s)
        return -1;
    char *end;
    long fd = strtol(s, &end, 10);
    struct stat st;
    if (*end || fd < 3 || fd > 1 << 20 || fstat((int)fd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return -1;
    report_dev = st.st_dev;
    report_ino = st.st_ino;
    return (int)fd;
}

/* Still the launcher's pipe?  The program may have closed the descriptor
 * and opened a file of its own under the same number since. */
static bool report_fd_intact(void)
{
    struct stat st;
    return report_fd >= 0 && fstat(report_fd, &st) == 0 && st.st_dev == report_dev && st.st_ino == report_ino;
}

void env_report_ranks(int proc, int first, int count)
{
    int fd = launcher_fd();
    if (fd < 0)
        return;
    char line[80];
    int n = snprintf(line, sizeof line, "ranks %d %d %d\n", proc, first, count);
    ssize_t w = write(fd, line, (size_t)n); /* one write below PIPE_BUF: never split */
    (void)w;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGILL: return "Illegal instruction";
    case SIGABRT: return "Aborted";
    default: return "fatal signal";
    }
}

static const char *find_addr2line(void)
{
    static const char *const tools[] = { "/usr/bin/addr2line", "/usr/local/bin/addr2line", "/bin/addr2line" };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (access(tools[i], X_OK) == 0)
            return tools[i];
    return NULL;
}

/* "addr2line -e OBJECT ADDRESS": function, file and line where the object
 * has debug information; bounded by an alarm in case it stalls. */
static void run_addr2line(const char *tool, const char *object, uintptr_t address)
{
    char addr[24];
    *util_sig_put_hex(addr, address) = '\0';
    pid_t pid = fork();
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        alarm(10);
        char *const argv[] = { (char *)tool, (char *)"-C", (char *)"-f", (char *)"-p", (char *)"-e", (char *)object,
                               addr, NULL };
        char *const envp[] = { NULL };
        execve(tool, argv, envp);
        _exit(127);
    }
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
}

/* Where the signal struck, so that the handler's own frames are skipped. */
static uintptr_t fault_pc(const void *ucv)
{
    const ucontext_t *uc = ucv;
    if (!uc)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

static void print_backtrace(const void *uc)
{
    void *frames[MAX_FRAMES];
    int n = backtrace(frames, MAX_FRAMES), first = 0;
    uintptr_t pc = fault_pc(uc);
    for (int i = 0; i < n && pc; i++)
        if ((uintptr_t)frames[i] == pc) {
            first = i;
            break;
        }
    const char *tool = find_addr2line();
    for (int i = first; i < n; i++) {
        char line[48], *p = util_sig_put_str(line, "  #");
        p = util_sig_put_num(p, i - first);
        p = util_sig_put_str(p, " ");
        util_sig_say(line, p);
        backtrace_symbols_fd(&frames[i], 1, STDERR_FILENO);
        Dl_info info;
        /* system libraries carry no line tables: spare the fork */
        if (!tool || !dladdr(frames[i], &info) || !info.dli_fname || !info.dli_fbase ||
            strncmp(info.dli_fname, "/lib", 4) == 0 || strncmp(info.dli_fname, "/usr/lib", 8) == 0)
            continue;
        /* a return address: the call is the byte before it */
        uintptr_t at = (uintptr_t)frames[i] - (i > first ? 1 : 0);
        /* a position-independent object: addresses relative to its base */
        const ElfW(Ehdr) *eh = info.dli_fbase;
        if (eh->e_type == ET_DYN)
            at -= (uintptr_t)info.dli_fbase;
        const char *object = info.dli_fname[0] ? info.dli_fname : "/proc/self/exe";
        static const char indent[] = "      ";
        util_sig_say(indent, indent + sizeof indent - 1);
        run_addr2line(tool, object, at);
    }
}

static int signal_index(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i] == sig)
            return (int)i;
    return -1;
}

/* "signal P RANK SIG" for ampirun; async-signal-safe. */
static void report_signal(int rank, int sig)
{
    if (!report_fd_intact())
        return;
    char msg[80], *p = util_sig_put_str(msg, "signal ");
    p = util_sig_put_num(p, this_proc);
    p = util_sig_put_str(p, " ");
    p = util_sig_put_num(p, rank);
    p = util_sig_put_str(p, " ");
    p = util_sig_put_num(p, sig);
    p = util_sig_put_str(p, "\n");
    ssize_t w = write(report_fd, msg, (size_t)(p - msg));
    (void)w;
}

/* rank_guard said which rank overflowed its stack: tell ampirun too. */
static void on_overflow(int sig, const rank_ult_t *ult)
{
    if (atomic_exchange(&fired, 1) == 0)
        report_signal(ult->id, sig);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    int idx = signal_index(sig);
    const struct sigaction *prev = idx >= 0 ? &prev_action[idx] : NULL;
    bool foreign = prev && ((prev->sa_flags & SA_SIGINFO) || (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN));
    if (atomic_exchange(&fired, 1) == 0) {
        const rank_ult_t *u = rank_self();
        char msg[256], *p = util_sig_put_str(msg, "ampi: ");
        if (u) {
            p = util_sig_put_str(p, "rank ");
            p = util_sig_put_num(p, u->id);
            p = util_sig_put_str(p, " (process ");
        } else {
            p = util_sig_put_str(p, "process ");
        }
        p = util_sig_put_num(p, this_proc);
        p = util_sig_put_str(p, u ? ", pid " : " (pid ");
        p = util_sig_put_num(p, getpid());
        p = util_sig_put_str(p, ") got signal ");
        p = util_sig_put_num(p, sig);
        p = util_sig_put_str(p, " (");
        p = util_sig_put_str(p, signal_name(sig));
        p = util_sig_put_str(p, ")");
        if (sig != SIGABRT && si->si_code > 0) {
            p = util_sig_put_str(p, " at address ");
            p = util_sig_put_hex(p, (uintptr_t)si->si_addr);
        }
        p = util_sig_put_str(p, "\n");
        util_sig_say(msg, p);
        if (u)
            report_signal(u->id, sig);
        /* a sanitizer's or debugger's handler prints its own trace */
        if (!foreign) {
            p = util_sig_put_str(msg, "ampi: backtrace");
            if (u) {
                p = util_sig_put_str(p, " of rank ");
                p = util_sig_put_num(p, u->id);
            }
            p = util_sig_put_str(p, ":\n");
            util_sig_say(msg, p);
            print_backtrace(uc);
        }
    }
    if (foreign) {
        if (prev->sa_flags & SA_SIGINFO)
            prev->sa_sigaction(sig, si, uc);
        else
            prev->sa_handler(sig);
        return;
    }
    util_sig_die_by(sig, si);
}

void env_crash_install(int proc)
{
    static atomic_int installed;
    if (atomic_exchange(&installed, 1))
        return;
    this_proc = proc;
    report_fd = launcher_fd();
    /* backtrace loads libgcc's unwinder on its first call: not in a handler */
    void *warm[2];
    (void)backtrace(warm, 2);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    /* SA_ONSTACK: the PE threads' alternate stacks (rank_guard) */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], &sa, &prev_action[i]);
    rank_guard_on_overflow(on_overflow);
}
