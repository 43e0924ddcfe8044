/* ULT stacks: mmap'ed, with one PROT_NONE guard page below the usable part so
 * that an overflow faults (and rank_guard reports it) instead of silently
 * overwriting whatever memory lies below. */
#ifndef AMPI_RANK_STACK_H
#define AMPI_RANK_STACK_H

#include <stddef.h>

typedef struct rank_stack {
    void *map;       /* whole mapping: guard page(s) first */
    size_t map_size;
    void *base;      /* lowest usable byte, just above the guard */
    size_t size;     /* usable bytes */
    unsigned vg_id;  /* Valgrind's id for the registered stack */
} rank_stack_t;

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
