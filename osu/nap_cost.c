/* nap_cost: how long nanosleep(2 us) really takes here, with a timer slack
 * of 1 ns (1000 sleeps; mean and maximum).  In a virtual machine the timer
 * and the wake-up go through the hypervisor, and a short sleep lasts much
 * longer than asked: why the progress thread's spin mode never sleeps
 * between its looks (src/ucx/ucx_side.c).  cc -O2 -o nap_cost nap_cost.c */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    double sum = 0, max = 0;
    for (int i = 0; i < 1000; i++) {
        struct timespec t = { 0, 2000 };
        double a = now_ns();
        nanosleep(&t, NULL);
        double d = now_ns() - a;
        sum += d;
        if (d > max)
            max = d;
    }
    printf("nanosleep(2us): mean %.2f us max %.2f us\n", sum / 1000 / 1000, max / 1000);
    return 0;
}
