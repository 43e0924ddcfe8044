/* Scratch memory for the collectives (gpu_reduce.h): two process-wide
 * pools of blocks, device memory (cuMemAlloc) and page-locked host memory
 * (cuMemAllocHost), each block busy or idle.  An allocation takes the
 * smallest idle block that fits, else allocates a new one rounded up to a
 * power of two (so that a slowly growing size reuses blocks); freeing marks
 * it idle.  At most MAX_IDLE blocks of a pool stay idle: beyond that the
 * smallest goes back to the driver.  Reusing blocks also keeps UCX's
 * registration caches warm, since the same addresses come back, and spares
 * the pinned allocations, which cost far more than a small collective. */
#include "gpu/gpu_internal.h"
#include "gpu/gpu_reduce.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MIN_BLOCK (64 * 1024)
#define MAX_IDLE 8

typedef struct block {
    struct block *next;
    uintptr_t ptr;
    size_t size;
    bool busy;
} block_t;

typedef struct pool {
    block_t *blocks;
    unsigned generation; /* gpu_state.generation of the blocks */
    bool host;           /* page-locked host memory, else device memory */
    const char *what;
} pool_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pool_t dev_pool = { .what = "device" };
static pool_t host_pool = { .host = true, .what = "pinned host" };

static size_t round_up(size_t n)
{
    size_t s = MIN_BLOCK;
    while (s < n && s <= SIZE_MAX / 2)
        s *= 2;
    return s < n ? n : s;
}

static CUresult block_alloc(const pool_t *pl, block_t *b)
{
    if (!pl->host) {
        CUdeviceptr d = 0;
        CUresult r = gpu_drv.MemAlloc(&d, b->size);
        b->ptr = (uintptr_t)d;
        return r;
    }
    void *h = NULL;
    CUresult r = gpu_drv.MemAllocHost(&h, b->size);
    b->ptr = (uintptr_t)h;
    return r;
}

static void block_release(const pool_t *pl, block_t *b)
{
    if (pl->host)
        gpu_drv.MemFreeHost((void *)b->ptr);
    else
        gpu_drv.MemFree((CUdeviceptr)b->ptr);
}

/* Unlinks and frees idle blocks: all of them, or only the smallest one. */
static void release_idle(pool_t *pl, bool all)
{
    for (;;) {
        block_t **victim = NULL;
        for (block_t **pp = &pl->blocks; *pp; pp = &(*pp)->next)
            if (!(*pp)->busy && (!victim || (*pp)->size < (*victim)->size))
                victim = pp;
        if (!victim)
            return;
        block_t *b = *victim;
        *victim = b->next;
        block_release(pl, b);
        free(b);
        if (!all)
            return;
    }
}

/* Blocks of an earlier gpu_init died with its context: forget them. */
static void drop_stale(pool_t *pl)
{
    if (pl->generation == gpu_state.generation)
        return;
    while (pl->blocks) {
        block_t *b = pl->blocks;
        pl->blocks = b->next;
        free(b);
    }
    pl->generation = gpu_state.generation;
}

static int pool_alloc(pool_t *pl, size_t bytes, void **p)
{
    *p = NULL;
    pthread_mutex_lock(&lock);
    drop_stale(pl);
    block_t *best = NULL;
    for (block_t *b = pl->blocks; b; b = b->next)
        if (!b->busy && b->size >= bytes && (!best || b->size < best->size))
            best = b;
    CUresult r = GPU_CU_SUCCESS;
    if (!best) {
        best = malloc(sizeof *best);
        CUcontext prev = NULL;
        int er = best ? gpu_ctx_enter(&prev) : (int)GPU_CU_ERROR_OUT_OF_MEMORY;
        if (er) {
            free(best);
            pthread_mutex_unlock(&lock);
            fprintf(stderr, "ampi: %s scratch allocation: cannot make the context current (%d)\n", pl->what, er);
            return er;
        }
        best->size = round_up(bytes ? bytes : 1);
        r = block_alloc(pl, best);
        if (r == GPU_CU_ERROR_OUT_OF_MEMORY) { /* the idle blocks may be what is missing */
            release_idle(pl, true);
            r = block_alloc(pl, best);
        }
        gpu_ctx_leave(prev);
        if (r != GPU_CU_SUCCESS) {
            free(best);
            pthread_mutex_unlock(&lock);
            fprintf(stderr, "ampi: allocation of %zu bytes of %s collective scratch failed: %s\n", bytes, pl->what,
                    gpu_driver_error_name(r));
            return (int)r;
        }
        best->next = pl->blocks;
        pl->blocks = best;
    }
    best->busy = true;
    *p = (void *)best->ptr;
    pthread_mutex_unlock(&lock);
    return 0;
}

static bool pool_free(pool_t *pl, void *p)
{
    if (!p)
        return false;
    pthread_mutex_lock(&lock);
    drop_stale(pl);
    block_t *found = NULL;
    int idle = 0;
    for (block_t *b = pl->blocks; b; b = b->next) {
        if (b->ptr == (uintptr_t)p && b->busy)
            found = b;
        else if (!b->busy)
            idle++;
    }
    if (found) {
        found->busy = false;
        if (idle >= MAX_IDLE) {
            CUcontext prev;
            if (gpu_ctx_enter(&prev) == 0) {
                release_idle(pl, false);
                gpu_ctx_leave(prev);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return found != NULL;
}

int gpu_dev_alloc(size_t bytes, void **p) { return pool_alloc(&dev_pool, bytes, p); }
bool gpu_dev_free(void *p) { return pool_free(&dev_pool, p); }
int gpu_pinned_alloc(size_t bytes, void **p) { return pool_alloc(&host_pool, bytes, p); }
bool gpu_pinned_free(void *p) { return pool_free(&host_pool, p); }

void gpu_mem_fini(void)
{
    pthread_mutex_lock(&lock);
    pool_t *pools[2] = { &dev_pool, &host_pool };
    for (int i = 0; i < 2; i++) {
        if (pools[i]->generation != gpu_state.generation || !gpu_state.on)
            continue;
        CUcontext prev;
        if (gpu_ctx_enter(&prev) == 0) {
            release_idle(pools[i], true); /* busy ones belong to collectives still running: leave them */
            gpu_ctx_leave(prev);
        }
    }
    pthread_mutex_unlock(&lock);
}
