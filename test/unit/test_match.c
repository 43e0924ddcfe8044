/* Unit test of the MPI matching queues (src/pt2pt/p2p_match.c): exact and
 * wildcard receives, the "first posted" rule across buckets and the wildcard
 * list, arrival order for unexpected messages, contexts kept apart. */
#include "pt2pt/p2p_match.h"

#include <stdio.h>
#include <stdlib.h>

#include "unit_check.h"

static p2p_mentry_t entry(uint32_t ctx, int src, int tag)
{
    p2p_mentry_t e = { .ctx = ctx, .src = src, .tag = tag };
    return e;
}

static void test_posted_order(void)
{
    p2p_queue_t q;
    p2p_queue_init(&q);
    p2p_mentry_t a = entry(0, 1, 5), w = entry(0, P2P_ANY, 5), b = entry(0, 1, 5), t = entry(0, 1, P2P_ANY);
    p2p_posted_add(&q, &a);
    p2p_posted_add(&q, &w);
    p2p_posted_add(&q, &b);
    p2p_posted_add(&q, &t);
    CHECK(q.count == 4);
    /* messages (0,1,5) take a, then w (posted before b), then b, then t */
    CHECK(p2p_posted_match(&q, 0, 1, 5) == &a);
    CHECK(p2p_posted_match(&q, 0, 1, 5) == &w);
    CHECK(p2p_posted_match(&q, 0, 1, 5) == &b);
    CHECK(p2p_posted_match(&q, 0, 1, 5) == &t);
    CHECK(p2p_posted_match(&q, 0, 1, 5) == NULL);
    CHECK(q.count == 0);
}

static void test_posted_context_and_keys(void)
{
    p2p_queue_t q;
    p2p_queue_init(&q);
    p2p_mentry_t a = entry(2, 0, 7), any = entry(4, P2P_ANY, P2P_ANY);
    p2p_posted_add(&q, &a);
    p2p_posted_add(&q, &any);
    CHECK(p2p_posted_match(&q, 0, 0, 7) == NULL); /* other context */
    CHECK(p2p_posted_match(&q, 2, 0, 8) == NULL); /* other tag */
    CHECK(p2p_posted_match(&q, 2, 1, 7) == NULL); /* other source */
    CHECK(p2p_posted_match(&q, 4, 3, 99) == &any);
    CHECK(p2p_posted_match(&q, 2, 0, 7) == &a);
    /* cancel */
    p2p_posted_add(&q, &a);
    p2p_posted_remove(&q, &a);
    CHECK(p2p_posted_match(&q, 2, 0, 7) == NULL);
    CHECK(q.count == 0);
}

static void test_unexpected(void)
{
    p2p_queue_t q;
    p2p_queue_init(&q);
    enum { N = 300 };
    p2p_mentry_t *m = calloc(N, sizeof *m);
    for (int i = 0; i < N; i++) { /* sources 0..2, tags 0..4, interleaved */
        m[i] = entry(0, i % 3, i % 5);
        p2p_unexp_add(&q, &m[i]);
    }
    CHECK(p2p_unexp_find(&q, 0, 1, 4) == &m[4]); /* oldest with src 1 tag 4 */
    CHECK(p2p_unexp_find(&q, 0, P2P_ANY, 3) == &m[3]);
    CHECK(p2p_unexp_find(&q, 0, 2, P2P_ANY) == &m[2]);
    CHECK(p2p_unexp_find(&q, 0, P2P_ANY, P2P_ANY) == &m[0]);
    CHECK(p2p_unexp_find(&q, 1, P2P_ANY, P2P_ANY) == NULL);
    /* draining with a wildcard gives arrival order */
    for (int i = 0; i < N; i++) {
        p2p_mentry_t *e = p2p_unexp_find(&q, 0, P2P_ANY, P2P_ANY);
        CHECK(e == &m[i]);
        if (e)
            p2p_unexp_remove(&q, e);
    }
    CHECK(q.count == 0);
    /* exact receives keep per-key order while others are removed in between */
    for (int i = 0; i < N; i++)
        p2p_unexp_add(&q, &m[i]);
    for (int i = 0; i < N; i++) {
        int want = i; /* messages with key (i%3, i%5) appear every 15 */
        p2p_mentry_t *e = p2p_unexp_find(&q, 0, m[i].src, m[i].tag);
        CHECK(e == &m[want]);
        if (e)
            p2p_unexp_remove(&q, e);
    }
    CHECK(q.count == 0);
    free(m);
}

/* p2p_posted_find (the AM callback's look before it delivers in place):
 * the same receive as p2p_posted_match would take, left in the queue until
 * p2p_posted_remove; an empty queue answers NULL. */
static void test_posted_find(void)
{
    p2p_queue_t q;
    p2p_queue_init(&q);
    CHECK(p2p_posted_find(&q, 0, 1, 5) == NULL);
    CHECK(p2p_unexp_find(&q, 0, 1, 5) == NULL);
    p2p_mentry_t a = entry(0, 1, 5), w = entry(0, P2P_ANY, 5), b = entry(0, 2, 5);
    p2p_posted_add(&q, &w);
    p2p_posted_add(&q, &a);
    p2p_posted_add(&q, &b);
    /* the wildcard was posted first: it wins over the exact a */
    CHECK(p2p_posted_find(&q, 0, 1, 5) == &w);
    CHECK(p2p_posted_find(&q, 0, 1, 5) == &w); /* still there */
    CHECK(q.count == 3);
    p2p_posted_remove(&q, &w);
    CHECK(q.count == 2);
    CHECK(p2p_posted_find(&q, 0, 1, 5) == &a);
    CHECK(p2p_posted_find(&q, 0, 2, 5) == &b);
    CHECK(p2p_posted_find(&q, 0, 3, 5) == NULL);
    CHECK(p2p_posted_find(&q, 1, 1, 5) == NULL); /* other context */
    CHECK(p2p_posted_match(&q, 0, 1, 5) == &a);
    CHECK(p2p_posted_match(&q, 0, 2, 5) == &b);
    CHECK(q.count == 0);
    CHECK(p2p_posted_find(&q, 0, 1, 5) == NULL);
}

int main(void)
{
    test_posted_order();
    test_posted_context_and_keys();
    test_unexpected();
    test_posted_find();
    if (unit_check_summary("test_match")) {
        return 1;
    }
    printf("test_match: ok\n");
    return 0;
}
