/* ULT stacks: mmap'ed, with one PROT_NONE guard page below the usable part so
 * that an overflow faults (and rank_guard reports it) instead of silently
 * overwriting whatever memory lies below.
 *
 * A guard page splits the mapping: every guarded stack costs two of the
 * kernel's memory maps, and a process may hold vm.max_map_count of them
 * (65530 by default), so guarded stacks stop at about 32,000.  Past a budget
 * (rank_stack_guard_budget) stacks come from shared mappings of
 * RANK_STACK_SLOTS slots with one guard page for the whole mapping (two maps
 * per 64 stacks); there a canary, the top 2 KiB of the slot below each
 * stack, catches an overflow at the rank's next switch (rank_stack_canary_ok),
 * before the rank below runs on its damaged frames. */
#ifndef AMPI_RANK_STACK_H
#define AMPI_RANK_STACK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rank_stack_chunk rank_stack_chunk_t;

typedef struct rank_stack {
    void *map;       /* whole mapping: guard page(s) first (a shared slot: its
                      * canary below the stack, else its own guard page) */
    size_t map_size;
    void *base;      /* lowest usable byte, just above the guard */
    size_t size;     /* usable bytes */
    unsigned vg_id;  /* Valgrind's id for the registered stack */
    const unsigned long long *canary; /* a shared slot's canary, else NULL */
    rank_stack_chunk_t *chunk;        /* the shared mapping, else NULL */
    int slot;
} rank_stack_t;

#define RANK_STACK_SLOTS 64
/* 2 KiB: every frame smaller than that (return address, saved registers)
 * writes into it on its way down; it shares the page of the top frames of
 * the stack below, so it costs no memory of its own. */
#define RANK_STACK_CANARY_WORDS 256
#define RANK_STACK_CANARY 0x5354414b4f564552ull /* "STAKOVER" */

/* Guarded stacks a process may hold at once: from vm.max_map_count, less
 * what the rest of the process may need. */
long rank_stack_guard_budget(void);
/* For tests: a smaller budget (-1: back to the computed one). */
void rank_stack_set_guard_budget(long budget);

/* True while the canary below a shared slot's stack is intact (always for
 * a guarded stack). */
static inline bool rank_stack_canary_ok(const rank_stack_t *st)
{
    const unsigned long long *c = st->canary;
    if (!c)
        return true;
    unsigned long long bad = 0;
    for (int i = 0; i < RANK_STACK_CANARY_WORDS; i++)
        bad |= c[i] ^ RANK_STACK_CANARY;
    return bad == 0;
}

#define RANK_STACK_DEFAULT_SIZE ((size_t)8 << 20)
#define RANK_STACK_MIN_SIZE ((size_t)16 << 10)

/* AMPI_STACK_SIZE ("65536", "512K", "8M", "1G"), whose default is
 * RANK_STACK_DEFAULT_SIZE; read once. */
size_t rank_stack_default_size(void);

/* Map a stack with at least size usable bytes (0 = the default; rounded up
 * to whole pages and to RANK_STACK_MIN_SIZE).  Reuses a cached stack of the
 * same size when there is one.  Returns 0, or -1 with errno set. */
int rank_stack_alloc(rank_stack_t *st, size_t size);

/* Give the stack back (to a small cache, else to the system). */
void rank_stack_free(rank_stack_t *st);

size_t rank_stack_guard_size(void); /* bytes of guard below each stack */

#endif
