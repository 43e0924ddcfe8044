/* Envelopes between processes of one node through shared memory, bypassing
 * UCX (whose active-message send and receive cost ~500 instructions a hop).
 *
 * Each process creates one POSIX shared-memory segment for its inbound
 * traffic: a header and one ring (shm_ring.h) per sender process of its node.  Every
 * process maps every peer's segment and is the only producer of its own
 * ring there (one PE, i.e. one OS thread, per process), and the only
 * consumer of the rings in its own segment.
 *
 *   segment of process p:  [header: layout, notify word][ring from 0][ring from 1]...
 *
 * Start-up (every process of the job; rings only between the processes that
 * PMIx names as this node's, see env_run.c):
 *   shm_create  -- before the PMIx fence: create, size, publish the name
 *   shm_attach  -- after it: map every peer's segment
 *   shm_unlink_own -- after a second fence: nothing stays in /dev/shm even
 *                  if the job crashes later
 * A process whose segment could not be created publishes no name: its peers
 * send to it through UCX, and its own sends still use theirs.
 *
 * The layer moves bytes only; it knows nothing of what an envelope means.
 * Who may use it for which envelope (MPI ordering) is pt2pt's business. */
#ifndef AMPI_SHM_H
#define AMPI_SHM_H

#include "shm/shm_ring.h"

#include <stdbool.h>
#include <stddef.h>
#include "util/util_log.h"

/* Create this process's segment (enabled false: publish that there is
 * none).  Returns 0 when the segment exists. */
int shm_create(int proc, int nprocs, bool enabled);
/* Map the peers' segments (after the fence that follows shm_create). */
void shm_attach(void);
void shm_unlink_own(void);
/* Unmap everything (after the last fence: nobody writes any more). */
void shm_fini(void);

/* Rings to each process by number (NULL ring: none); NULL when shm is off. */
extern shm_tx_t *shm_tx UTIL_HIDDEN;

/* Envelopes this process sent since its poll last took one (shm_poll
 * resets it): more than one means a stream, where shm_ring_ask_ahead pays. */
extern unsigned shm_sent_since_taken UTIL_HIDDEN;

static inline void shm_sent(shm_tx_t *t)
{
    if (shm_sent_since_taken++)
        shm_ring_ask_ahead(t);
}

/* Hand an envelope (a[alen] followed by b[blen]) to process proc's ring;
 * false when there is none, it is full, or the envelope does not fit a
 * cell -- the caller then sends it some other way. */
static inline bool shm_send(int proc, const void *a, size_t alen, const void *b, size_t blen)
{
    if (!shm_tx || !shm_tx[proc].ring || !shm_ring_put(&shm_tx[proc], a, alen, b, blen))
        return false;
    shm_sent(&shm_tx[proc]);
    return true;
}

/* shm_send in two steps (shm_ring_reserve, shm_ring_publish): the caller
 * writes the entry's len bytes into the cell's bytes between the two and
 * passes publish the same len; NULL: as shm_send's false. */
static inline shm_cell_t *shm_reserve(int proc, size_t len)
{
    if (!shm_tx || !shm_tx[proc].ring)
        return NULL;
    return shm_ring_reserve(&shm_tx[proc], len);
}
static inline void shm_publish(int proc, shm_cell_t *c, size_t len)
{
    shm_ring_publish(&shm_tx[proc], c, len);
    shm_sent(&shm_tx[proc]);
}

/* Whether process proc's ring takes medium entries (shm_ring.h) and has not
 * yet taken the last entry we marked with shm_mark: we are streaming to it
 * (pt2pt marks its payload envelopes, not the ACKs and replies between
 * them, which would make a ping-pong look like a stream). */
static inline bool shm_streaming(int proc)
{
    return shm_tx && shm_tx[proc].ring && shm_tx[proc].entry_max > SHM_ENTRY_MAX && shm_ring_busy(&shm_tx[proc]);
}
static inline void shm_mark(int proc)
{
    if (shm_tx && shm_tx[proc].ring)
        shm_tx[proc].mark = shm_tx[proc].head;
}

/* Take arrived envelopes, oldest first per sender, calling fn on each; the
 * bytes are valid during the call only.  Returns how many were taken.  fn
 * may send (also through shm); a nested shm_poll returns 0 at once.  fn
 * returns true to end this poll after its envelope (the rest wait for the
 * next one). */
typedef bool (*shm_envelope_fn)(const void *env, size_t len);
int shm_poll(shm_envelope_fn fn);

#endif
