/* Tests of ULT stacks past the kernel's map limit: 40,000 stacks at once
 * (guarded ones cost two maps each, and vm.max_map_count is 65530 by
 * default, so guard pages for every stack stopped near 32,700), ULTs on
 * stacks of shared mappings running normally, and (in child processes) an
 * overflow caught by the canary at the next switch and one running into the
 * mapping's guard page, both naming the rank that overflowed. */
#define _GNU_SOURCE
#include "rank/rank_guard.h"
#include "rank/rank_stack.h"
#include "rank/rank_ult.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_check.h"

enum { MANY = 40000, SMALL_STACK = 64 << 10 };

static long count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void test_many_stacks(void)
{
    static rank_stack_t st[MANY];
    long maps_before = count_maps();
    int got = 0;
    for (; got < MANY; got++)
        if (rank_stack_alloc(&st[got], SMALL_STACK) != 0)
            break;
    CHECK(got == MANY, "only %d of %d stacks: %s", got, MANY, strerror(errno));
    long maps = count_maps() - maps_before;
    long budget = rank_stack_guard_budget();
    /* two maps per guarded stack, two per shared mapping of 64 */
    long want_max = 2 * (budget < got ? budget : got) + 2 * (got / RANK_STACK_SLOTS + 2) + 64;
    CHECK(maps <= want_max, "%d stacks took %ld maps (budget %ld guarded), expected at most %ld", got, maps, budget,
          want_max);
    /* every stack is usable and its own */
    for (int i = 0; i < got; i++)
        memset((char *)st[i].base + st[i].size - 64, i & 0xff, 64);
    int wrong = 0;
    for (int i = 0; i < got; i++)
        wrong += ((unsigned char *)st[i].base)[st[i].size - 1] != (i & 0xff) || !rank_stack_canary_ok(&st[i]);
    CHECK(wrong == 0, "%d stacks overlap a neighbour or its canary", wrong);
    for (int i = 0; i < got; i++)
        rank_stack_free(&st[i]);
    CHECK(count_maps() - maps_before < 64, "maps left after freeing: %ld", count_maps() - maps_before);
}

/* --- ULTs on shared-mapping stacks (budget 0) --- */

static volatile long sink;

static long __attribute__((noinline)) recurse(long depth)
{
    volatile char pad[1024];
    pad[depth & 1023] = (char)depth;
    return (depth > 0 ? recurse(depth - 1) : 0) + pad[depth & 1023];
}

static int finished;

static void busy_body(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        sink = recurse(24); /* about 26 KiB of a 64 KiB stack */
        rank_yield();
    }
    finished++;
}

static void test_shared_ults(void)
{
    rank_stack_set_guard_budget(0);
    rank_pe_t pe;
    rank_pe_init(&pe, NULL, NULL);
    enum { N = 300 };
    static rank_ult_t *u[N];
    for (int i = 0; i < N; i++)
        u[i] = rank_ult_create(&pe, SMALL_STACK, busy_body, NULL);
    for (int i = 0; i < N; i++)
        CHECK(u[i] != NULL, "ULT %d not created", i);
    rank_pe_run(&pe);
    CHECK(finished == N, "%d of %d ULTs finished", finished, N);
    for (int i = 0; i < N; i++)
        rank_ult_destroy(u[i]);
    rank_stack_set_guard_budget(-1);
}

/* --- overflows, in child processes --- */

typedef struct {
    int status;
    char err[4096];
} child_result_t;

static void run_child(void (*fn)(void), child_result_t *res)
{
    int fds[2];
    memset(res, 0, sizeof *res);
    if (pipe(fds) != 0)
        exit(1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        signal(SIGABRT, SIG_DFL);
        alarm(60);
        fn();
        _exit(0);
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

static void idle_body(void *arg)
{
    (void)arg;
    rank_yield();
}

/* 96 KiB deep on a 64 KiB stack: into the slot below, then back, then a
 * switch, where the canary is checked. */
static void bounded_overflow_body(void *arg)
{
    (void)arg;
    sink = recurse(96);
    rank_yield();
}

static volatile int keep_recursing = 1;

static long __attribute__((noinline)) recurse_forever(long n)
{
    volatile char pad[256];
    pad[n & 255] = (char)n;
    return (keep_recursing ? recurse_forever(n + 1) : 0) + pad[n & 255];
}

static void endless_body(void *arg)
{
    (void)arg;
    sink = recurse_forever(0);
}

static void overflow_child(void (*body)(void *))
{
    rank_stack_set_guard_budget(0);
    rank_guard_install();
    rank_pe_t pe;
    rank_pe_init(&pe, NULL, NULL);
    rank_ult_create(&pe, SMALL_STACK, idle_body, NULL)->id = 10; /* slot 0 */
    rank_ult_create(&pe, SMALL_STACK, idle_body, NULL)->id = 11; /* slot 1 */
    rank_ult_create(&pe, SMALL_STACK, body, NULL)->id = 12;      /* slot 2 */
    rank_pe_run(&pe);
}

static void bounded_child(void) { overflow_child(bounded_overflow_body); }
static void endless_child(void) { overflow_child(endless_body); }

static void test_overflows(void)
{
    child_result_t r;
    run_child(bounded_child, &r);
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT,
          "bounded overflow: status %#x, expected abort", r.status);
    CHECK(strstr(r.err, "rank 12 overflowed its") && strstr(r.err, "AMPI_STACK_SIZE"),
          "bounded overflow said: [%s]", r.err);
    run_child(endless_child, &r);
    CHECK(WIFSIGNALED(r.status) && (WTERMSIG(r.status) == SIGSEGV || WTERMSIG(r.status) == SIGBUS),
          "endless recursion: status %#x, expected SIGSEGV", r.status);
    CHECK(strstr(r.err, "rank 12 overflowed its"), "endless recursion said: [%s]", r.err);
}

int main(void)
{
    unit_check_watchdog(120, "FAIL test_stack: timed out\n");
    test_many_stacks();
    test_shared_ults();
    test_overflows();
    if (unit_check_summary("test_stack"))
        return 1;
    printf("test_stack: all checks passed\n");
    return 0;
}
