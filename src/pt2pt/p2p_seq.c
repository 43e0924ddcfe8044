/* Sequence numbers by peer: see p2p_seq.h. */
#include "pt2pt/p2p_seq.h"
#include "util/util_log.h"

#include <stdlib.h>

int p2p_seq_init(p2p_seq_t *s, int nranks, bool dense)
{
    *s = (p2p_seq_t){ 0 };
    if (dense) {
        s->dense = calloc((size_t)nranks, sizeof *s->dense);
        return s->dense ? 0 : -1;
    }
    return 0; /* the table appears with the first peer */
}

void p2p_seq_fini(p2p_seq_t *s)
{
    free(s->dense);
    free(s->keys);
    free(s->vals);
    *s = (p2p_seq_t){ 0 };
}

static uint32_t slot_of(uint32_t key, uint32_t cap)
{
    return (key * 0x9e3779b1u) & (cap - 1); /* Fibonacci hashing */
}

static void grow(p2p_seq_t *s)
{
    uint32_t cap = s->cap ? s->cap * 2 : 16;
    uint32_t *keys = calloc(cap, sizeof *keys), *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals)
        util_fatal("out of memory for the sequence numbers of %u peers", s->count);
    for (uint32_t i = 0; i < s->cap; i++) {
        if (!s->keys[i])
            continue;
        uint32_t j = slot_of(s->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = s->keys[i];
        vals[j] = s->vals[i];
    }
    free(s->keys);
    free(s->vals);
    s->keys = keys;
    s->vals = vals;
    s->cap = cap;
}

uint32_t *p2p_seq_sparse(p2p_seq_t *s, int peer)
{
    uint32_t key = (uint32_t)peer + 1;
    if (s->cap) {
        for (uint32_t j = slot_of(key, s->cap);; j = (j + 1) & (s->cap - 1)) {
            if (s->keys[j] == key)
                return &s->vals[j];
            if (!s->keys[j])
                break;
        }
    }
    /* a new peer: kept at most half full, so probes stay short */
    if (2 * (s->count + 1) > s->cap)
        grow(s);
    uint32_t j = slot_of(key, s->cap);
    while (s->keys[j])
        j = (j + 1) & (s->cap - 1);
    s->keys[j] = key;
    s->vals[j] = 0;
    s->count++;
    return &s->vals[j];
}
