/* One single-producer/single-consumer ring of fixed cells in shared memory:
 * the envelopes that one process sends to another on this node.
 *
 *   shared (in the receiver's segment)             private
 *   +------------------+                           sender:   shm_tx_t
 *   | tail   (64 B)    |  consumer: cells taken      head      next cell to fill
 *   +------------------+                             tail_seen last tail it read
 *   | cell 0  (256 B)  |  seq | len | bytes...     receiver: shm_rx_t
 *   | cell 1           |                             tail      next cell to take
 *   | ...              |
 *   | cell N-1         |  cell of position p: cells[p % N]
 *   +------------------+
 *
 * The sender fills cells[head % N] (len + bytes), then publishes it by
 * storing seq = head + 1 (release).  The receiver's cell is full when its
 * seq is tail + 1 (acquire): so it finds a new envelope by reading the cell
 * itself -- one cache line for a small envelope -- instead of a shared head
 * and then the cell (two lines, two cache misses per message).  seq counts
 * positions, not laps, so a cell is never cleared: a stale seq is always
 * another value.  The receiver publishes its tail (release) once done with a
 * cell; the sender reads it only when its cached copy says the ring is full.
 * head and tail are free-running uint32_t; differences are exact mod 2^32. */
#ifndef AMPI_SHM_RING_H
#define AMPI_SHM_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SHM_LINE 64
/* 128 cells of 256 B: 32 KiB a ring, so that osu_bw's window of 64 small
 * sends (plus the next window's first) never finds it full.  A cell takes a
 * compact envelope (28 B) with up to 220 bytes of data or a full one (56 B)
 * with 192, an IPC envelope (136 B) and every control message; larger
 * envelopes take UCX. */
#define SHM_CELLS 128u
#define SHM_CELL_SIZE 256u
#define SHM_CELL_DATA (SHM_CELL_SIZE - 2 * sizeof(uint32_t))

typedef struct shm_cell {
    _Alignas(SHM_LINE) _Atomic uint32_t seq; /* position + 1 once full */
    uint32_t len;
    uint8_t bytes[SHM_CELL_DATA];
} shm_cell_t;

typedef struct shm_ring {
    _Alignas(SHM_LINE) _Atomic uint32_t tail; /* the consumer's line: the producer only reads it */
    shm_cell_t cells[SHM_CELLS];
} shm_ring_t;

_Static_assert((SHM_CELLS & (SHM_CELLS - 1)) == 0, "SHM_CELLS must be a power of two");
_Static_assert(sizeof(shm_cell_t) == SHM_CELL_SIZE, "a cell is SHM_CELL_SIZE bytes");
_Static_assert(sizeof(shm_ring_t) % SHM_LINE == 0, "rings follow each other on line boundaries");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "ring words must be lock-free to work between processes");

typedef struct shm_tx {
    shm_ring_t *ring; /* NULL: no ring to this process */
    uint32_t head, tail_seen;
    _Atomic uint32_t *notify; /* the receiver's "something arrived" word, or NULL */
} shm_tx_t;

typedef struct shm_rx {
    shm_ring_t *ring;
    uint32_t tail;
} shm_rx_t;

static inline void shm_ring_init(shm_ring_t *r) { memset(r, 0, sizeof *r); }

/* Copies a[alen] then b[blen] into the next cell; false (nothing done) when
 * they do not fit a cell or the ring is full. */
static inline bool shm_ring_put(shm_tx_t *t, const void *a, size_t alen, const void *b, size_t blen)
{
    if (alen > SHM_CELL_DATA || blen > SHM_CELL_DATA - alen) /* (no alen + blen: it could wrap) */
        return false;
    if (t->head - t->tail_seen >= SHM_CELLS) {
        t->tail_seen = atomic_load_explicit(&t->ring->tail, memory_order_acquire);
        if (t->head - t->tail_seen >= SHM_CELLS)
            return false;
    }
    shm_cell_t *c = &t->ring->cells[t->head & (SHM_CELLS - 1)];
    c->len = (uint32_t)(alen + blen);
    memcpy(c->bytes, a, alen);
    if (blen)
        memcpy(c->bytes + alen, b, blen);
    t->head++;
    atomic_store_explicit(&c->seq, t->head, memory_order_release);
    if (t->notify) /* after the cell: a receiver that sees the word sees the cell */
        atomic_store_explicit(t->notify, 1, memory_order_release);
    return true;
}

/* The oldest full cell, or NULL when the ring is empty. */
static inline const shm_cell_t *shm_ring_peek(const shm_rx_t *r)
{
    const shm_cell_t *c = &r->ring->cells[r->tail & (SHM_CELLS - 1)];
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != r->tail + 1)
        return NULL;
    return c;
}

/* Give the cell shm_ring_peek returned back to the sender (after reading it). */
static inline void shm_ring_pop(shm_rx_t *r)
{
    r->tail++;
    atomic_store_explicit(&r->ring->tail, r->tail, memory_order_release);
}

#endif
