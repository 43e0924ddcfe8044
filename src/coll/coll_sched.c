/* The schedule engine of coll_sched.h: matching of schedule messages,
 * stepping, and completion of the user's request.
 *
 * A message names its collective by (communicator context, sequence
 * number), its receiver by world rank and its exchange by the sender's rank
 * and the algorithm's tag; a receive posted for it, or the message waiting
 * for that receive, sits in one hash table under that key (the worker's
 * lock guards it).  Eager data that comes first is copied; rendezvous data
 * stays with UCX until the receive names its buffer. */
#include "coll/coll_sched_impl.h"
#include "core/core_settings.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "pt2pt/p2p.h"
#include "ucx/ucx_async.h"
#include "ucx/ucx_side.h"
#include "util/util_log.h"

typedef sched_wire_t wire_t;

typedef struct entry {
    struct entry *next;
    wire_t key;
    sched_t *s; /* a posted receive: its schedule and buffer */
    void *buf;
    size_t len;
    void *data; /* a message that came first: eager copy, or */
    void *desc; /* rendezvous descriptor, or */
    bool cma;   /* key is its SCHED_CMA header */
} entry_t;

#define NBUCKETS 4096
static entry_t *table[NBUCKETS];
static _Atomic(sched_t *) done_list;
static bool started;
/* Schedules of this process started and not completed (the ranks' thread
 * alone counts them): while there are none its polls leave the worker to the
 * progress thread, so point-to-point pays a load per poll, not a UCX poll. */
static int active;

static unsigned bucket(const wire_t *k)
{
    uint32_t h = k->ctx * 2654435761u ^ k->seq * 40503u ^ (uint32_t)k->src * 9176u ^ (uint32_t)k->dst_world * 31u ^
                 (uint32_t)k->tag;
    return (h ^ (h >> 13)) & (NBUCKETS - 1);
}

/* Removes and returns the entry of key k whose kind is `posted`, or NULL. */
static entry_t *take(const wire_t *k, bool posted)
{
    for (entry_t **pp = &table[bucket(k)]; *pp; pp = &(*pp)->next) {
        entry_t *e = *pp;
        if (sched_wire_same(&e->key, k) && (e->s != NULL) == posted) {
            *pp = e->next;
            return e;
        }
    }
    return NULL;
}

static void put(entry_t *e)
{
    unsigned b = bucket(&e->key);
    e->next = table[b];
    table[b] = e;
}

static void run(sched_t *s);

static void finish(sched_t *s)
{
    sched_t *head = atomic_load(&done_list);
    do
        s->next_done = head;
    while (!atomic_compare_exchange_weak(&done_list, &head, s));
}

void sched_op_done(sched_t *s)
{
    if (--s->pending == 0) {
        s->step++;
        run(s);
    }
}

static void op_cb(void *arg, int status)
{
    sched_t *s = arg;
    if (status && !s->err)
        s->err = MPI_ERR_OTHER;
    sched_op_done(s);
}

static _Atomic unsigned long tally[SCHED_TALLY_KINDS][2]; /* [kind][on the progress thread] */

void sched_tally(int kind, unsigned long n)
{
    if (UTIL_UNLIKELY(util_debug_enabled))
        atomic_fetch_add_explicit(&tally[kind][ucx_async_on_thread()], n, memory_order_relaxed);
}

uint64_t sched_tally_clock(void) { return UTIL_UNLIKELY(util_debug_enabled) ? ucx_side_now() : 0; }

void coll_sched_tally_report(void)
{
    if (!util_debug_enabled || !started)
        return;
    static const char *const what[SCHED_TALLY_KINDS] = { "steps", "CMA bytes", "ns in CMA copies",
                                                         "own-block bytes copied" };
    for (int k = 0; k < SCHED_TALLY_KINDS; k++)
        util_debug("nonblocking collectives' schedules, %s: ranks' thread %lu, progress thread %lu", what[k],
                   atomic_load(&tally[k][0]), atomic_load(&tally[k][1]));
    ucx_async_report();
}

/* Runs steps until one has operations in flight, or the last is over. */
static void run(sched_t *s)
{
    for (;;) {
        sched_tally(SCHED_TALLY_STEPS, 1);
        s->pending = 1; /* an operation that completes while the step posts cannot end it early */
        if (s->step_fn(s)) {
            s->pending = 0;
            finish(s);
            return;
        }
        if (--s->pending > 0)
            return;
        s->step++;
    }
}

/* The data of a message for a receive of s into buf[len]: eager (data) or
 * rendezvous (desc). */
static void deliver(sched_t *s, void *buf, size_t len, const void *data, void *desc, size_t dlen)
{
    if (dlen > len && !s->err)
        s->err = MPI_ERR_TRUNCATE;
    if (!desc) {
        if (dlen && len)
            memcpy(buf, data, dlen < len ? dlen : len);
        return;
    }
    if (dlen > len) {
        ucx_async_drop(desc);
        return;
    }
    s->pending++;
    if (ucx_async_recv_data(desc, buf, dlen, op_cb, s) == 0)
        s->pending--;
}

void sched_send(sched_t *s, int peer, const void *buf, size_t len, int tag)
{
    int world = core_comm_world_rank(s->c, peer);
    wire_t h = { .ctx = s->ctx, .seq = s->seq, .src = s->me, .dst_world = world, .tag = tag, .kind = SCHED_DATA };
    if (sched_cma_send(s, p2p_proc_of(world), &h, buf, len))
        return;
    s->pending++;
    if (ucx_async_send(p2p_proc_of(world), &h, sizeof h, buf, len, op_cb, s) == 0)
        s->pending--;
}

void sched_recv(sched_t *s, int peer, void *buf, size_t len, int tag)
{
    wire_t k = { .ctx = s->ctx, .seq = s->seq, .src = peer, .dst_world = s->world, .tag = tag };
    entry_t *e = take(&k, false);
    if (e) {
        if (e->cma)
            sched_cma_deliver(s, &e->key, buf, len);
        else
            deliver(s, buf, len, e->data, e->desc, e->len);
        free(e->data);
        free(e);
        return;
    }
    e = malloc(sizeof *e);
    if (!e)
        util_fatal("out of memory for a nonblocking collective");
    *e = (entry_t){ .key = k, .s = s, .buf = buf, .len = len };
    put(e);
    s->pending++;
}

bool coll_sched_arrived(const void *hdr, size_t hlen, const void *data, void *desc, size_t len)
{
    if (hlen != sizeof(wire_t))
        util_fatal("nonblocking collective message with a header of %zu bytes", hlen);
    wire_t k;
    memcpy(&k, hdr, sizeof k);
    if (k.kind != SCHED_DATA && k.kind != SCHED_CMA) {
        sched_cma_control(&k);
        return false;
    }
    bool cma = k.kind == SCHED_CMA;
    entry_t *e = take(&k, true);
    if (e) {
        sched_t *s = e->s;
        if (cma)
            sched_cma_deliver(s, &k, e->buf, e->len);
        else
            deliver(s, e->buf, e->len, data, desc, len);
        free(e);
        sched_op_done(s); /* the posted receive; a rendezvous or CMA exchange added its own operations */
        return false;
    }
    e = malloc(sizeof *e);
    if (!e)
        util_fatal("out of memory for a nonblocking collective");
    *e = (entry_t){ .key = k, .len = len, .desc = desc, .cma = cma };
    if (!desc && !cma) {
        e->data = malloc(len ? len : 1);
        if (!e->data)
            util_fatal("out of memory for a nonblocking collective");
        if (len)
            memcpy(e->data, data, len);
    }
    put(e);
    return desc != NULL;
}

/* A step's copy of local data, in pieces (sched_copy). */
typedef struct copy {
    struct copy *next;
    sched_t *s;
    void *dst;
    const void *src;
    size_t len;
} copy_t;

/* A step's own block (the root's in Igather(v) and Iscatter(v), every
 * member's in Ialltoall(v) and Iallgather(v)) is copied by whichever thread
 * polls next, not in the call: while the ranks compute, the progress thread
 * on its own CPU.  MPI_Iscatter + MPI_Wait of 4 MiB a block between 2
 * processes on the 2 x H200 host spent 198-223 us of its 400-460 in the
 * root's call, copying its own block, so that IMB-NBC's overlap stayed
 * below 52 %.  Where the progress thread shares the ranks' core (no
 * AMPI_PROGRESS_CPU) the ranks' thread mostly makes the copy in its wait,
 * after its poll has started the reads: on the 2-vCPU machine IMB-NBC's
 * overlap at 1-4 MiB rose 1.3-9x in 31 of 33 cells against the copy in
 * the call (Igather 1 MiB 30.9 against 3.4 %, Iscatterv 30.0 against 7.3;
 * the other two, Igather(v) 4 MiB, had rounds split between 0 and 49 %),
 * t_pure 0.85-1.12x (2 x 7 rounds, BENCHMARKS.md).  Before the progress
 * thread kept off the worker while the ranks wait, deferring there took
 * t_pure to 1.03-1.26x at Ialltoall 128 KiB-2 MiB.  Copies shorter than a
 * piece stay in the call: handing one over costs 4-5 us, more than the
 * copy (MPI_Igather + MPI_Wait of 64 KiB blocks, 2 processes, 2 x H200
 * host: 11.7-13.7 us deferred against 7.6-9.3 in the call, Iscatter
 * 14.0-14.8 against 9.2-10.5; IMB-NBC overlap 79-83 % against 42-55 %).
 * Where between 64 KiB and 4 MiB deferring starts to pay is not measured; a
 * piece takes about 13 us to copy there.  A piece is small enough that the
 * ranks' thread and the progress thread share a large copy. */
#define COPY_PIECE (256 * 1024)

static copy_t *copies, **copies_tail = &copies; /* FIFO, under the worker's lock */
static _Atomic int copies_queued;

void sched_copy(sched_t *s, void *dst, const void *src, size_t len)
{
    if (len < COPY_PIECE) { /* see above */
        memcpy(dst, src, len);
        sched_tally(SCHED_TALLY_COPY_BYTES, len);
        return;
    }
    for (size_t off = 0; off < len; off += COPY_PIECE) {
        copy_t *c = malloc(sizeof *c);
        if (!c)
            util_fatal("out of memory for a nonblocking collective");
        *c = (copy_t){ .s = s, .dst = (char *)dst + off, .src = (const char *)src + off,
                       .len = len - off < COPY_PIECE ? len - off : COPY_PIECE };
        *copies_tail = c;
        copies_tail = &c->next;
        s->pending++;
        atomic_fetch_add(&copies_queued, 1);
    }
}

/* One queued piece, copied without the worker's lock (so that the other
 * thread may progress the worker meanwhile); 1 when one was copied. */
static int copy_one(void)
{
    if (atomic_load_explicit(&copies_queued, memory_order_relaxed) == 0 || !ucx_async_trylock())
        return 0;
    copy_t *c = copies;
    if (c) {
        copies = c->next;
        if (!copies)
            copies_tail = &copies;
        atomic_fetch_sub(&copies_queued, 1);
    }
    ucx_async_unlock();
    if (!c)
        return 0;
    memcpy(c->dst, c->src, c->len);
    sched_tally(SCHED_TALLY_COPY_BYTES, c->len);
    ucx_async_lock();
    sched_op_done(c->s);
    ucx_async_unlock();
    free(c);
    return 1;
}

/* The ranks' thread: progress the worker and complete finished requests. */
static int hook(void)
{
    if (active == 0)
        return 0;
    int n = ucx_async_poll() + copy_one();
    sched_t *l = atomic_exchange(&done_list, NULL), *rev = NULL;
    while (l) {
        sched_t *next = l->next_done;
        l->next_done = rev;
        rev = l;
        l = next;
    }
    for (; rev; n++) {
        sched_t *s = rev;
        rev = s->next_done;
        sched_unstage(s);
        free(s->scratch);
        if (s->err)
            p2p_req_fail(s->q, s->err);
        p2p_req_part_done(s->q);
        free(s);
        active--;
        ucx_async_busy(active);
    }
    return n;
}

size_t coll_sched_min(void)
{
    static size_t min = SIZE_MAX; /* unread; every thread reads the same value */
    if (min == SIZE_MAX)
        min = core_setting_size(CORE_SET_NBC_PROGRESS_MIN);
    return min;
}

size_t coll_sched_bcast_weight(size_t bytes)
{
    return bytes <= SIZE_MAX / 2 && ucx_async_job_has_cpu() ? 2 * bytes : bytes;
}

bool coll_sched_wanted(const core_comm_t *c, size_t bytes)
{
    if (bytes < coll_sched_min() || !ucx_async_up() || c->remote || coll_nb_capturing())
        return false;
    /* ranks of one process keep the helper threads' direct copies */
    if (!c->members) /* world ranks 0 .. size-1 */
        return core_proc.first != 0 || c->size > core_proc.nlocal;
    for (int i = c->size; i-- > 0;) /* ranks fill processes in blocks: the last is the likeliest elsewhere */
        if (!core_is_local(c->members[i]))
            return true;
    return false;
}

sched_t *sched_new(p2p_rank_t *r, core_comm_t *c, sched_step_fn *fn, MPI_Request *request, int *err)
{
    return sched_new_seq(r, c, fn, request, err, NULL);
}

sched_t *sched_new_seq(p2p_rank_t *r, core_comm_t *c, sched_step_fn *fn, MPI_Request *request, int *err,
                       const uint32_t *seq)
{
    *err = MPI_SUCCESS;
    if (!request) {
        *err = MPI_ERR_REQUEST;
        return NULL;
    }
    sched_t *s = calloc(1, sizeof *s);
    if (!s) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_SEND);
    q->comm = c->handle;
    q->c = c;
    q->active = true;
    q->complete = false;
    q->pending = 1;
    q->status.MPI_ERROR = MPI_SUCCESS;
    if (!c->predefined) /* the user may free the communicator meanwhile */
        core_comm_retain(c);
    *s = (sched_t){ .step_fn = fn, .q = q, .c = c, .me = c->rank, .n = c->size, .world = r->core.world,
                    .ctx = c->ctx, .seq = seq ? *seq : coll_nb_next_seq(r, c), .red_peer = -1 };
    *request = q;
    return s;
}

void sched_start(sched_t *s)
{
    if (!started) {
        started = true;
        p2p_add_progress_hook(hook);
        ucx_async_set_work(copy_one);
        ucx_async_watch(&p2p_proc.pe.waiting);
        ucx_async_thread_start();
    }
    /* marked inside at both ends: the progress thread's next look then
     * stands aside, not taking the worker in the moment between this start
     * and the wait that commonly follows (ucx_side.h) */
    ucx_async_inside();
    active++;
    ucx_async_busy(active);
    ucx_async_lock();
    run(s);
    ucx_async_unlock();
    ucx_async_inside();
}
