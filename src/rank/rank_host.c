/* The host lock of library mode (rank_host.h). */
#define _GNU_SOURCE
#include "rank/rank_host.h"

#include <pthread.h>
#include <sched.h>

bool rank_hosted;

static rank_pe_t *hosted_pe;
/* ticket lock: FIFO, so a thread that lets go inside a wait and asks again
 * at once queues behind the threads already waiting */
static unsigned next_ticket, now_serving;
static pthread_t holder;
static bool held;  /* holder is valid */
static int depth;  /* nested MPI calls of the holder (MPI_Finalize -> MPI_Barrier) */

void rank_host_start(rank_pe_t *pe)
{
    hosted_pe = pe;
    __atomic_store_n(&rank_hosted, true, __ATOMIC_RELEASE);
}

bool rank_host_held(void)
{
    return __atomic_load_n(&held, __ATOMIC_ACQUIRE) && pthread_equal(holder, pthread_self());
}

static void acquire(void)
{
    unsigned t = __atomic_fetch_add(&next_ticket, 1, __ATOMIC_RELAXED);
    unsigned spins = 0;
    while (__atomic_load_n(&now_serving, __ATOMIC_ACQUIRE) != t) {
        if (++spins >= 64) { /* the holder may need this core to finish */
            spins = 0;
            sched_yield();
        }
    }
    holder = pthread_self();
    __atomic_store_n(&held, true, __ATOMIC_RELEASE);
}

static void release(void)
{
    __atomic_store_n(&held, false, __ATOMIC_RELAXED);
    __atomic_store_n(&now_serving, now_serving + 1, __ATOMIC_RELEASE);
}

void rank_host_lock(void)
{
    if (rank_host_held()) {
        depth++;
        return;
    }
    acquire();
    depth = 1;
    rank_this_pe = hosted_pe;
}

void rank_host_unlock(void)
{
    if (--depth == 0)
        release();
}

void rank_host_pause(void)
{
    /* never from inside a ULT: the next holder would find it current */
    if (!rank_host_held() || hosted_pe->current)
        return;
    if (__atomic_load_n(&next_ticket, __ATOMIC_RELAXED) == now_serving + 1)
        return; /* nobody queued */
    int d = depth;
    release();
    acquire();
    depth = d;
}
