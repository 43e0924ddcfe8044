/* One single-producer/single-consumer ring of fixed cells in shared memory:
 * the envelopes that one process sends to another on this node.
 *
 *   shared (in the receiver's segment)             private
 *   +------------------+                           sender:   shm_tx_t
 *   | tail   (64 B)    |  consumer: cells taken      head      next cell to fill
 *   +------------------+                             tail_seen last tail it read
 *   | cell 0  (256 B)  |  seq | len | bytes...       mask      N - 1
 *   | cell 1           |                           receiver: shm_rx_t
 *   | ...              |                             tail      next cell to take
 *   | cell N-1         |  cell of position p:        mask      N - 1
 *   +------------------+  cells[p & (N - 1)]
 *
 * N, a power of two, is chosen per job (shm_ring_cells_for: the more
 * processes share a node, the smaller the rings) and is the same for every
 * ring of the job.
 *
 * An entry is one envelope in 1..SHM_ENTRY_CELLS consecutive cells: seq and
 * len in its first cell's header, its bytes from there on through the cells
 * that follow (their headers too), so that the receiver sees them in one
 * piece.  An entry never wraps past cell N-1: when it would, the sender
 * first fills the rest of the lap with a pad entry (len SHM_PAD) that the
 * receiver skips.
 *
 * The sender fills the entry, then publishes it by storing len and then
 * seq = its first position + 1 (release): the cell's stores in one burst,
 * as the receiver spins on its first line (shm_ring_reserve says why).  A
 * sender that streams asks ahead for the line of a later cell
 * (shm_ring_ask_ahead).  The receiver's entry is there when the seq of
 * cells[tail % N] is tail + 1 (acquire): it finds a new envelope by reading
 * the cell itself -- one cache line for a small envelope -- instead of a
 * shared head and then the cell (two lines, two misses per message).
 * Before the receiver gives an entry's cells back it stores into every cell
 * after the first the seq that cell would have had as an entry of this lap
 * (position + 1): a cell that carried bytes of a long entry may start an
 * entry on a later lap, and its header must not hold bytes that look like
 * the seq the receiver waits for.  So every cell's seq names a position of
 * the current or the last lap, never the one expected next.  The receiver
 * publishes its tail (release) once done with an entry; the sender reads it
 * only when its cached copy says the ring is too full.  head and tail are
 * free-running uint32_t; differences are exact mod 2^32. */
#ifndef AMPI_SHM_RING_H
#define AMPI_SHM_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/util_copy.h"

#define SHM_LINE 64
/* Cells of 256 B.  One takes a compact envelope (28 B) with up to 220
 * bytes of data or a full one (56 B) with 192, an IPC envelope (136 B) and
 * every control message; an entry of SHM_ENTRY_CELLS takes a full envelope
 * with the eager limit's 8 KiB of data (from 248 B on, UCX's active
 * messages cost more than the two copies of a ring entry, and an 8 KiB
 * eager envelope does not fit UCX's own shared-memory segments: it takes
 * UCX's multi-fragment path, 1.4x Open MPI's 8 KiB Allreduce; BENCHMARKS.md,
 * 2026-11-22, 4 x H200, b4273b4).  Larger
 * envelopes take UCX.
 * Rings of up to SHM_MAX_CELLS: 1 MiB a ring, so that osu_bw's window of
 * 64 envelopes of 8 KiB (33 cells each, 2112) never finds it full: a full
 * ring sends the rest through UCX, whose envelopes then wait for the ring's
 * in the stash (with rings too small for the window one of two 2 KiB osu_bw
 * runs falls from 3.4 to 1.0 GB/s; BENCHMARKS.md, 2026-11-22, 4 x H200,
 * b4273b4).  Every process holds one
 * ring per peer, so a node holds nprocs^2 rings: at most SHM_NODE_BUDGET
 * bytes of them, with no ring below SHM_MIN_CELLS (a pad plus the largest
 * entry must fit an empty ring); a job too large for that takes UCX. */
#define SHM_CELL_SIZE 256u
#define SHM_CELL_HDR (2 * sizeof(uint32_t))
#define SHM_CELL_DATA (SHM_CELL_SIZE - SHM_CELL_HDR) /* what a one-cell entry holds */
#define SHM_ENTRY_CELLS 33u
#define SHM_ENTRY_MAX (SHM_ENTRY_CELLS * SHM_CELL_SIZE - SHM_CELL_HDR)
/* Medium entries: up to SHM_MEDIUM_CELLS (a full envelope with 32 KiB of
 * data), in rings of at least SHM_MEDIUM_MIN_CELLS whose sender sets
 * shm_tx_t.entry_max; they always leave a quarter of the ring free for the
 * small envelopes and replies that follow (pt2pt sends 8-32 KiB payloads
 * this way only while the receiver is still busy with earlier ones, see
 * p2p_send.c). */
#define SHM_MEDIUM_CELLS 129u
#define SHM_MEDIUM_MAX (SHM_MEDIUM_CELLS * SHM_CELL_SIZE - SHM_CELL_HDR)
#define SHM_MEDIUM_MIN_CELLS 2048u
#define SHM_PAD UINT32_MAX /* len of an entry that fills the rest of a lap */
#define SHM_MIN_CELLS 128u
#define SHM_MAX_CELLS 4096u
#define SHM_NODE_BUDGET ((size_t)512 << 20)

typedef struct shm_cell {
    _Alignas(SHM_LINE) _Atomic uint32_t seq; /* first position + 1 once the entry is full */
    uint32_t len;
    uint8_t bytes[SHM_CELL_DATA]; /* an entry's bytes go on through the next cells */
} shm_cell_t;

typedef struct shm_ring {
    _Alignas(SHM_LINE) _Atomic uint32_t tail; /* the consumer's line: the producer only reads it */
    shm_cell_t cells[];                       /* a power of two of them */
} shm_ring_t;

_Static_assert((SHM_MIN_CELLS & (SHM_MIN_CELLS - 1)) == 0 && (SHM_MAX_CELLS & (SHM_MAX_CELLS - 1)) == 0,
               "ring sizes are powers of two");
_Static_assert(sizeof(shm_cell_t) == SHM_CELL_SIZE, "a cell is SHM_CELL_SIZE bytes");
_Static_assert(sizeof(shm_ring_t) % SHM_LINE == 0, "rings follow each other on line boundaries");
_Static_assert(SHM_ENTRY_CELLS <= SHM_MIN_CELLS / 2, "a pad and an entry fit an empty ring");
_Static_assert(SHM_MEDIUM_CELLS <= SHM_MEDIUM_MIN_CELLS / 8, "medium entries leave room in their rings");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "ring words must be lock-free to work between processes");

typedef struct shm_tx {
    shm_ring_t *ring; /* NULL: no ring to this process */
    uint32_t head, tail_seen;
    uint32_t mask;            /* the ring's cells - 1 */
    uint32_t entry_max;       /* longest entry it takes: 0 = SHM_ENTRY_MAX, or SHM_MEDIUM_MAX */
    uint32_t mark;            /* head after the last entry the caller marked (shm_ring_busy) */
    uint32_t ahead;           /* cells ahead of head asked for writing at each publish (0: none) */
    _Atomic uint32_t *notify; /* the receiver's "something arrived" word, or NULL */
} shm_tx_t;

typedef struct shm_rx {
    shm_ring_t *ring;
    uint32_t tail;
    uint32_t mask;
} shm_rx_t;

/* Bytes of a ring of `cells` cells. */
static inline size_t shm_ring_bytes(uint32_t cells) { return sizeof(shm_ring_t) + (size_t)cells * SHM_CELL_SIZE; }

static inline void shm_ring_init(shm_ring_t *r, uint32_t cells) { memset(r, 0, shm_ring_bytes(cells)); }

/* Cells per ring for a job of nprocs processes on a node: the largest power
 * of two up to SHM_MAX_CELLS whose nprocs^2 rings fit SHM_NODE_BUDGET; 0
 * when even SHM_MIN_CELLS do not (the job then takes UCX). */
static inline uint32_t shm_ring_cells_for(int nprocs)
{
    if (nprocs < 1)
        return 0;
    size_t rings = (size_t)nprocs * (size_t)nprocs;
    uint32_t cells = SHM_MAX_CELLS;
    while (cells >= SHM_MIN_CELLS && rings * shm_ring_bytes(cells) > SHM_NODE_BUDGET)
        cells /= 2;
    return cells >= SHM_MIN_CELLS ? cells : 0;
}

/* Cells of an entry of len bytes. */
static inline uint32_t shm_entry_cells(size_t len) { return (uint32_t)((len + SHM_CELL_HDR + SHM_CELL_SIZE - 1) / SHM_CELL_SIZE); }

/* Ask for a line we are about to write (PREFETCHW: a NOP on x86 CPUs
 * without it). */
static inline void shm_prefetch_write(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* The next entry, for len bytes that the caller writes into its bytes and
 * then publishes with shm_ring_publish(t, c, len) (nothing else may touch
 * the ring between the two); NULL (nothing done) when len exceeds the
 * ring's entry_max or the ring has no room (for a medium entry: no room
 * with a quarter of the ring left over).  Writes nothing into the entry's
 * cells: every store into them comes between reserve and publish, in one
 * burst.  The receiver spins on the first cell's line; a len stored here,
 * ahead of the rest, would take the line from it early, it would read the
 * line back meanwhile, and the remaining stores would have to take it
 * again: 1-64 B osu_latency 0.24-0.28 instead of 0.19-0.22 us on a 2-core
 * machine (BENCHMARKS.md, 2026-11-26, 2 x H100, d90652c). */
static inline shm_cell_t *shm_ring_reserve(shm_tx_t *t, size_t len)
{
    size_t max = t->entry_max ? t->entry_max : SHM_ENTRY_MAX;
    if (len > max)
        return NULL;
    uint32_t k = len <= SHM_CELL_DATA ? 1 : shm_entry_cells(len);
    uint32_t n = t->mask + 1;
    uint32_t at = t->head & t->mask;
    uint32_t pad = at + k > n ? n - at : 0; /* the entry would wrap: start the next lap */
    uint32_t keep = len > SHM_ENTRY_MAX ? n / 4 : 0;
    if (t->head + pad + k + keep - t->tail_seen > n) {
        t->tail_seen = atomic_load_explicit(&t->ring->tail, memory_order_acquire);
        if (t->head + pad + k + keep - t->tail_seen > n)
            return NULL;
    }
    if (pad) {
        shm_cell_t *p = &t->ring->cells[at];
        p->len = SHM_PAD;
        atomic_store_explicit(&p->seq, t->head + 1, memory_order_release);
        t->head += pad;
        at = 0;
    }
    return &t->ring->cells[at];
}

/* Make the entry of len bytes that shm_ring_reserve gave, now written,
 * visible to the receiver (len, then seq, last of the cell's stores). */
static inline void shm_ring_publish(shm_tx_t *t, shm_cell_t *c, size_t len)
{
    uint32_t first = t->head;
    c->len = (uint32_t)len;
    atomic_store_explicit(&c->seq, first + 1, memory_order_release);
    t->head += len <= SHM_CELL_DATA ? 1 : shm_entry_cells(len);
    if (t->notify) /* after the entry: a receiver that sees the word sees the entry */
        atomic_store_explicit(t->notify, 1, memory_order_release);
}

/* Streaming: ask for the cell t->ahead - 1 past head, which the receiver
 * left a lap ago, so that its line is ours by the time we write it: the
 * lines' ownership then moves while we fill the cells before them instead
 * of each envelope's stores waiting for theirs (osu_bw 1-16 B: 1.38-1.48x
 * Open MPI's rate with 8 cells ahead, 1.05-1.14x without; BENCHMARKS.md,
 * 2026-11-26, 2 x H100, 98f6c62).  Not in a ping-pong (shm.h: only for an
 * envelope sent right after another): there the receiver's own prefetcher
 * reads those lines too, and taking them in turn costs 0.07-0.09 us of
 * 32-64 B latency (same entry, a5b6db0). */
static inline void shm_ring_ask_ahead(const shm_tx_t *t)
{
    if (t->ahead)
        shm_prefetch_write(&t->ring->cells[(t->head + t->ahead - 1) & t->mask]);
}

/* Copies a[alen] then b[blen] into the next entry; false (nothing done)
 * where shm_ring_reserve gives none. */
static inline bool shm_ring_put(shm_tx_t *t, const void *a, size_t alen, const void *b, size_t blen)
{
    if (alen > SHM_MEDIUM_MAX || blen > SHM_MEDIUM_MAX) /* (then alen + blen cannot wrap) */
        return false;
    shm_cell_t *c = shm_ring_reserve(t, alen + blen);
    if (!c)
        return false;
    util_copy_small(c->bytes, a, alen);
    util_copy_small(c->bytes + alen, b, blen);
    shm_ring_publish(t, c, alen + blen);
    return true;
}

/* Whether the receiver has yet to take the last entry the caller marked
 * (t->mark = t->head after putting it); entries put after it, unmarked,
 * do not count.  Reads the receiver's tail line unless our cached copy
 * already says it took that entry. */
static inline bool shm_ring_busy(shm_tx_t *t)
{
    if ((int32_t)(t->mark - t->tail_seen) <= 0)
        return false;
    t->tail_seen = atomic_load_explicit(&t->ring->tail, memory_order_acquire);
    return (int32_t)(t->mark - t->tail_seen) > 0;
}

/* Give an entry of k cells starting at the tail back to the sender. */
static inline void shm_ring_release(shm_rx_t *r, uint32_t k)
{
    uint32_t at = r->tail & r->mask;
    for (uint32_t j = 1; j < k; j++) /* see the top: no stale bytes may look like a seq */
        atomic_store_explicit(&r->ring->cells[at + j].seq, r->tail + j + 1, memory_order_relaxed);
    r->tail += k;
    atomic_store_explicit(&r->ring->tail, r->tail, memory_order_release);
}

/* The oldest entry (its len and bytes), or NULL when the ring is empty;
 * skips pads. */
static inline const shm_cell_t *shm_ring_peek(shm_rx_t *r)
{
    for (;;) {
        const shm_cell_t *c = &r->ring->cells[r->tail & r->mask];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != r->tail + 1)
            return NULL;
        if (__builtin_expect(c->len != SHM_PAD, 1))
            return c;
        shm_ring_release(r, r->mask + 1 - (r->tail & r->mask));
    }
}

/* Give the entry shm_ring_peek returned back to the sender (after reading it). */
static inline void shm_ring_pop(shm_rx_t *r, const shm_cell_t *c)
{
    shm_ring_release(r, c->len <= SHM_CELL_DATA ? 1 : shm_entry_cells(c->len));
}

#endif
