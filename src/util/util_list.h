/* Intrusive doubly-linked lists.  Nodes live inside the objects they link, so
 * queue operations never allocate; UTIL_CONTAINER_OF recovers the object. */
#ifndef AMPI_UTIL_LIST_H
#define AMPI_UTIL_LIST_H

#include <stddef.h>
#include <stdbool.h>

#define UTIL_CONTAINER_OF(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

typedef struct util_dlink {
    struct util_dlink *prev, *next;
} util_dlink_t;

/* A list is a sentinel link: empty when it points at itself. */
typedef struct util_dlist {
    util_dlink_t head;
} util_dlist_t;

static inline void util_dlist_init(util_dlist_t *l) { l->head.prev = l->head.next = &l->head; }
static inline bool util_dlist_empty(const util_dlist_t *l) { return l->head.next == &l->head; }
static inline util_dlink_t *util_dlist_first(util_dlist_t *l)
{
    return util_dlist_empty(l) ? NULL : l->head.next;
}
/* Next element after n, or NULL at the end of l. */
static inline util_dlink_t *util_dlist_next(util_dlist_t *l, util_dlink_t *n)
{
    return n->next == &l->head ? NULL : n->next;
}
static inline void util_dlist_push_back(util_dlist_t *l, util_dlink_t *n)
{
    n->next = &l->head;
    n->prev = l->head.prev;
    l->head.prev->next = n;
    l->head.prev = n;
}
static inline void util_dlist_push_front(util_dlist_t *l, util_dlink_t *n)
{
    n->prev = &l->head;
    n->next = l->head.next;
    l->head.next->prev = n;
    l->head.next = n;
}
static inline void util_dlist_remove(util_dlink_t *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}
static inline util_dlink_t *util_dlist_pop_front(util_dlist_t *l)
{
    util_dlink_t *n = util_dlist_first(l);
    if (n)
        util_dlist_remove(n);
    return n;
}

#define UTIL_DLIST_FOREACH(l, it) \
    for (util_dlink_t *it = (l)->head.next; it != &(l)->head; it = it->next)

#endif
