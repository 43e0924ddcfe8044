#include "pt2pt/p2p_match.h"

static inline unsigned bucket_of(uint32_t ctx, int src, int tag)
{
    uint32_t h = ctx * 0x9E3779B1u ^ (uint32_t)src * 0x85EBCA77u ^ (uint32_t)tag * 0xC2B2AE3Du;
    h ^= h >> 15;
    return h & (P2P_NBUCKETS - 1);
}

static inline bool key_matches(const p2p_mentry_t *recv, uint32_t ctx, int src, int tag)
{
    return recv->ctx == ctx && (recv->src == P2P_ANY || recv->src == src) &&
           (recv->tag == P2P_ANY || recv->tag == tag);
}

void p2p_queue_init(p2p_queue_t *q)
{
    for (int i = 0; i < P2P_NBUCKETS; i++)
        util_dlist_init(&q->bucket[i]);
    util_dlist_init(&q->wild);
    util_dlist_init(&q->order);
    q->next_seq = 0;
    q->count = 0;
}

void p2p_posted_add(p2p_queue_t *q, p2p_mentry_t *e)
{
    e->seq = q->next_seq++;
    q->count++;
    if (e->src == P2P_ANY || e->tag == P2P_ANY)
        util_dlist_push_back(&q->wild, &e->link);
    else
        util_dlist_push_back(&q->bucket[bucket_of(e->ctx, e->src, e->tag)], &e->link);
}

p2p_mentry_t *p2p_posted_find(p2p_queue_t *q, uint32_t ctx, int src, int tag)
{
    if (q->count == 0) /* nothing posted: spare the bucket hash */
        return NULL;
    p2p_mentry_t *exact = NULL, *wild = NULL;
    util_dlist_t *b = &q->bucket[bucket_of(ctx, src, tag)];
    UTIL_DLIST_FOREACH(b, it) {
        p2p_mentry_t *e = UTIL_CONTAINER_OF(it, p2p_mentry_t, link);
        if (e->ctx == ctx && e->src == src && e->tag == tag) {
            exact = e;
            break;
        }
    }
    UTIL_DLIST_FOREACH(&q->wild, it) {
        p2p_mentry_t *e = UTIL_CONTAINER_OF(it, p2p_mentry_t, link);
        if (exact && e->seq > exact->seq)
            break; /* everything further was posted after the exact match */
        if (key_matches(e, ctx, src, tag)) {
            wild = e;
            break;
        }
    }
    return wild ? wild : exact;
}

p2p_mentry_t *p2p_posted_match(p2p_queue_t *q, uint32_t ctx, int src, int tag)
{
    p2p_mentry_t *m = p2p_posted_find(q, ctx, src, tag);
    if (m) {
        util_dlist_remove(&m->link);
        q->count--;
    }
    return m;
}

void p2p_posted_remove(p2p_queue_t *q, p2p_mentry_t *e)
{
    util_dlist_remove(&e->link);
    q->count--;
}

void p2p_unexp_add(p2p_queue_t *q, p2p_mentry_t *e)
{
    e->seq = q->next_seq++;
    q->count++;
    util_dlist_push_back(&q->bucket[bucket_of(e->ctx, e->src, e->tag)], &e->link);
    util_dlist_push_back(&q->order, &e->order);
}

p2p_mentry_t *p2p_unexp_find(p2p_queue_t *q, uint32_t ctx, int src, int tag)
{
    if (q->count == 0) /* nothing waiting: spare the bucket hash */
        return NULL;
    if (src != P2P_ANY && tag != P2P_ANY) {
        util_dlist_t *b = &q->bucket[bucket_of(ctx, src, tag)];
        UTIL_DLIST_FOREACH(b, it) {
            p2p_mentry_t *e = UTIL_CONTAINER_OF(it, p2p_mentry_t, link);
            if (e->ctx == ctx && e->src == src && e->tag == tag)
                return e;
        }
        return NULL;
    }
    UTIL_DLIST_FOREACH(&q->order, it) {
        p2p_mentry_t *e = UTIL_CONTAINER_OF(it, p2p_mentry_t, order);
        if (e->ctx == ctx && (src == P2P_ANY || e->src == src) && (tag == P2P_ANY || e->tag == tag))
            return e;
    }
    return NULL;
}

void p2p_unexp_remove(p2p_queue_t *q, p2p_mentry_t *e)
{
    util_dlist_remove(&e->link);
    util_dlist_remove(&e->order);
    q->count--;
}
