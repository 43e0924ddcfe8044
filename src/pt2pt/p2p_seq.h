/* Per-peer message sequence numbers of a rank (send_seq by destination,
 * recv_seq by source), which keep the envelopes of one pair in order over
 * routes that may overtake each other.  A dense array by world rank costs
 * 4 bytes per rank of the job for every local rank -- V^2 for the process
 * (-np 2 +vp 20000: 1.5 GB) -- so past a few million entries per process the
 * numbers live in a small hash table of the peers a rank has actually
 * talked to (a barrier: log V of them). */
#ifndef AMPI_P2P_SEQ_H
#define AMPI_P2P_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct p2p_seq {
    uint32_t *dense;  /* by world rank, or NULL: the table below */
    uint32_t *keys;   /* peer + 1; 0: empty slot */
    uint32_t *vals;
    uint32_t cap;     /* a power of two */
    uint32_t count;
} p2p_seq_t;

/* Dense up to this many entries per process (nlocal x nranks): 16 MiB for
 * send and receive numbers together. */
#define P2P_SEQ_DENSE_MAX ((size_t)2 << 20)

/* Returns 0, or -1 when out of memory. */
int p2p_seq_init(p2p_seq_t *s, int nranks, bool dense);
void p2p_seq_fini(p2p_seq_t *s);
uint32_t *p2p_seq_sparse(p2p_seq_t *s, int peer);

/* The counter for peer: valid until the next call for another peer. */
static inline uint32_t *p2p_seq(p2p_seq_t *s, int peer)
{
    if (__builtin_expect(s->dense != NULL, 1))
        return &s->dense[peer];
    return p2p_seq_sparse(s, peer);
}

#endif
