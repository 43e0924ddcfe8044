/* Tests of ULTs and the per-PE scheduler: a ring of 1000 ULTs passing a
 * token with block/wake, yield order and progress fairness, wakes that come
 * before the block, the PE's waiting flag, stack-size configuration, and (in child processes) the
 * stack-overflow report, other faults, and the deadlock report. */
#define _GNU_SOURCE
#include "rank/rank_ult.h"
#include "rank/rank_san.h"
#include "rank/rank_stack.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_check.h"

enum { SMALL_STACK = 64 << 10 };

static long progress_calls;
static int count_progress(void *arg)
{
    (void)arg;
    progress_calls++;
    return 0;
}

static rank_ult_t *spawn(rank_pe_t *pe, size_t stack, void (*fn)(void *), void *arg)
{
    rank_ult_t *u = rank_ult_create(pe, stack, fn, arg);
    if (!u) {
        perror("rank_ult_create");
        exit(1);
    }
    return u;
}

/* --- 1. a token ring: ULT i waits for the token, logs, passes it on --- */

enum { RING = 1000, ROUNDS = 5 };
static rank_pe_t ring_pe;
static rank_ult_t *ring[RING];
static int token, ring_log[RING * ROUNDS], ring_nlog, ring_wrong_self;

static void ring_body(void *arg)
{
    int i = (int)(intptr_t)arg;
    if (rank_self() != ring[i] || rank_current_pe() != &ring_pe)
        ring_wrong_self++;
    for (int r = 0; r < ROUNDS; r++) {
        while (token != i)
            rank_block();
        ring_log[ring_nlog++] = i;
        token = (i + 1) % RING;
        rank_wake(ring[token]); /* in the last round ULT 0 is DONE already */
    }
}

static void test_ring(void)
{
    rank_pe_init(&ring_pe, count_progress, NULL);
    for (int i = 0; i < RING; i++)
        ring[i] = spawn(&ring_pe, SMALL_STACK, ring_body, (void *)(intptr_t)i);
    CHECK(ring_pe.nlive == RING, "nlive %d after creating %d", ring_pe.nlive, RING);
    token = 0;
    rank_pe_run(&ring_pe);
    CHECK(ring_pe.nlive == 0, "nlive %d after run", ring_pe.nlive);
    CHECK(ring_nlog == RING * ROUNDS, "%d token passes, expected %d", ring_nlog, RING * ROUNDS);
    int bad = -1;
    for (int k = 0; k < ring_nlog && bad < 0; k++)
        if (ring_log[k] != k % RING)
            bad = k;
    CHECK(bad < 0, "pass %d went to ULT %d, expected %d", bad, ring_log[bad], bad % RING);
    CHECK(ring_wrong_self == 0, "rank_self/rank_current_pe wrong in %d ULTs", ring_wrong_self);
    int not_done = 0;
    for (int i = 0; i < RING; i++) {
        not_done += ring[i]->state != RANK_ULT_DONE;
        rank_ult_destroy(ring[i]);
    }
    CHECK(not_done == 0, "%d ULTs not DONE", not_done);
    CHECK(rank_self() == NULL && rank_current_pe() == NULL, "PE still current after run");
}

/* --- 2. yield: round-robin order, and progress runs once per pass --- */

enum { YIELDERS = 5, YIELDS = 200 };
static int ylog_id[YIELDERS * YIELDS];
static long ylog_progress[YIELDERS * YIELDS];
static int ylog_n;

static void yield_body(void *arg)
{
    for (int k = 0; k < YIELDS; k++) {
        ylog_id[ylog_n] = (int)(intptr_t)arg;
        ylog_progress[ylog_n++] = progress_calls;
        rank_yield();
    }
}

static void test_yield(void)
{
    rank_pe_t pe;
    rank_ult_t *u[YIELDERS];
    rank_pe_init(&pe, count_progress, NULL);
    for (int i = 0; i < YIELDERS; i++)
        u[i] = spawn(&pe, SMALL_STACK, yield_body, (void *)(intptr_t)i);
    progress_calls = 0;
    rank_pe_run(&pe);
    CHECK(ylog_n == YIELDERS * YIELDS, "%d entries", ylog_n);
    int bad = -1;
    for (int k = 0; k < ylog_n && bad < 0; k++)
        if (ylog_id[k] != k % YIELDERS || ylog_progress[k] != k / YIELDERS + 1)
            bad = k;
    CHECK(bad < 0, "entry %d: ULT %d after %ld progress calls, expected ULT %d after %d",
          bad, ylog_id[bad], ylog_progress[bad], bad % YIELDERS, bad / YIELDERS + 1);
    for (int i = 0; i < YIELDERS; i++)
        rank_ult_destroy(u[i]);
}

/* --- 3. wakes that come first are not lost; blocked ULTs wait for a wake --- */

static rank_ult_t *wa, *wb, *wc, *wd, *we, *wf;
static long self_wake_progress_delta = -1, ready_wake_progress_delta = -1;
static int event_flag, event_seen, event_blocks, order[8], norder;
static int d_state_when_blocked = -1, d_state_after_wake = -1;

static void self_wake_body(void *arg)
{
    (void)arg;
    rank_wake(rank_self()); /* RUNNING: must be remembered */
    long before = progress_calls;
    rank_block();           /* so this returns at once, without the scheduler */
    self_wake_progress_delta = progress_calls - before;
    rank_wake(wb);          /* wb has not run yet (READY): remembered too */
}

static void ready_wake_body(void *arg)
{
    (void)arg;
    long before = progress_calls;
    rank_block();
    ready_wake_progress_delta = progress_calls - before;
}

static int event_progress(void *arg)
{
    (void)arg;
    if (++progress_calls == 3) { /* an "operation" completes on the 3rd poll */
        event_flag = 1;
        rank_wake(wc);
        return 1;
    }
    return 0;
}

static void event_waiter_body(void *arg)
{
    (void)arg;
    while (!event_flag) {
        event_blocks++;
        rank_block();
    }
    event_seen = (int)progress_calls;
}

static void blocker_body(void *arg)
{
    (void)arg;
    order[norder++] = 1;
    rank_block(); /* nobody has woken us: must really wait for we */
    order[norder++] = 4;
}

static void waker_body(void *arg)
{
    (void)arg;
    order[norder++] = 2;
    d_state_when_blocked = (int)wd->state;
    rank_wake(wd); /* to the tail of the ready queue: behind wf */
    d_state_after_wake = (int)wd->state;
}

static void bystander_body(void *arg)
{
    (void)arg;
    order[norder++] = 3;
}

static void test_wake_before_block(void)
{
    rank_pe_t pe;
    rank_pe_init(&pe, event_progress, NULL);
    progress_calls = 0;
    wa = spawn(&pe, SMALL_STACK, self_wake_body, NULL);
    wb = spawn(&pe, SMALL_STACK, ready_wake_body, NULL);
    wc = spawn(&pe, SMALL_STACK, event_waiter_body, NULL);
    wd = spawn(&pe, SMALL_STACK, blocker_body, NULL);
    we = spawn(&pe, SMALL_STACK, waker_body, NULL);
    wf = spawn(&pe, SMALL_STACK, bystander_body, NULL);
    rank_pe_run(&pe);
    CHECK(self_wake_progress_delta == 0, "self-woken block went through the scheduler (%ld)",
          self_wake_progress_delta);
    CHECK(ready_wake_progress_delta == 0, "block after a wake while READY went through the "
          "scheduler (%ld)", ready_wake_progress_delta);
    CHECK(event_seen >= 3 && event_blocks >= 1, "waiter saw the event after %d polls, %d blocks",
          event_seen, event_blocks);
    CHECK(d_state_when_blocked == RANK_ULT_BLOCKED && d_state_after_wake == RANK_ULT_READY,
          "states %d -> %d", d_state_when_blocked, d_state_after_wake);
    CHECK(norder == 4 && order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 4,
          "order %d,%d,%d,%d (n=%d)", order[0], order[1], order[2], order[3], norder);
    rank_ult_destroy(wa);
    rank_ult_destroy(wb);
    rank_ult_destroy(wc);
    rank_ult_destroy(wd);
    rank_ult_destroy(we);
    rank_ult_destroy(wf);
}

static void yield_once(void *arg) { (void)arg; rank_yield(); }
static void block_once(void *arg) { (void)arg; rank_block(); }

/* --- 3b. the waiting flag: raised while every ULT is blocked, down for
 * whichever ULT runs, whatever the one before it left --- */

static rank_pe_t wait_pe;
static rank_ult_t *wait_sleeper;
static int idle_polls_up, idle_polls_down, sleeper_resumed_up, starter_up;

static int waiting_progress(void *arg)
{
    (void)arg;
    if (atomic_load(&wait_pe.waiting))
        idle_polls_up++;
    else
        idle_polls_down++;
    if (idle_polls_up == 5 && wait_sleeper->state == RANK_ULT_BLOCKED)
        rank_wake(wait_sleeper);
    return 0;
}

/* a rank inside a wait that blocks without lowering the flag first */
static void sleeper_body(void *arg)
{
    (void)arg;
    rank_waiting_set(&wait_pe, true);
    rank_block();
    sleeper_resumed_up = atomic_load(&wait_pe.waiting);
    rank_waiting_set(&wait_pe, false);
}

/* a rank that starts after it: computing, not waiting */
static void starter_body(void *arg)
{
    (void)arg;
    starter_up = atomic_load(&wait_pe.waiting);
}

static void test_waiting_flag(void)
{
    rank_pe_init(&wait_pe, waiting_progress, NULL);
    CHECK(!atomic_load(&wait_pe.waiting), "a new PE says its ranks wait");
    rank_ult_t *a = spawn(&wait_pe, SMALL_STACK, sleeper_body, NULL);
    rank_ult_t *b = spawn(&wait_pe, SMALL_STACK, starter_body, NULL);
    wait_sleeper = a;
    rank_pe_run(&wait_pe);
    CHECK(!starter_up, "a ULT started with the flag its predecessor raised");
    CHECK(idle_polls_up >= 5, "the flag was up in %d of the scheduler's idle polls (%d down)", idle_polls_up,
          idle_polls_down);
    CHECK(!sleeper_resumed_up, "a woken ULT resumed with the idle scheduler's flag");
    CHECK(!atomic_load(&wait_pe.waiting), "the flag stayed up after the run");
    rank_ult_destroy(a);
    rank_ult_destroy(b);
}

/* --- 4. stack sizes: AMPI_STACK_SIZE (set in main) and rounding --- */

static void test_stack_sizes(size_t env_size)
{
    rank_pe_t pe;
    rank_pe_init(&pe, NULL, NULL);
    rank_ult_t *u = spawn(&pe, 0, yield_once, NULL);
    CHECK(u->stack_size == env_size, "default stack %zu, AMPI_STACK_SIZE says %zu",
          u->stack_size, env_size);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    rank_ult_t *v = spawn(&pe, 100000, yield_once, NULL);
    CHECK(v->stack_size >= 100000 && v->stack_size % page == 0 && v->stack_size < 100000 + page,
          "asked 100000, got %zu", v->stack_size);
    CHECK(v->stack_map_size == v->stack_size + page, "map %zu for stack %zu",
          v->stack_map_size, v->stack_size);
    rank_pe_run(&pe);
    void *v_map = v->stack_map;
    rank_ult_destroy(u);
    rank_ult_destroy(v);
    /* a freed stack of the same size is reused */
    rank_ult_t *w = spawn(&pe, 100000, yield_once, NULL);
    CHECK(w->stack_map == v_map, "stack not reused from the cache");
    rank_pe_run(&pe);
    CHECK(w->state == RANK_ULT_DONE, "ULT on a reused stack did not finish");
    rank_ult_destroy(w);
    /* outside any ULT, block and yield just return */
    rank_block();
    rank_yield();
}

/* --- 5. fatal cases, each in a child process whose stderr we capture --- */

typedef struct {
    int status;
    char err[4096];
} child_result_t;

static void run_child(void (*fn)(void), child_result_t *res)
{
    int fds[2];
    memset(res, 0, sizeof *res);
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        signal(SIGABRT, SIG_DFL);
        alarm(60);
        fn();
        _exit(0); /* should not get here */
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t n;
    while ((n = read(fds[0], res->err + len, sizeof res->err - 1 - len)) > 0)
        len += (size_t)n;
    res->err[len] = 0;
    close(fds[0]);
    waitpid(pid, &res->status, 0);
}

static volatile long sink;
static volatile int keep_recursing = 1; /* hides the endless recursion from the compiler */

static long __attribute__((noinline)) recurse_forever(long n)
{
    volatile char pad[256];
    pad[n & 255] = (char)n;
    return (keep_recursing ? recurse_forever(n + 1) : 0) + pad[n & 255];
}

static void overflow_body(void *arg)
{
    (void)arg;
    sink = recurse_forever(0);
}

static void overflow_child(void)
{
    rank_pe_t pe;
    rank_pe_init(&pe, NULL, NULL);
    rank_ult_t *u = spawn(&pe, SMALL_STACK, overflow_body, NULL);
    u->id = 3;
    rank_pe_run(&pe);
}

static void wild_body(void *arg)
{
    (void)arg;
    /* a PROT_NONE page that is nobody's guard page */
    volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    sink = p[0];
}

static void wild_child(void)
{
    rank_pe_t pe;
    rank_pe_init(&pe, NULL, NULL);
    spawn(&pe, SMALL_STACK, wild_body, NULL)->id = 5;
    rank_pe_run(&pe);
}

static void deadlock_child(void)
{
    rank_pe_t pe;
    rank_pe_init(&pe, NULL, NULL); /* no progress engine: nobody can wake */
    spawn(&pe, SMALL_STACK, block_once, NULL);
    spawn(&pe, SMALL_STACK, block_once, NULL);
    rank_pe_run(&pe);
}

static void test_fatal(void)
{
    child_result_t r;
    char want[128];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t stack = (SMALL_STACK + page - 1) / page * page;

    run_child(overflow_child, &r);
    snprintf(want, sizeof want, "ampi: rank 3 overflowed its %zu-byte stack", stack);
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV,
          "overflow child: status %#x, expected death by SIGSEGV", r.status);
    CHECK(strstr(r.err, want) && strstr(r.err, "AMPI_STACK_SIZE"),
          "overflow child's stderr lacks \"%s\": [%s]", want, r.err);

    run_child(wild_child, &r);
#ifdef RANK_ASAN
    /* the fault goes on to the previous handler: ASan's, which reports and exits */
    CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0 && strstr(r.err, "SEGV"),
          "wild-access child: status %#x, expected ASan's SEGV report: [%s]", r.status, r.err);
#else
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSEGV,
          "wild-access child: status %#x, expected death by SIGSEGV", r.status);
#endif
    CHECK(!strstr(r.err, "overflowed"), "wild access reported as overflow: [%s]", r.err);

    run_child(deadlock_child, &r);
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
          "deadlock child: status %#x, expected abort", r.status);
    CHECK(strstr(r.err, "deadlock: all 2 remaining ranks"), "deadlock child said: [%s]", r.err);
}

int main(void)
{
    unit_check_watchdog(120, "FAIL test_sched: timed out (a ULT was never woken?)\n");
    /* Before any stack is created: the default is read once. */
    setenv("AMPI_STACK_SIZE", "256K", 1);
    test_ring();
    test_yield();
    test_wake_before_block();
    test_waiting_flag();
    test_stack_sizes((size_t)256 << 10);
    test_fatal();
    if (unit_check_summary("test_sched")) {
        return 1;
    }
    printf("test_sched: all checks passed\n");
    return 0;
}
