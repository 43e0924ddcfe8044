/* MPI matching queues of one rank.
 *
 * Posted receives: exact (context, source, tag) keys sit in hash buckets;
 * receives with MPI_ANY_SOURCE or MPI_ANY_TAG sit in one `wild` list.  Every
 * posted receive gets a sequence number, so an arriving message takes the
 * older of (first exact match in its bucket, first matching wildcard): MPI's
 * "first posted receive that matches" rule, without scanning every receive.
 *
 * Unexpected messages: each is in its key's bucket and in the arrival-ordered
 * `order` list.  An exact receive looks at its bucket, a wildcard receive
 * walks `order`; both find the oldest match, which keeps MPI's non-overtaking
 * order per (sender, communicator) because envelopes from one sender enter in
 * their send order (p2p_env_arrived in p2p_recv.c restores that order when the
 * network completes them out of order). */
#ifndef AMPI_P2P_MATCH_H
#define AMPI_P2P_MATCH_H

#include <stdbool.h>
#include <stdint.h>
#include "util/util_list.h"

#define P2P_ANY (-1) /* == MPI_ANY_SOURCE == MPI_ANY_TAG */
#define P2P_NBUCKETS 64

typedef struct p2p_mentry {
    util_dlink_t link;  /* bucket, or the wildcard list */
    util_dlink_t order; /* unexpected only: arrival order */
    uint32_t ctx;
    int32_t src, tag;
    uint64_t seq;
} p2p_mentry_t;

typedef struct p2p_queue {
    util_dlist_t bucket[P2P_NBUCKETS];
    util_dlist_t wild;  /* posted: wildcard receives */
    util_dlist_t order; /* unexpected: every message, oldest first */
    uint64_t next_seq;
    long count;
} p2p_queue_t;

void p2p_queue_init(p2p_queue_t *q);

void p2p_posted_add(p2p_queue_t *q, p2p_mentry_t *e);
/* Removes and returns the oldest posted receive matching a message. */
p2p_mentry_t *p2p_posted_match(p2p_queue_t *q, uint32_t ctx, int src, int tag);
/* The same receive, left in the queue (p2p_posted_remove takes it out). */
p2p_mentry_t *p2p_posted_find(p2p_queue_t *q, uint32_t ctx, int src, int tag);
void p2p_posted_remove(p2p_queue_t *q, p2p_mentry_t *e);

void p2p_unexp_add(p2p_queue_t *q, p2p_mentry_t *e);
/* Oldest unexpected message matching a receive (src/tag may be P2P_ANY); not removed. */
p2p_mentry_t *p2p_unexp_find(p2p_queue_t *q, uint32_t ctx, int src, int tag);
void p2p_unexp_remove(p2p_queue_t *q, p2p_mentry_t *e);

#endif
