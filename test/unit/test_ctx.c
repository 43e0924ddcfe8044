/* Tests of the bare context switch (rank_ctx_make / rank_ctx_switch), below
 * the scheduler: many round trips, callee-saved integer and floating-point
 * state, floating-point control state, stack alignment, deep recursion. */
#define _GNU_SOURCE
#include "rank/rank_ctx.h"
#include "rank/rank_san.h"
#include "rank/rank_stack.h"

#include <fenv.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_check.h"

/* --- a minimal coroutine on top of rank_ctx (with the ASan annotations a
 *     real user of rank_ctx needs) --- */

typedef struct coro coro_t;
struct coro {
    rank_ctx_t self, caller;
    rank_stack_t stack;
    void (*body)(coro_t *);
    int finished;
    const void *caller_bottom; /* the caller's stack, for ASan */
    size_t caller_size;
};

static void coro_suspend(coro_t *c)
{
    void *save = NULL;
    rank_san_switch_begin(c->finished ? NULL : &save, c->caller_bottom, c->caller_size);
    rank_ctx_switch(&c->self, &c->caller);
    rank_san_switch_end(save, &c->caller_bottom, &c->caller_size);
}

static void coro_resume(coro_t *c)
{
    void *save = NULL;
    rank_san_switch_begin(&save, c->stack.base, c->stack.size);
    rank_ctx_switch(&c->caller, &c->self);
    rank_san_switch_end(save, NULL, NULL);
}

static void coro_entry(void *arg)
{
    coro_t *c = arg;
    rank_san_switch_end(NULL, &c->caller_bottom, &c->caller_size);
    c->body(c);
    c->finished = 1;
    for (;;)
        coro_suspend(c);
}

static void coro_init(coro_t *c, size_t stack_size, void (*body)(coro_t *))
{
    memset(c, 0, sizeof *c);
    if (rank_stack_alloc(&c->stack, stack_size) != 0) {
        perror("rank_stack_alloc");
        exit(1);
    }
    c->body = body;
    rank_ctx_make(&c->self, c->stack.base, c->stack.size, coro_entry, c);
}

static void coro_fini(coro_t *c)
{
    rank_stack_free(&c->stack);
}

/* --- 1. ping-pong: a million round trips, each checked --- */

enum { PINGS = 1000000 };
static long ping, pong, pong_calls;

static void pong_body(coro_t *c)
{
    for (;;) {
        pong_calls++;
        pong = ping * 2 + 1; /* proves the caller's latest write is visible here */
        coro_suspend(c);
    }
}

static void test_ping_pong(void)
{
    coro_t c;
    coro_init(&c, 0, pong_body);
    long bad = -1;
    for (long i = 0; i < PINGS; i++) {
        ping = i;
        coro_resume(&c);
        if (pong != 2 * i + 1 || pong_calls != i + 1) {
            bad = i;
            break;
        }
    }
    CHECK(bad < 0, "round trip %ld: pong=%ld calls=%ld", bad, pong, pong_calls);
    CHECK(pong_calls == PINGS, "pong ran %ld times, expected %d", pong_calls, PINGS);
    coro_fini(&c);
}

/* --- 2. callee-saved registers: many integers and doubles live across every
 *     switch (so the compiler keeps them in callee-saved registers or spills
 *     them), while the other side churns its own; the result must equal a
 *     run with no switches at all --- */

typedef void (*step_fn)(coro_t *);

static void no_step(coro_t *c) { (void)c; }

/* Keeps 10 integers and 8 doubles alive across step() calls. */
static uint64_t __attribute__((noinline)) churn(uint64_t seed, int rounds, step_fn step, coro_t *c)
{
    uint64_t a = seed, b = seed ^ 0x9e3779b97f4a7c15ULL, d = seed * 3, e = seed + 7, f = ~seed;
    uint64_t g = seed << 3, h = seed >> 5, k = seed * seed, m = seed | 1, n = seed & 0xffff;
    double x0 = (double)(seed & 1023), x1 = 0.5, x2 = 1.25, x3 = -3.0;
    double x4 = 2.0, x5 = 0.125, x6 = 7.0, x7 = (double)(seed % 97);
    for (int r = 0; r < rounds; r++) {
        a = a * 6364136223846793005ULL + 1442695040888963407ULL;
        b ^= a >> 17; d += b * 31; e ^= d << 7; f -= e;
        g += f ^ a; h = h * 5 + g; k ^= h >> 3; m += k; n = n * 33 + m;
        x0 = x0 * 0.999 + x1; x1 = x1 + x2 * 0.001; x2 = x2 - x3 * 0.0001;
        x3 = x3 * 0.5 + x4; x4 = x4 + (double)(a & 15); x5 = x5 * 1.0001 + x6;
        x6 = x6 - x7 * 0.01; x7 = x7 + x0 * 0.001;
        step(c);
    }
    double fsum = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
    uint64_t fbits;
    memcpy(&fbits, &fsum, sizeof fbits);
    return a ^ b ^ d ^ e ^ f ^ g ^ h ^ k ^ m ^ n ^ fbits;
}

enum { CHURN_ROUNDS = 1000 };
static uint64_t churn_on_coro;

static void churn_body(coro_t *c)
{
    churn_on_coro = churn(12345, CHURN_ROUNDS, coro_suspend, c);
}

static void test_callee_saved(void)
{
    uint64_t want_coro = churn(12345, CHURN_ROUNDS, no_step, NULL);
    uint64_t want_main = churn(777, CHURN_ROUNDS, no_step, NULL);
    coro_t c;
    coro_init(&c, 0, churn_body);
    /* The main side churns too, resuming the coroutine each round: both
     * sides' registers must survive the other's use of them. */
    uint64_t got_main = churn(777, CHURN_ROUNDS, coro_resume, &c);
    coro_resume(&c); /* let the coroutine return its result */
    CHECK(c.finished, "coroutine did not finish");
    CHECK(churn_on_coro == want_coro, "coroutine side: %#llx, expected %#llx",
          (unsigned long long)churn_on_coro, (unsigned long long)want_coro);
    CHECK(got_main == want_main, "main side: %#llx, expected %#llx",
          (unsigned long long)got_main, (unsigned long long)want_main);
    coro_fini(&c);
}

/* --- 3. floating-point control state is per context: a rounding mode set on
 *     one side must neither leak to nor be lost by the other --- */

#if defined(RANK_CTX_ASM) || defined(__x86_64__)
#define TEST_FP_CONTROL 1
static volatile double one = 1.0, three = 3.0;
static volatile long double one_l = 1.0L, three_l = 3.0L;
static double third_up, third_near;
static long double third_up_l, third_near_l;
static int fp_bad_coro, fp_steps;

static void fp_body(coro_t *c)
{
    fesetround(FE_UPWARD);
    for (int i = 0; i < 10; i++) {
        coro_suspend(c);
        double q = one / three;            /* SSE (or the FP unit on aarch64) */
        long double ql = one_l / three_l;  /* x87 on x86-64 */
        if (fegetround() != FE_UPWARD || q != third_up || ql != third_up_l)
            fp_bad_coro++;
        fp_steps++;
    }
    fesetround(FE_TONEAREST);
}

static void test_fp_control(void)
{
    fesetround(FE_UPWARD);
    third_up = one / three;
    third_up_l = one_l / three_l;
    fesetround(FE_TONEAREST);
    third_near = one / three;
    third_near_l = one_l / three_l;
    CHECK(third_up != third_near, "rounding mode has no effect here; test is void");

    coro_t c;
    coro_init(&c, 0, fp_body);
    int bad_main = 0;
    while (!c.finished) {
        coro_resume(&c);
        double q = one / three;
        long double ql = one_l / three_l;
        if (fegetround() != FE_TONEAREST || q != third_near || ql != third_near_l)
            bad_main++;
    }
    CHECK(fp_steps == 10, "coroutine ran %d steps", fp_steps);
    CHECK(fp_bad_coro == 0, "coroutine lost its rounding mode %d times", fp_bad_coro);
    CHECK(bad_main == 0, "main saw the coroutine's rounding mode %d times", bad_main);
    coro_fini(&c);
}

static int fp_rounding_emulated(void)
{
#ifdef RANK_VALGRIND
    return RUNNING_ON_VALGRIND; /* Valgrind computes in round-to-nearest only */
#else
    return 0;
#endif
}
#endif

/* --- 4. stack alignment and deep recursion on a ULT stack --- */

static uintptr_t frame_addr_seen;
static char printed[64];

static void __attribute__((noinline)) alignment_probe(void)
{
    frame_addr_seen = (uintptr_t)__builtin_frame_address(0);
    /* varargs with doubles: crashes on misaligned stacks with some libcs */
    snprintf(printed, sizeof printed, "%.3f %d", 2.5, 7);
}

enum { DEPTH = 10000 };
static long deepest_on_stack = -1; /* 1 when the deepest frame lay in the coroutine's stack */

/* Sum 1..n with one real frame per level (the volatile array defeats tail
 * calls and keeps every frame a few hundred bytes). */
static long __attribute__((noinline)) recurse(coro_t *c, long n)
{
    volatile char pad[200];
    pad[n % 200] = (char)n;
    if (n == DEPTH) {
        uintptr_t here = (uintptr_t)&pad[0], lo = (uintptr_t)c->stack.base;
        deepest_on_stack = here >= lo && here < lo + c->stack.size;
        coro_suspend(c); /* switch away from the deepest point and back */
        return n + pad[n % 200] - (char)n;
    }
    return n + recurse(c, n + 1) + pad[n % 200] - (char)n;
}

static long deep_sum;

static void deep_body(coro_t *c)
{
    alignment_probe();
    deep_sum = recurse(c, 1);
}

static void test_alignment_and_recursion(void)
{
    coro_t c;
    coro_init(&c, 8 << 20, deep_body);
    coro_resume(&c); /* runs until the deepest frame suspends */
    CHECK(frame_addr_seen % 16 == 0, "frame address %#lx not 16-byte aligned",
          (unsigned long)frame_addr_seen);
    CHECK(strcmp(printed, "2.500 7") == 0, "snprintf on the coroutine gave \"%s\"", printed);
    CHECK(deepest_on_stack == 1, "deepest frame not on the coroutine's stack");
    CHECK(!c.finished, "finished before the deepest frame resumed");
    coro_resume(&c);
    CHECK(c.finished, "recursion did not finish");
    long want = (long)DEPTH * (DEPTH + 1) / 2;
    CHECK(deep_sum == want, "sum %ld, expected %ld", deep_sum, want);
    coro_fini(&c);
}

int main(void)
{
    unit_check_watchdog(120, "FAIL test_ctx: timed out\n");
    test_ping_pong();
    test_callee_saved();
#ifdef TEST_FP_CONTROL
    if (fp_rounding_emulated())
        printf("test_ctx: floating-point control test skipped under Valgrind\n");
    else
        test_fp_control();
#endif
    test_alignment_and_recursion();
    if (unit_check_summary("test_ctx")) {
        return 1;
    }
    printf("test_ctx: all checks passed (%s)\n",
#ifdef RANK_CTX_ASM
           "assembly switch"
#else
           "ucontext switch"
#endif
    );
    return 0;
}
