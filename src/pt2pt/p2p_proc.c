/* Process and rank state of the point-to-point layer, and the PE's progress. */
#include "pt2pt/p2p.h"
#include "rank/rank_place.h"
#include "ucx/ucx_pmix.h"
#include "util/util_copy.h"
#include "core/core_settings.h"
#include "util/util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An eager envelope of the default limit (full header + data) fits one
 * shared-memory ring entry: eager messages between processes of a node then
 * never take UCX's active messages (shm_ring.h).  Keep the settings table's
 * default of AMPI_EAGER_LIMIT (core_settings.c) equal to it. */
#define P2P_EAGER_LIMIT_DEFAULT 8192
_Static_assert(sizeof(p2p_wire_hdr_t) + P2P_EAGER_LIMIT_DEFAULT <= SHM_ENTRY_MAX,
               "an eager envelope fits a ring entry");

p2p_proc_t p2p_proc;

/* Every remote send asks which process holds its destination; a table
 * answers without rank_place_proc's two integer divisions (jobs of up to
 * PROC_OF_TABLE_MAX ranks; beyond that the table would cost more memory
 * than it saves time). */
#define PROC_OF_TABLE_MAX (1 << 20)
int *p2p_proc_of_table; /* read in line by p2p_proc_of (p2p.h) */

int p2p_proc_of_computed(int world) { return rank_place_proc(core_proc.nranks, core_proc.nprocs, world); }

static void proc_of_table_init(void)
{
    free(p2p_proc_of_table);
    p2p_proc_of_table = NULL;
    if (core_proc.nprocs < 2 || core_proc.nranks > PROC_OF_TABLE_MAX)
        return;
    int *t = malloc((size_t)core_proc.nranks * sizeof *t);
    if (!t)
        return; /* computed on each call instead */
    for (int w = 0; w < core_proc.nranks; w++)
        t[w] = rank_place_proc(core_proc.nranks, core_proc.nprocs, w);
    p2p_proc_of_table = t;
}

/* ---- envelope intake (runs inside UCX's AM callback, see ucx.h) ----
 * An eager envelope without flags whose receive is already posted goes
 * straight from UCX's receive buffer into the user's buffer: no envelope
 * buffer, no second copy, no queueing, and the receiver sees it complete
 * within the same progress call.  Nothing here may call UCX (a SYNC send's
 * ACK would): every other envelope is copied into a buffer for
 * p2p_env_arrived, which runs after ucp_worker_progress has returned. */

/* What matching needs of an eager envelope, from either wire format. */
typedef struct env_key {
    uint32_t ctx, seq;
    int src, tag, src_world, dst_world;
} env_key_t;

/* inlined into both callers: the key then lives in registers */
static inline __attribute__((always_inline)) bool deliver_now(const env_key_t *k, const void *payload, size_t size)
{
    /* one branch for both ranks: a bad one goes to p2p_env_arrived, which
     * rejects it (recv_seq is indexed by the sender's) */
    if (UTIL_UNLIKELY(!p2p_is_local(k->dst_world) | ((unsigned)k->src_world >= (unsigned)core_proc.nranks)))
        return false;
    p2p_rank_t *r = p2p_local(k->dst_world);
    /* an earlier envelope from the same sender still has to enter first */
    if (k->seq != *p2p_seq(&r->recv_seq, k->src_world) || UTIL_UNLIKELY(!util_dlist_empty(&r->stash)))
        return false;
    p2p_mentry_t *e = p2p_posted_find(&r->posted, k->ctx, k->src, k->tag);
    if (!e)
        return false;
    p2p_req_t *q = UTIL_CONTAINER_OF(e, p2p_req_t, m);
    /* device copies are p2p_deliver's business */
    if (UTIL_UNLIKELY(q->dev))
        return false;
    p2p_posted_take(r, q);
    (*p2p_seq(&r->recv_seq, k->src_world))++;
    size_t n = p2p_fill_status(q, k->src, k->tag, size);
    util_copy_small(q->buf, payload, n);
    p2p_req_part_done(q);
    return true;
}

/* A compact envelope that could not be delivered at once becomes a full
 * P2P_WIRE_EAGER one, so that p2p_env_arrived knows a single format. */
static void *expand_short(const p2p_wire_short_t *s, const void *payload, size_t size, size_t *len)
{
    *len = sizeof(p2p_wire_hdr_t) + size;
    p2p_wire_hdr_t *h = p2p_env_alloc(*len <= p2p_env_max() ? p2p_env_max() : *len);
    *h = (p2p_wire_hdr_t){
        .kind = P2P_WIRE_EAGER,
        .ctx = s->ctx,
        .src = s->src,
        .tag = s->tag,
        .src_world = s->src_world,
        .dst_world = s->dst_world,
        .seq = s->seq,
        .size = size,
    };
    if (size)
        memcpy(h + 1, payload, size);
    return h;
}

/* A field of an envelope that may sit unaligned in UCX's buffer, read on
 * its own: copying the whole envelope to the stack and building the key
 * from that copy made the compiler reload it across two of its stores, a
 * store-forwarding stall that took 6% of a one-byte osu_bw receiver's time
 * (perf). */
#define WIRE_U32(base, type, field) wire_u32((const uint8_t *)(base) + offsetof(type, field))
#define WIRE_U64(base, type, field) wire_u64((const uint8_t *)(base) + offsetof(type, field))
static inline uint32_t wire_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline uint64_t wire_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#define WIRE_KEY(base, type)                                                                                     \
    ((env_key_t){ WIRE_U32(base, type, ctx), WIRE_U32(base, type, seq), (int32_t)WIRE_U32(base, type, src),    \
                  (int32_t)WIRE_U32(base, type, tag), (int32_t)WIRE_U32(base, type, src_world),                 \
                  (int32_t)WIRE_U32(base, type, dst_world) })

static void *env_intake(const void *hdr, size_t hlen, const void *data, size_t dlen, bool in_order, size_t *len)
{
    const uint8_t *first = hlen ? hdr : data;
    size_t total = hlen + dlen;
    if (total >= sizeof(p2p_wire_short_t) && first[0] == P2P_WIRE_EAGER_SHORT && hlen == 0) {
        const uint8_t *payload = (const uint8_t *)data + sizeof(p2p_wire_short_t);
        size_t size = dlen - sizeof(p2p_wire_short_t);
        env_key_t k = WIRE_KEY(data, p2p_wire_short_t);
        if (in_order && deliver_now(&k, payload, size))
            return NULL;
        p2p_wire_short_t s;
        memcpy(&s, data, sizeof s);
        return expand_short(&s, payload, size, len);
    }
    if (total >= sizeof(p2p_wire_hdr_t) && first[0] == P2P_WIRE_EAGER && in_order) {
        const uint8_t *payload = hlen ? data : first + sizeof(p2p_wire_hdr_t);
        uint64_t size = WIRE_U64(first, p2p_wire_hdr_t, size);
        if (first[offsetof(p2p_wire_hdr_t, flags)] == 0 && size == total - sizeof(p2p_wire_hdr_t)) {
            env_key_t k = WIRE_KEY(first, p2p_wire_hdr_t);
            if (deliver_now(&k, payload, size))
                return NULL;
        }
    }
    /* anything else: into an envelope buffer (the pool's size when it fits) */
    *len = total;
    void *buf = p2p_env_alloc(total <= p2p_env_max() ? p2p_env_max() : total);
    if (hlen)
        memcpy(buf, hdr, hlen);
    if (dlen)
        memcpy((char *)buf + hlen, data, dlen);
    return buf;
}

/* An envelope from a shared-memory ring (shm_poll): the same intake as
 * UCX's callback, then at once what ucx_progress does with a queued one.
 * in_order holds: shm_poll runs outside ucx_progress, whose queue is then
 * empty, and each ring envelope is entered before the next is looked at.
 * The poll ends after an envelope that took the last receive a rank had
 * posted: that rank runs and posts its next receive before the envelope
 * behind this one (often written while we took this one) is looked at, so
 * that it lands in the receive instead of the unexpected queue.  A barrier
 * followed by a ping-pong (osu_multi_lat) takes 0.28 us a leg this way
 * against 0.40 where the ping becomes unexpected (2-core machine, 343bb73). */
static bool shm_envelope(const void *env, size_t len)
{
    size_t wire_len;
    p2p_proc.rank_fed = false;
    void *wire = env_intake(NULL, 0, env, len, true, &wire_len);
    if (wire)
        p2p_env_arrived(wire, wire_len);
    return p2p_proc.rank_fed;
}

void p2p_proc_init(int nranks, int nprocs, int proc)
{
    ucx_set_env_intake(env_intake);
    core_proc.nranks = nranks;
    core_proc.nprocs = nprocs;
    core_proc.proc = proc;
    core_proc.first = rank_place_first(nranks, nprocs, proc);
    core_proc.nlocal = rank_place_count(nranks, nprocs, proc);
    p2p_proc.eager_limit = core_setting_size(CORE_SET_EAGER_LIMIT);
    p2p_proc.idle_yield = !rank_cpu_owned();
    proc_of_table_init();
    util_dlist_init(&p2p_proc.copies);
    p2p_proc.ranks = calloc((size_t)core_proc.nlocal, sizeof *p2p_proc.ranks);
    if (!p2p_proc.ranks)
        util_fatal("out of memory for %d ranks", core_proc.nlocal);
    for (int i = 0; i < core_proc.nlocal; i++)
        p2p_rank_init(&p2p_proc.ranks[i], core_proc.first + i);
}

void p2p_rank_init(p2p_rank_t *r, int world)
{
    memset(r, 0, sizeof *r);
    r->core.world = world;
    p2p_queue_init(&r->posted);
    p2p_queue_init(&r->unexpected);
    util_dlist_init(&r->stash);
    if (core_proc.nprocs > 1) {
        bool dense = (size_t)core_proc.nlocal * (size_t)core_proc.nranks <= P2P_SEQ_DENSE_MAX;
        if (p2p_seq_init(&r->send_seq, core_proc.nranks, dense) != 0 ||
            p2p_seq_init(&r->recv_seq, core_proc.nranks, dense) != 0)
            util_fatal("out of memory");
    }
}

void p2p_rank_fini(p2p_rank_t *r)
{
    while (r->free_reqs) {
        p2p_req_t *q = r->free_reqs;
        r->free_reqs = q->next_free;
        free(q);
    }
    /* messages nobody received: drop them (MPI leaves this erroneous) */
    util_dlink_t *it;
    while ((it = util_dlist_first(&r->unexpected.order))) {
        p2p_msg_t *m = UTIL_CONTAINER_OF(it, p2p_msg_t, m.order);
        p2p_unexp_remove(&r->unexpected, &m->m);
        p2p_msg_free(m);
    }
    p2p_seq_fini(&r->send_seq);
    p2p_seq_fini(&r->recv_seq);
}

/* With a single process nothing outside can wake a rank: when every rank is
 * blocked and none is ready, the job can never continue.  Say so instead of
 * spinning forever. */
static void check_deadlock(void)
{
    rank_pe_t *pe = &p2p_proc.pe;
    if (pe->current || !util_dlist_empty(&pe->ready) || pe->nlive == 0)
        return;
    char msg[256];
    int blocked = 0;
    for (int i = 0; i < core_proc.nlocal; i++)
        blocked += p2p_proc.ranks[i].core.ult && p2p_proc.ranks[i].core.ult->state == RANK_ULT_BLOCKED;
    snprintf(msg, sizeof msg, "deadlock: all %d live ranks are blocked in MPI calls that no rank can satisfy",
             blocked);
    ucx_pmix_abort(1, msg);
}

int (*p2p_progress_hook)(void);

int p2p_progress(void *unused)
{
    (void)unused;
    /* the rings first (an empty poll is a load per ring); when they had
     * news and no UCX operation of ours is under way, the ranks get the
     * news before UCX's poll is paid for, yet UCX still gets every few
     * calls (envelopes too big for the ring, and whatever a full ring sent
     * its way).  A payload under way (rendezvous, staging) needs UCX polled
     * on every call: it moves only while both sides poll, and a ring that
     * keeps delivering envelopes would otherwise hold it back. */
    static unsigned ucx_deferred;
    int n = shm_poll(shm_envelope);
    if (n == 0 || ucx_ops_in_flight || ++ucx_deferred >= 4) {
        ucx_deferred = 0;
        n += ucx_progress();
    }
    if (UTIL_UNLIKELY(p2p_progress_hook != NULL))
        n += p2p_progress_hook();
    if (UTIL_UNLIKELY(p2p_proc.ncopies))
        n += p2p_copies_progress();
    else if (n == 0 && core_proc.nprocs == 1)
        check_deadlock();
    return n;
}
