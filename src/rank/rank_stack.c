/* ULT stack allocation: see rank_stack.h. */
#define _GNU_SOURCE
#include "rank/rank_stack.h"
#include "rank/rank_san.h"
#include "core/core_settings.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

size_t rank_stack_guard_size(void)
{
    static size_t page; /* threads may race to fill it in, with the same value */
    size_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);
    if (!p) {
        p = (size_t)sysconf(_SC_PAGESIZE);
        __atomic_store_n(&page, p, __ATOMIC_RELAXED);
    }
    return p;
}

static size_t default_size = RANK_STACK_DEFAULT_SIZE;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void read_default_size(void)
{
    default_size = core_setting_size(CORE_SET_STACK_SIZE); /* at least RANK_STACK_MIN_SIZE */
}

size_t rank_stack_default_size(void)
{
    pthread_once(&default_once, read_default_size);
    return default_size;
}

/* Freed stacks wait here for the next ULT of the same size: mapping, guarding
 * and first-touch faulting a fresh stack costs several system calls, and
 * programs that create ranks repeatedly (tests, spawn) want the same sizes. */
#define CACHE_SLOTS 8
static struct {
    pthread_mutex_t lock;
    int n;
    rank_stack_t slot[CACHE_SLOTS];
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int cache_take(rank_stack_t *st, size_t map_size)
{
    int found = 0;
    pthread_mutex_lock(&cache.lock);
    for (int i = 0; i < cache.n; i++) {
        if (cache.slot[i].map_size == map_size) {
            *st = cache.slot[i];
            cache.n--;
            memmove(&cache.slot[i], &cache.slot[i + 1], (size_t)(cache.n - i) * sizeof cache.slot[0]);
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&cache.lock);
    return found;
}

/* Keeps st; when the cache is full, the oldest entry makes room (so stacks of
 * a size no longer in use do not hog it) and is unmapped. */
static void cache_put(const rank_stack_t *st)
{
    rank_stack_t evicted = { 0 };
    pthread_mutex_lock(&cache.lock);
    if (cache.n < CACHE_SLOTS) {
        cache.slot[cache.n++] = *st;
    } else {
        evicted = cache.slot[0];
        memmove(&cache.slot[0], &cache.slot[1], (CACHE_SLOTS - 1) * sizeof cache.slot[0]);
        cache.slot[CACHE_SLOTS - 1] = *st;
    }
    pthread_mutex_unlock(&cache.lock);
    if (evicted.map)
        munmap(evicted.map, evicted.map_size);
}

int rank_stack_alloc(rank_stack_t *st, size_t size)
{
    size_t page = rank_stack_guard_size();
    if (size == 0)
        size = rank_stack_default_size();
    if (size < RANK_STACK_MIN_SIZE)
        size = RANK_STACK_MIN_SIZE;
    if (size > SIZE_MAX - 2 * page) {
        errno = ENOMEM;
        return -1;
    }
    size = (size + page - 1) & ~(page - 1);
    size_t map_size = size + page;

    if (!cache_take(st, map_size)) {
        /* NORESERVE: only the pages a rank touches count against memory,
         * so thousands of 8 MiB stacks are fine. */
        void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (map == MAP_FAILED)
            return -1;
        if (mprotect(map, page, PROT_NONE) != 0) {
            int err = errno;
            munmap(map, map_size);
            errno = err;
            return -1;
        }
        st->map = map;
        st->map_size = map_size;
        st->base = (char *)map + page;
        st->size = size;
    }
    st->vg_id = rank_san_stack_register(st->base, st->size);
    return 0;
}

void rank_stack_free(rank_stack_t *st)
{
    if (!st->map)
        return;
    rank_san_stack_deregister(st->vg_id);
    rank_san_stack_clean(st->base, st->size);
    cache_put(st);
    memset(st, 0, sizeof *st);
}
