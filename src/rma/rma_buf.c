/* Answer buffers of one-sided fetches, kept for the next answer.
 *
 * A target answers a Get_accumulate (and a get of a derived type or from a
 * device window) from a buffer of its own, which UCX reads until the answer
 * has left.  A buffer of a megabyte comes from the kernel as fresh pages on
 * every malloc (it is above malloc's mmap threshold) and faulting them in
 * cost more than moving the data: osu_get_acc_latency H H at 1 MiB spent
 * 1.2 ms of 1.9 ms in them on a 2-vCPU machine.  So the process keeps a
 * few such buffers: SLOTS of at most SLOT_MAX bytes, freed at the end. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include "rma/rma_internal.h"

#define SLOTS 4
#define SLOT_MIN (64 * 1024)       /* smaller ones come from malloc's free lists cheaply */
#define SLOT_MAX (8 * 1024 * 1024) /* at most 32 MiB held */

static struct {
    void *p;
    size_t cap;
    bool lent;
} slot[SLOTS];
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;

void *rma_buf_get(size_t len)
{
    if (len < SLOT_MIN || len > SLOT_MAX)
        return malloc(len ? len : 1);
    pthread_mutex_lock(&lk);
    int pick = -1;
    for (int i = 0; i < SLOTS; i++) {
        if (slot[i].lent)
            continue;
        if (slot[i].cap >= len) {
            pick = i;
            break;
        }
        if (pick < 0)
            pick = i; /* an empty or too small one, grown below */
    }
    void *p = NULL;
    if (pick >= 0) {
        if (slot[pick].cap < len) {
            free(slot[pick].p);
            slot[pick].p = malloc(len);
            slot[pick].cap = slot[pick].p ? len : 0;
        }
        if (slot[pick].p) {
            slot[pick].lent = true;
            p = slot[pick].p;
        }
    }
    pthread_mutex_unlock(&lk);
    return p ? p : malloc(len);
}

void rma_buf_put(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&lk);
    for (int i = 0; i < SLOTS; i++) {
        if (slot[i].p == p && slot[i].lent) {
            slot[i].lent = false;
            pthread_mutex_unlock(&lk);
            return;
        }
    }
    pthread_mutex_unlock(&lk);
    free(p);
}

void rma_buf_fini(void)
{
    pthread_mutex_lock(&lk);
    for (int i = 0; i < SLOTS; i++) {
        if (!slot[i].lent)
            free(slot[i].p);
        slot[i].p = NULL; /* a lent one goes with its send (rma_buf_put frees what it does not know) */
        slot[i].cap = 0;
        slot[i].lent = false;
    }
    pthread_mutex_unlock(&lk);
}
