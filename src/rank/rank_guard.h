/* Registry of live ULT stacks, read by the SIGSEGV/SIGBUS handler to tell a
 * stack overflow (a touch of some ULT's guard page) from any other fault.
 * rank_guard_install() itself is declared in rank_ult.h. */
#ifndef AMPI_RANK_GUARD_H
#define AMPI_RANK_GUARD_H

#include "util/util_list.h"
#include "rank/rank_ult.h"

typedef struct rank_guard_entry {
    util_dlink_t link;
    const rank_ult_t *ult; /* its stack_map, stack_map_size, stack_size and id */
} rank_guard_entry_t;

/* The entry lives inside the ULT's own bookkeeping: no allocation here. */
void rank_guard_add(rank_guard_entry_t *e, const rank_ult_t *ult);
void rank_guard_remove(rank_guard_entry_t *e);

/* The ULT whose guard page contains addr, or NULL.  Async-signal-safe. */
const rank_ult_t *rank_guard_find(const void *addr);

#endif
