/* ULT stack allocation: see rank_stack.h. */
#define _GNU_SOURCE
#include "rank/rank_stack.h"
#include "rank/rank_san.h"
#include "core/core_settings.h"

#include "util/util_list.h"
#include "util/util_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
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

/* ---- the guard budget ---- */

/* Maps left for everything else (libraries, malloc arenas, UCX, CUDA). */
#define MAPS_KEPT_FOR_THE_REST 16384

static long guard_budget = -1, budget_override = -1;
static long guarded_live; /* under cache.lock */

long rank_stack_guard_budget(void)
{
    if (budget_override >= 0)
        return budget_override;
    if (guard_budget < 0) {
        long max_maps = 65530;
        FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
        if (f) {
            if (fscanf(f, "%ld", &max_maps) != 1)
                max_maps = 65530;
            fclose(f);
        }
        long b = (max_maps - MAPS_KEPT_FOR_THE_REST) / 2;
        guard_budget = b < 1024 ? 1024 : b;
    }
    return guard_budget;
}

void rank_stack_set_guard_budget(long budget)
{
    pthread_mutex_lock(&cache.lock);
    budget_override = budget;
    pthread_mutex_unlock(&cache.lock);
}

/* ---- shared mappings: [guard page][slot 0][slot 1]...; a stack is the
 * slot less its top RANK_STACK_CANARY_WORDS words, which hold the canary of
 * the slot above (slot 0 has the guard page instead) ---- */

struct rank_stack_chunk {
    util_dlink_t link;  /* in `open_chunks` while it has a free slot */
    char *map;
    size_t map_size, slot_size;
    int used;           /* slots holding a stack */
    int fresh;          /* slots [fresh, RANK_STACK_SLOTS) never used yet */
    int nfree;          /* freed slots, in free_slot[0..nfree) */
    int free_slot[RANK_STACK_SLOTS];
};

static util_dlist_t open_chunks = { { &open_chunks.head, &open_chunks.head } };
static bool warned_unguarded;

#define CANARY_BYTES (RANK_STACK_CANARY_WORDS * sizeof(unsigned long long))

static rank_stack_chunk_t *chunk_new(size_t slot_size)
{
    size_t page = rank_stack_guard_size();
    rank_stack_chunk_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->slot_size = slot_size;
    c->map_size = page + RANK_STACK_SLOTS * slot_size;
    void *map = mmap(NULL, c->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                     -1, 0);
    if (map == MAP_FAILED || mprotect(map, page, PROT_NONE) != 0) {
        int err = errno;
        if (map != MAP_FAILED)
            munmap(map, c->map_size);
        free(c);
        errno = err;
        return NULL;
    }
    c->map = map;
    return c;
}

/* Under cache.lock. */
static int chunk_take(rank_stack_t *st, size_t size)
{
    size_t page = rank_stack_guard_size();
    size_t slot_size = (size + CANARY_BYTES + page - 1) & ~(page - 1);
    rank_stack_chunk_t *c = NULL;
    UTIL_DLIST_FOREACH(&open_chunks, it) {
        rank_stack_chunk_t *o = UTIL_CONTAINER_OF(it, rank_stack_chunk_t, link);
        if (o->slot_size == slot_size) {
            c = o;
            break;
        }
    }
    if (!c) {
        if (!(c = chunk_new(slot_size)))
            return -1;
        util_dlist_push_front(&open_chunks, &c->link);
    }
    int slot = c->nfree ? c->free_slot[--c->nfree] : c->fresh++;
    c->used++;
    if (!c->nfree && c->fresh == RANK_STACK_SLOTS)
        util_dlist_remove(&c->link); /* full */
    char *start = c->map + page + (size_t)slot * slot_size;
    st->chunk = c;
    st->slot = slot;
    st->base = start;
    st->size = slot_size - CANARY_BYTES;
    if (slot == 0) {
        st->map = c->map; /* the guard page of the mapping */
        st->map_size = page + st->size;
        st->canary = NULL;
    } else {
        unsigned long long *canary = (unsigned long long *)(start - CANARY_BYTES);
        for (int i = 0; i < RANK_STACK_CANARY_WORDS; i++)
            canary[i] = RANK_STACK_CANARY;
        st->map = canary;
        st->map_size = CANARY_BYTES + st->size;
        st->canary = canary;
    }
    return 0;
}

/* Under cache.lock. */
static void chunk_give(const rank_stack_t *st)
{
    rank_stack_chunk_t *c = st->chunk;
    bool was_full = !c->nfree && c->fresh == RANK_STACK_SLOTS;
    c->free_slot[c->nfree++] = st->slot;
    c->used--;
    if (c->used == 0) {
        if (!was_full)
            util_dlist_remove(&c->link);
        munmap(c->map, c->map_size);
        free(c);
    } else if (was_full) {
        util_dlist_push_front(&open_chunks, &c->link);
    }
}

int rank_stack_alloc(rank_stack_t *st, size_t size)
{
    size_t page = rank_stack_guard_size();
    if (size == 0)
        size = rank_stack_default_size();
    if (size < RANK_STACK_MIN_SIZE)
        size = RANK_STACK_MIN_SIZE;
    if (size > SIZE_MAX - 2 * page - CANARY_BYTES) {
        errno = ENOMEM;
        return -1;
    }
    size = (size + page - 1) & ~(page - 1);
    size_t map_size = size + page;
    memset(st, 0, sizeof *st);

    pthread_mutex_lock(&cache.lock);
    bool guarded = guarded_live < rank_stack_guard_budget();
    if (!guarded) {
        int rc = chunk_take(st, size);
        bool warn = rc == 0 && !warned_unguarded;
        warned_unguarded |= warn;
        pthread_mutex_unlock(&cache.lock);
        if (rc != 0)
            return -1;
        if (warn)
            util_debug("more than %ld ranks in this process: the kernel's map limit (vm.max_map_count) leaves "
                       "no guard page for each further stack; overflows are caught by a canary instead",
                       rank_stack_guard_budget());
        st->vg_id = rank_san_stack_register(st->base, st->size);
        return 0;
    }
    guarded_live++;
    pthread_mutex_unlock(&cache.lock);

    if (!cache_take(st, map_size)) {
        /* NORESERVE: only the pages a rank touches count against memory,
         * so thousands of 8 MiB stacks are fine. */
        void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        int err = errno;
        if (map != MAP_FAILED && mprotect(map, page, PROT_NONE) != 0) {
            err = errno;
            munmap(map, map_size);
            map = MAP_FAILED;
        }
        if (map == MAP_FAILED) {
            pthread_mutex_lock(&cache.lock);
            guarded_live--;
            pthread_mutex_unlock(&cache.lock);
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
    pthread_mutex_lock(&cache.lock);
    if (st->chunk)
        chunk_give(st);
    else
        guarded_live--;
    pthread_mutex_unlock(&cache.lock);
    if (!st->chunk)
        cache_put(st);
    memset(st, 0, sizeof *st);
}
