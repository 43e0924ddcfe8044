/* The side workers of ucx_side.h. */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include <sched.h>
#include "ucx/ucx_side.h"

#include <linux/futex.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>
#include "core/core_settings.h"
#include "ucx/ucx.h"
#include "util/util_log.h"

ucs_status_t ucx_side_open(ucx_side_t *s, const ucp_params_t *params, ucs_thread_mode_t thread_mode, int nprocs,
                           ucp_am_recv_callback_t cb, const char *what)
{
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        return st;
    ucx_config_transports(config); /* one node: no TCP listener */
    st = ucp_init(params, config, &s->context);
    ucp_config_release(config);
    if (st != UCS_OK)
        return st;
    ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = thread_mode };
    st = ucp_worker_create(s->context, &wp, &s->worker);
    if (st != UCS_OK)
        util_fatal("%s worker: %s", what, ucs_status_string(st));
    ucp_am_handler_param_t hp = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                      UCP_AM_HANDLER_PARAM_FIELD_CB,
        .id = UCX_SIDE_AM_ID,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = cb,
    };
    st = ucp_worker_set_am_recv_handler(s->worker, &hp);
    if (st != UCS_OK)
        util_fatal("%s handler: %s", what, ucs_status_string(st));
    s->eps = calloc((size_t)nprocs, sizeof *s->eps);
    if (!s->eps)
        util_fatal("out of memory");
    s->nprocs = nprocs;
    s->efd = -1;
    if (ucp_worker_get_efd(s->worker, &s->efd) != UCS_OK)
        s->efd = -1;
    return UCS_OK;
}

ucp_ep_h ucx_side_connect(ucx_side_t *s, int proc, const void *addr, const char *what)
{
    ucp_ep_params_t ep_params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
        .address = addr,
        .err_mode = UCP_ERR_HANDLING_MODE_NONE,
    };
    ucp_ep_h ep;
    ucs_status_t st = ucp_ep_create(s->worker, &ep_params, &ep);
    if (st != UCS_OK)
        util_fatal("%s endpoint to process %d: %s", what, proc, ucs_status_string(st));
    return ep;
}

enum { NAP_NS = 50000, NAP_MAX_NS = 1000000, POLLING_NS = 20000, SPIN_NAP_NS = 2000 };
#define SPIN_AWAKE_NS 200000u /* spin mode: awake this long after the last work */

/* Whether the ranks' thread polled within the last POLLING_NS: it was in a
 * wait loop when this thread took the core from it. */
static bool polling_now(ucx_side_t *s)
{
    uint64_t t = atomic_load_explicit(&s->pe_stamp, memory_order_relaxed);
    return ucx_side_now() - t < POLLING_NS;
}

/* Nap *n ns, and twice as long (up to NAP_MAX_NS) next time: growing naps
 * spare a core shared with the ranks.  A thread on a CPU of its own keeps
 * the shortest nap, so that a collective started while the ranks compute
 * finds it awake. */
static void back_off(long *n, bool own_cpu)
{
    struct timespec t = { 0, *n };
    nanosleep(&t, NULL);
    if (!own_cpu)
        *n = *n * 2 < NAP_MAX_NS ? *n * 2 : NAP_MAX_NS;
}

static long long progress_cpu(void)
{
    long long cpu = -1;
    if (!core_setting_int(CORE_SET_PROGRESS_CPU, &cpu) || cpu < 0 || cpu >= CPU_SETSIZE)
        return -1;
    return cpu;
}

bool ucx_side_has_cpu(void) { return progress_cpu() >= 0; }

/* The CPU the launcher gave the process's progress threads, if any. */
static bool pin_to_progress_cpu(void)
{
    long long cpu = progress_cpu();
    if (cpu < 0)
        return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        util_debug("progress thread: CPU %lld refused", cpu);
        return false;
    }
    return true;
}

/* AMPI_PROGRESS_SPIN_PAUSE, stored as a spin-mode thread starts (every
 * thread stores the same value) */
static _Atomic bool spin_pause = true;

/* Spin mode (ucx_side.h): a thread on a CPU of its own with the stamped
 * worker, unless AMPI_PROGRESS_SPIN=off. */
static bool spin_mode(const ucx_side_t *s, bool own_cpu)
{
    if (!own_cpu || !s->stamped || !core_setting_bool(CORE_SET_PROGRESS_SPIN))
        return false;
    atomic_store_explicit(&spin_pause, core_setting_bool(CORE_SET_PROGRESS_SPIN_PAUSE), memory_order_relaxed);
    util_debug("progress thread: a CPU of its own, spin mode");
    return true;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spin mode's short wait: ns of pause instructions on the thread's own CPU,
 * never a sleep.  In a virtual machine a nanosleep of 2 us, even with a
 * timer slack of 1 ns, returns after 6.2-6.9 us on average and up to 28 us
 * on the 2 x H200 host (19.9 us, up to 68 us, on the 2-vCPU development
 * machine): as long as a whole 64 KiB collective, so that the steps of one
 * that started while the thread slept waited for it. */
static void spin_ns(long ns)
{
    uint64_t end = ucx_side_now() + (uint64_t)ns;
    /* a plain loop: no pause-loop exits to a hypervisor */
    if (!atomic_load_explicit(&spin_pause, memory_order_relaxed)) {
        for (volatile unsigned turns = 0; ucx_side_now() < end;)
            for (int i = 0; i < 32; i++)
                turns++;
        return;
    }
    do {
        for (int i = 0; i < 32; i++)
            cpu_relax();
    } while (ucx_side_now() < end);
}

#define COUNT(s, field, n) \
    do { \
        if (UTIL_UNLIKELY(util_debug_enabled)) \
            atomic_fetch_add_explicit(&(s)->field, (n), memory_order_relaxed); \
    } while (0)

void ucx_side_report(ucx_side_t *s, const char *what)
{
    util_debug("%s progress thread: %lu polls with no work under way, %lu with work (%lu found some, %.1f us "
               "held), %lu stood aside", what, atomic_load(&s->idle_holds), atomic_load(&s->busy_holds),
               atomic_load(&s->busy_holds_found), (double)atomic_load(&s->busy_held_ns) / 1e3,
               atomic_load(&s->asides));
}

/* The nap after a look that found the ranks' thread at the worker. */
static void stand_aside(ucx_side_t *s, long *long_nap, bool own_cpu, bool spin)
{
    COUNT(s, asides, 1);
    if (spin)
        spin_ns(SPIN_NAP_NS);
    else
        back_off(long_nap, own_cpu);
}

/* Spin mode with no work under way: sleep until ucx_side_busy announces
 * some (NAP_MAX_NS at most, the safety net of a missed wake). */
static void doze(ucx_side_t *s)
{
    atomic_store(&s->dozing, true);
    if (atomic_load(&s->busy) == 0) {
        struct timespec t = { 0, NAP_MAX_NS };
        syscall(SYS_futex, (void *)&s->busy, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
    }
    atomic_store(&s->dozing, false);
}

void ucx_side_busy(ucx_side_t *s, int n)
{
    /* seq_cst on both sides: either the thread sees n before it sleeps or
     * this sees it dozing and wakes it */
    if (atomic_exchange(&s->busy, n) == 0 && n > 0 && atomic_load(&s->dozing))
        syscall(SYS_futex, (void *)&s->busy, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Whether the ranks' thread waits inside MPI (s->waiting): it polls the
 * worker itself then, and a poll of this thread would only hold the
 * worker's lock against it and pull the worker's state to this CPU. */
static bool ranks_waiting(const ucx_side_t *s)
{
    return s->waiting && atomic_load_explicit(s->waiting, memory_order_relaxed);
}

static __thread bool on_side_thread;

bool ucx_side_on_thread(void) { return on_side_thread; }

static void *side_thread(void *arg)
{
    ucx_side_t *s = arg;
    on_side_thread = true;
    /* on a CPU of its own it advances transfers while the ranks compute
     * rather than taking turns with them */
    bool own_cpu = pin_to_progress_cpu(), spin = spin_mode(s, own_cpu);
    unsigned idle = 0, seen = atomic_load(&s->pe_polls);
    struct timespec nap = { 0, NAP_NS };
    long long_nap = NAP_NS; /* stamped: the nap while the ranks' thread keeps polling */
    uint64_t last_work = 0; /* spin mode: when work was last seen under way */
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        unsigned now = atomic_load_explicit(&s->pe_polls, memory_order_relaxed);
        if (s->stamped && atomic_load_explicit(&s->busy, memory_order_relaxed) == 0) {
            seen = now;
            if (!s->lock || pthread_mutex_trylock(s->lock) == 0) {
                COUNT(s, idle_holds, 1);
                ucp_worker_progress(s->worker);
                if (s->lock)
                    pthread_mutex_unlock(s->lock);
            }
            if (!spin)
                back_off(&long_nap, own_cpu);
            else if (ucx_side_now() - last_work < SPIN_AWAKE_NS)
                spin_ns(SPIN_NAP_NS);
            else
                doze(s);
            continue;
        }
        if (spin)
            last_work = ucx_side_now();
        if (ranks_waiting(s)) {
            /* the users' own work (copies) still shares out: it holds the
             * lock only to take a piece */
            seen = now;
            if (!(s->work && s->work()))
                stand_aside(s, &long_nap, own_cpu, spin);
            continue;
        }
        if (now != seen) {
            seen = now;
            idle = 0;
            if (!s->stamped) {
                nanosleep(&nap, NULL);
                continue;
            }
            if (polling_now(s)) {
                stand_aside(s, &long_nap, own_cpu, spin);
                continue;
            }
        }
        if (s->lock && pthread_mutex_trylock(s->lock) != 0) {
            /* the ranks' thread is progressing: waiting for it on this core
             * would only take the core from it */
            if (s->stamped)
                stand_aside(s, &long_nap, own_cpu, spin);
            else
                nanosleep(&nap, NULL);
            continue;
        }
        long_nap = NAP_NS; /* the ranks' thread is elsewhere: this thread polls for it */
        uint64_t t0 = UTIL_UNLIKELY(util_debug_enabled) ? ucx_side_now() : 0;
        unsigned n = ucp_worker_progress(s->worker);
        ucs_status_t armed = UCS_ERR_BUSY;
        if (!n && ++idle >= 64 && s->efd >= 0 && !spin)
            armed = ucp_worker_arm(s->worker);
        if (s->lock)
            pthread_mutex_unlock(s->lock);
        if (UTIL_UNLIKELY(util_debug_enabled)) {
            COUNT(s, busy_holds, 1);
            COUNT(s, busy_holds_found, n > 0);
            COUNT(s, busy_held_ns, ucx_side_now() - t0);
        }
        if (s->work)
            n += (unsigned)s->work();
        if (n) {
            idle = 0;
        } else if (idle >= 64) {
            if (spin) {
                spin_ns(SPIN_NAP_NS); /* a quiet worker: a short wait, never the 1 ms poll */
            } else if (armed != UCS_ERR_BUSY) { /* armed, or arming failed: the timeout is the safety net */
                struct pollfd p = { .fd = s->efd, .events = POLLIN };
                poll(&p, 1, 1);
            } else if (s->efd < 0) {
                nanosleep(&nap, NULL);
            }
        }
    }
    return NULL;
}

void ucx_side_thread_start(ucx_side_t *s, pthread_mutex_t *lock)
{
    if (s->thread_on)
        return;
    s->lock = lock;
    atomic_store(&s->stop, false);
    if (pthread_create(&s->thread, NULL, side_thread, s) == 0)
        s->thread_on = true;
}

static void wait_request(ucx_side_t *s, void *r)
{
    if (!UCS_PTR_IS_PTR(r))
        return;
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
        ucp_worker_progress(s->worker);
    ucp_request_free(r);
}

void ucx_side_close(ucx_side_t *s)
{
    if (s->thread_on) {
        atomic_store(&s->stop, true);
        pthread_join(s->thread, NULL);
        s->thread_on = false;
    }
    ucp_request_param_t prm = { .op_attr_mask = 0 };
    wait_request(s, ucp_worker_flush_nbx(s->worker, &prm));
    /* every rank has passed MPI_Finalize's barrier, so no traffic is under
     * way, and a peer may already be gone: nothing waits for it */
    ucp_request_param_t force = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE };
    for (int i = 0; i < s->nprocs; i++)
        if (s->eps[i])
            wait_request(s, ucp_ep_close_nbx(s->eps[i], &force));
    free(s->eps);
    s->eps = NULL;
    ucp_worker_destroy(s->worker);
    ucp_cleanup(s->context);
}
