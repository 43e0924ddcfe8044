/* Device scratch memory for the collectives (gpu_reduce.h): a process-wide
 * list of cuMemAlloc'd blocks, each busy or idle.  An allocation takes the
 * smallest idle block that fits, else allocates a new one rounded up to a
 * power of two (so that a slowly growing size reuses blocks); freeing marks
 * it idle.  At most MAX_IDLE blocks stay idle: beyond that the smallest goes
 * back to the driver.  Reusing blocks also keeps UCX's registration caches
 * warm, since the same addresses come back. */
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
    CUdeviceptr ptr;
    size_t size;
    bool busy;
} block_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block_t *blocks;
static unsigned blocks_generation; /* gpu_state.generation of the blocks */

static size_t round_up(size_t n)
{
    size_t s = MIN_BLOCK;
    while (s < n && s <= SIZE_MAX / 2)
        s *= 2;
    return s < n ? n : s;
}

/* Unlinks and frees idle blocks: all of them, or only the smallest one. */
static void release_idle(bool all)
{
    for (;;) {
        block_t **victim = NULL;
        for (block_t **pp = &blocks; *pp; pp = &(*pp)->next)
            if (!(*pp)->busy && (!victim || (*pp)->size < (*victim)->size))
                victim = pp;
        if (!victim)
            return;
        block_t *b = *victim;
        *victim = b->next;
        gpu_drv.MemFree(b->ptr);
        free(b);
        if (!all)
            return;
    }
}

/* Blocks of an earlier gpu_init died with its context: forget them. */
static void drop_stale(void)
{
    if (blocks_generation == gpu_state.generation)
        return;
    while (blocks) {
        block_t *b = blocks;
        blocks = b->next;
        free(b);
    }
    blocks_generation = gpu_state.generation;
}

int gpu_dev_alloc(size_t bytes, void **p)
{
    *p = NULL;
    pthread_mutex_lock(&lock);
    drop_stale();
    block_t *best = NULL;
    for (block_t *b = blocks; b; b = b->next)
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
            fprintf(stderr, "ampi: device scratch allocation: cannot make the context current (%d)\n", er);
            return er;
        }
        best->size = round_up(bytes ? bytes : 1);
        r = gpu_drv.MemAlloc(&best->ptr, best->size);
        if (r == GPU_CU_ERROR_OUT_OF_MEMORY) { /* the idle blocks may be what is missing */
            release_idle(true);
            r = gpu_drv.MemAlloc(&best->ptr, best->size);
        }
        gpu_ctx_leave(prev);
        if (r != GPU_CU_SUCCESS) {
            free(best);
            pthread_mutex_unlock(&lock);
            fprintf(stderr, "ampi: cuMemAlloc of %zu bytes of collective scratch failed: %s\n", bytes,
                    gpu_driver_error_name(r));
            return (int)r;
        }
        best->next = blocks;
        blocks = best;
    }
    best->busy = true;
    *p = (void *)(uintptr_t)best->ptr;
    pthread_mutex_unlock(&lock);
    return 0;
}

bool gpu_dev_free(void *p)
{
    if (!p)
        return false;
    pthread_mutex_lock(&lock);
    drop_stale();
    block_t *found = NULL;
    int idle = 0;
    for (block_t *b = blocks; b; b = b->next) {
        if (b->ptr == (CUdeviceptr)(uintptr_t)p && b->busy)
            found = b;
        else if (!b->busy)
            idle++;
    }
    if (found) {
        found->busy = false;
        if (idle >= MAX_IDLE) {
            CUcontext prev;
            if (gpu_ctx_enter(&prev) == 0) {
                release_idle(false);
                gpu_ctx_leave(prev);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return found != NULL;
}

void gpu_mem_fini(void)
{
    pthread_mutex_lock(&lock);
    if (blocks_generation == gpu_state.generation && gpu_state.on) {
        CUcontext prev;
        if (gpu_ctx_enter(&prev) == 0) {
            release_idle(true); /* busy ones belong to collectives still running: leave them */
            gpu_ctx_leave(prev);
        }
    }
    pthread_mutex_unlock(&lock);
}
