/* Wire ids of requests (p2p_wire.h): a table of slots, each with a
 * generation that grows when its request completes, so that an id from a
 * reply that comes late, twice, or forged finds nothing instead of a
 * request that reuses the memory.  Only requests that a peer must name get
 * one (synchronous sends, the IPC and CMA routes, a receive asking for a
 * push): eager and rendezvous sends never touch the table.  One PE per
 * process touches it. */
#include "pt2pt/p2p.h"
#include "util/util_log.h"

#include <stdlib.h>

typedef struct {
    p2p_req_t *req;     /* NULL: free */
    uint32_t gen;       /* the id's high half while req runs */
    uint32_t next_free; /* free list: slot index + 1, 0 ends it */
} reqid_slot_t;

static reqid_slot_t *slots;
static uint32_t nslots, free_head;

uint64_t p2p_reqid_issue(p2p_req_t *q)
{
    if (q->wire_slot == 0) {
        if (free_head == 0) {
            uint32_t n = nslots ? 2 * nslots : 64;
            reqid_slot_t *t = realloc(slots, (size_t)n * sizeof *t);
            if (!t)
                util_fatal("out of memory for request ids");
            for (uint32_t i = nslots; i < n; i++)
                t[i] = (reqid_slot_t){ .req = NULL, .gen = 1, .next_free = i + 2 };
            t[n - 1].next_free = 0;
            slots = t;
            free_head = nslots + 1;
            nslots = n;
        }
        uint32_t i = free_head - 1;
        free_head = slots[i].next_free;
        slots[i].req = q;
        q->wire_slot = i + 1;
    }
    return (uint64_t)slots[q->wire_slot - 1].gen << 32 | q->wire_slot;
}

p2p_req_t *p2p_reqid_find(uint64_t id)
{
    uint32_t s = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (s == 0 || s > nslots || slots[s - 1].gen != gen)
        return NULL;
    return slots[s - 1].req;
}

void p2p_reqid_retire(p2p_req_t *q)
{
    reqid_slot_t *e = &slots[q->wire_slot - 1];
    e->req = NULL;
    e->gen++;
    if (e->gen == 0) /* a generation of 0 would let id 0's high half match */
        e->gen = 1;
    e->next_free = free_head;
    free_head = q->wire_slot;
    q->wire_slot = 0;
}
