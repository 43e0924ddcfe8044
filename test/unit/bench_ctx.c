/* Microbenchmark (not a test): cost of a bare context switch and of a
 * block -> wake -> resume cycle through the scheduler.
 * Usage: bench_ctx [iterations] [getopt]   (default 10000000)
 *   getopt: the scheduler keeps getopt's state per ULT, as for programs
 *           built with ampicc -privatize (rank_keep_getopt) */
#define _GNU_SOURCE
#include "rank/rank_ctx.h"
#include "rank/rank_stack.h"
#include "rank/rank_ult.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* --- bare switches: main <-> one context, ping-pong --- */

static rank_ctx_t main_ctx, other_ctx;
static volatile long bounces;

static void bounce(void *arg)
{
    (void)arg;
    for (;;) {
        bounces++;
        rank_ctx_switch(&other_ctx, &main_ctx);
    }
}

/* --- block/wake/resume: one ULT blocks, progress wakes it --- */

static rank_ult_t *sleeper;
static long wakes;

static int wake_sleeper(void *arg)
{
    (void)arg;
    if (sleeper->state == RANK_ULT_BLOCKED) {
        rank_wake(sleeper);
        wakes++;
        return 1;
    }
    return 0;
}

static long cycles;
static void block_loop(void *arg)
{
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        rank_block();
    cycles = n;
}

static void yield_loop(void *arg)
{
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        rank_yield();
    cycles = n;
}

static double time_ult(rank_progress_fn progress, void (*body)(void *), long n)
{
    rank_pe_t pe;
    rank_pe_init(&pe, progress, NULL);
    sleeper = rank_ult_create(&pe, 0, body, &n);
    if (!sleeper) {
        perror("rank_ult_create");
        exit(1);
    }
    double t0 = now_ns();
    rank_pe_run(&pe);
    double t = now_ns() - t0;
    rank_ult_destroy(sleeper);
    return t;
}

static int no_progress(void *arg)
{
    (void)arg;
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    if (n <= 0)
        n = 1;
    rank_keep_getopt = argc > 2 && !strcmp(argv[2], "getopt");

    rank_stack_t st;
    if (rank_stack_alloc(&st, 0) != 0) {
        perror("rank_stack_alloc");
        return 1;
    }
    rank_ctx_make(&other_ctx, st.base, st.size, bounce, NULL);
    rank_ctx_switch(&main_ctx, &other_ctx); /* warm up */
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        rank_ctx_switch(&main_ctx, &other_ctx);
    double t_switch = now_ns() - t0;
    rank_stack_free(&st);

    double t_block = time_ult(wake_sleeper, block_loop, n);
    if (wakes != n || cycles != n)
        fprintf(stderr, "bench_ctx: %ld wakes for %ld blocks?\n", wakes, cycles);
    double t_yield = time_ult(no_progress, yield_loop, n);

    printf("context switch:                %6.2f ns  (%ld round trips)\n", t_switch / (2.0 * (double)n), n);
    printf("block -> wake -> resume cycle: %6.2f ns  (incl. one progress call)\n", t_block / (double)n);
    printf("yield -> resume cycle:         %6.2f ns  (incl. one progress call)\n", t_yield / (double)n);
    return bounces == n + 1 ? 0 : 1;
}
