/* Stack-overflow detection: a SIGSEGV/SIGBUS handler, running on an
 * alternate signal stack (the faulting stack is full), that recognises a
 * touch of a live ULT's guard page and says which rank overflowed and what
 * to do about it.  Every other fault goes on to whatever handler was there
 * before (normally the default action), so debuggers, core dumps and other
 * libraries' handlers behave as without us. */
#define _GNU_SOURCE
#include "rank/rank_guard.h"
#include "util/util_sigsafe.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Live stacks.  Writers lock; the handler cannot lock and just walks the
 * list.  A fault that races with another thread creating or destroying a ULT
 * might miss or misread one entry: the fault still kills the process, only
 * the message could be lost. */
static util_dlist_t live = { { &live.head, &live.head } };
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

void rank_guard_add(rank_guard_entry_t *e, const rank_ult_t *ult)
{
    e->ult = ult;
    pthread_mutex_lock(&live_lock);
    util_dlist_push_back(&live, &e->link);
    pthread_mutex_unlock(&live_lock);
}

void rank_guard_remove(rank_guard_entry_t *e)
{
    pthread_mutex_lock(&live_lock);
    util_dlist_remove(&e->link);
    pthread_mutex_unlock(&live_lock);
}

const rank_ult_t *rank_guard_find(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    UTIL_DLIST_FOREACH(&live, it) {
        const rank_ult_t *ult = UTIL_CONTAINER_OF(it, rank_guard_entry_t, link)->ult;
        uintptr_t guard_lo = (uintptr_t)ult->stack_map;
        uintptr_t guard_hi = guard_lo + (ult->stack_map_size - ult->stack_size);
        if (a >= guard_lo && a < guard_hi)
            return ult;
    }
    return NULL;
}

static void report_overflow(const rank_ult_t *ult)
{
    char msg[160];
    char *p = util_sig_put_str(msg, "ampi: rank ");
    p = util_sig_put_num(p, ult->id);
    p = util_sig_put_str(p, " overflowed its ");
    p = util_sig_put_num(p, (long long)ult->stack_size);
    p = util_sig_put_str(p, "-byte stack (set AMPI_STACK_SIZE to a larger size)\n");
    util_sig_say(msg, p);
}

/* --- the handler --- */

static struct sigaction prev_segv, prev_bus;
static void (*overflow_hook)(int sig, const rank_ult_t *ult);

void rank_guard_on_overflow(void (*hook)(int sig, const rank_ult_t *ult))
{
    overflow_hook = hook;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    const rank_ult_t *ult = si->si_code > 0 ? rank_guard_find(si->si_addr) : NULL;
    /* A stack of a shared mapping (rank_stack.h) that overflows runs through
     * the slots below it down to the mapping's one guard page, which is
     * listed under the lowest slot's ULT: the rank that overflowed is the
     * one running on this thread. */
    const rank_ult_t *running = rank_self();
    if (ult && running)
        ult = running;
    if (ult) {
        report_overflow(ult);
        if (overflow_hook)
            overflow_hook(sig, ult);
        util_sig_die_by(sig, si);
        return;
    }
    const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;
    if (prev->sa_flags & SA_SIGINFO)
        prev->sa_sigaction(sig, si, uc);
    else if (prev->sa_handler == SIG_DFL || (prev->sa_handler == SIG_IGN && si->si_code > 0))
        util_sig_die_by(sig, si); /* a real fault cannot be ignored: the kernel would kill us anyway */
    else if (prev->sa_handler != SIG_IGN)
        prev->sa_handler(sig);
}

static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &prev_segv);
    sigaction(SIGBUS, &sa, &prev_bus);
}

/* The alternate signal stack is per thread: every PE thread needs one, or the
 * handler would run on the overflowed stack and fault again. */
static __thread int altstack_ready;

static void ensure_altstack(void)
{
    if (altstack_ready)
        return;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) {
        altstack_ready = 1; /* someone (e.g. a sanitizer) set one up already */
        return;
    }
    size_t size = 64 << 10;
#ifdef _SC_SIGSTKSZ
    long min = sysconf(_SC_SIGSTKSZ); /* grows with the CPU's vector state */
    if (min > 0 && (size_t)min * 4 > size)
        size = (size_t)min * 4;
#endif
    /* Kept for the thread's (= the PE's) lifetime; mmap so leak checkers,
     * which only track malloc, do not report it. */
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return; /* overflows will then kill us without the message */
    stack_t ss = { .ss_sp = mem, .ss_size = size, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(mem, size);
        return;
    }
    altstack_ready = 1;
}

void rank_guard_install(void)
{
    pthread_once(&handler_once, install_handlers);
    ensure_altstack();
}
