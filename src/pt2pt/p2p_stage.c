/* Host staging of device payloads, pipelined: the route when nothing can move
 * device memory between the two processes (a UCX without CUDA support, and no
 * CUDA IPC: another node, or AMPI_GPU_IPC=0).
 *
 * The payload travels in chunks of AMPI_GPU_STAGE_CHUNK bytes (default
 * 1 MiB) through pinned bounce buffers, each chunk under its own UCX tag (the
 * envelope's payload tag, then consecutive counters), with up to STAGE_DEPTH
 * chunks in flight at each side:
 *
 *   sender:   D2H copy chunk i -> send chunk i -> (slot free) D2H chunk i+DEPTH
 *   receiver: receive chunk i -> H2D copy chunk i -> (slot free) receive i+DEPTH
 *
 * so the device->host copy of one chunk overlaps the network transfer of
 * another and the host->device copy at the receiver.  A receive buffer that
 * is too short keeps what fits; the rest of the chunks are received and
 * dropped (nothing past the user's buffer is written). */
#include "pt2pt/p2p.h"
#include "gpu/gpu.h"
#include "ucx/ucx_tag.h"
#include "core/core_settings.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

#define STAGE_DEPTH 4

typedef struct stage stage_t;
typedef struct {
    ucx_op_t op;
    stage_t *st;
    void *bounce;
    size_t index; /* the chunk this slot carries now */
} stage_slot_t;

struct stage {
    p2p_req_t *q;
    char *user;       /* sender: its device buffer; receiver: the receive buffer */
    bool user_dev;    /* receiver: that buffer is device memory */
    size_t size;      /* payload bytes on the wire */
    size_t keep;      /* receiver: bytes that fit in the receive buffer */
    size_t chunk, nchunks, next, done;
    uint64_t base_tag;
    int proc;         /* sender: the receiver's process */
    int nslots;
    bool own_bounces; /* the sender's chunk size is not ours: malloc'ed for this message */
    stage_slot_t slot[STAGE_DEPTH];
};

/* Bounce buffers of the chunk size, kept for the next message: pinned
 * where the driver allows it (true asynchronous copies), else malloc'ed. */
static void *pool[2 * STAGE_DEPTH];
static int npool;
static int bounce_kind; /* 0 not yet known, 1 pinned, 2 malloc */

size_t p2p_stage_chunk(void)
{
    static size_t chunk;
    if (!chunk)
        chunk = core_setting_size(CORE_SET_GPU_STAGE_CHUNK); /* 4K..2G */
    return chunk;
}

static void bounce_free(void *p)
{
    if (bounce_kind == 1)
        gpu_host_pinned_free(p);
    else
        free(p);
}

static void *bounce_get(void)
{
    if (npool)
        return pool[--npool];
    void *p = NULL;
    if (bounce_kind != 2) {
        p = gpu_host_pinned_alloc(p2p_stage_chunk());
        if (bounce_kind == 0)
            bounce_kind = p ? 1 : 2;
        else if (!p)
            util_fatal("cannot allocate %zu bytes of pinned staging memory", p2p_stage_chunk());
    }
    if (!p)
        p = malloc(p2p_stage_chunk()); /* slower copies, still right */
    if (!p)
        util_fatal("out of memory for a staging buffer");
    return p;
}

static void bounce_put(void *p)
{
    if (npool < (int)(sizeof pool / sizeof pool[0])) {
        pool[npool++] = p;
        return;
    }
    bounce_free(p);
}

void p2p_stage_drain(void)
{
    while (npool)
        bounce_free(pool[--npool]);
}

static uint64_t chunk_tag(const stage_t *st, size_t i)
{
    uint64_t counter = (ucx_tag_counter(st->base_tag) + i) & UCX_TAG_COUNTER_MASK;
    return (st->base_tag & ~UCX_TAG_COUNTER_MASK) | counter;
}

static size_t chunk_len(const stage_t *st, size_t i)
{
    size_t off = i * st->chunk;
    return st->size - off < st->chunk ? st->size - off : st->chunk;
}

static stage_t *stage_new(p2p_req_t *q, size_t size, size_t chunk)
{
    stage_t *st = calloc(1, sizeof *st);
    if (!st)
        util_fatal("out of memory");
    st->q = q;
    st->size = size;
    st->chunk = chunk;
    st->nchunks = (size + chunk - 1) / chunk;
    st->nslots = st->nchunks < STAGE_DEPTH ? (int)st->nchunks : STAGE_DEPTH;
    st->own_bounces = chunk != p2p_stage_chunk();
    for (int s = 0; s < st->nslots; s++) {
        st->slot[s].st = st;
        st->slot[s].bounce = st->own_bounces ? malloc(chunk) : bounce_get();
        if (!st->slot[s].bounce)
            util_fatal("out of memory for a staging buffer");
    }
    return st;
}

/* A slot finished its chunk: give it the next one, or retire it. */
static void slot_next(stage_slot_t *sl, void (*start)(stage_slot_t *))
{
    stage_t *st = sl->st;
    st->done++;
    if (st->next < st->nchunks) {
        start(sl);
        return;
    }
    if (st->own_bounces)
        free(sl->bounce);
    else
        bounce_put(sl->bounce);
    sl->bounce = NULL;
    if (st->done == st->nchunks) {
        p2p_req_t *q = st->q;
        free(st);
        p2p_req_part_done(q);
    }
}

/* ---- sender ---- */

static void send_start(stage_slot_t *sl);

static void chunk_sent(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    stage_slot_t *sl = UTIL_CONTAINER_OF(op, stage_slot_t, op);
    if (status)
        p2p_req_fail(sl->st->q, MPI_ERR_OTHER);
    slot_next(sl, send_start);
}

static void chunk_staged(void *arg)
{
    stage_slot_t *sl = arg;
    stage_t *st = sl->st;
    sl->op.done = chunk_sent;
    int rc = ucx_send_tagged(st->proc, sl->bounce, chunk_len(st, sl->index), chunk_tag(st, sl->index),
                             UCX_MEM_HOST, &sl->op);
    if (rc != 1)
        chunk_sent(&sl->op, rc < 0 ? -1 : 0, 0);
}

static void send_start(stage_slot_t *sl)
{
    stage_t *st = sl->st;
    sl->index = st->next++;
    p2p_copy_then_call(sl->bounce, st->user + sl->index * st->chunk, chunk_len(st, sl->index), NULL, chunk_staged,
                       sl);
}

void p2p_stage_start(p2p_req_t *q, int proc)
{
    p2p_wire_hdr_t *h = &q->hdr;
    size_t chunk = p2p_stage_chunk();
    stage_t *st = stage_new(q, q->bytes, chunk);
    st->user = q->buf;
    st->proc = proc;
    st->base_tag = ucx_fresh_tag(UCX_TAG_PAYLOAD);
    for (size_t i = 1; i < st->nchunks; i++)
        (void)ucx_fresh_tag(UCX_TAG_PAYLOAD); /* reserve the chunks' counters */
    h->kind = P2P_WIRE_RNDV;
    h->flags |= P2P_WIRE_STAGED;
    h->payload_tag = st->base_tag;
    h->chunk = (uint32_t)chunk;
    q->pending += 2; /* the envelope, the chunks */
    int rc = p2p_env_send(proc, h, sizeof *h, NULL, 0, &q->op_env);
    if (rc != 1) {
        if (rc < 0)
            p2p_req_fail(q, MPI_ERR_OTHER);
        q->pending--;
    }
    for (int s = 0; s < st->nslots; s++)
        send_start(&st->slot[s]);
}

/* ---- receiver ---- */

static void recv_post(stage_slot_t *sl);

static void chunk_landed(void *arg)
{
    slot_next(arg, recv_post);
}

static void chunk_received(ucx_op_t *op, int status, size_t len)
{
    (void)len;
    stage_slot_t *sl = UTIL_CONTAINER_OF(op, stage_slot_t, op);
    stage_t *st = sl->st;
    if (status)
        p2p_req_fail(st->q, MPI_ERR_OTHER);
    size_t off = sl->index * st->chunk;
    size_t n = off >= st->keep ? 0 : (st->keep - off < st->chunk ? st->keep - off : st->chunk);
    if (n && st->user_dev) {
        p2p_copy_then_call(st->user + off, sl->bounce, n, NULL, chunk_landed, sl);
        return;
    }
    if (n)
        memcpy(st->user + off, sl->bounce, n);
    chunk_landed(sl);
}

static void recv_post(stage_slot_t *sl)
{
    stage_t *st = sl->st;
    sl->index = st->next++;
    sl->op.done = chunk_received;
    int rc = ucx_recv_tagged(sl->bounce, chunk_len(st, sl->index), chunk_tag(st, sl->index), UCX_MEM_HOST, &sl->op);
    if (rc != 1)
        chunk_received(&sl->op, rc < 0 ? -1 : 0, 0);
}

void p2p_stage_recv(p2p_req_t *q, const p2p_msg_t *msg, size_t keep)
{
    if (msg->stage_chunk < 4096)
        util_fatal("staged envelope with a chunk of %u bytes", msg->stage_chunk);
    stage_t *st = stage_new(q, msg->size, msg->stage_chunk);
    st->user = q->buf;
    st->user_dev = q->dev;
    st->keep = keep;
    st->base_tag = msg->payload_tag;
    for (int s = 0; s < st->nslots; s++)
        recv_post(&st->slot[s]);
}

/* Up to the eager limit, one synchronous copy to host memory, then the
 * EAGER route (the DEVICE flag says where the data lives). */
void p2p_stage_eager_start(p2p_req_t *q, int proc)
{
    q->tmp = malloc(q->bytes);
    if (!q->tmp)
        util_fatal("out of memory for a staging buffer of %zu bytes", q->bytes);
    p2p_copy_sync(q->tmp, q->buf, q->bytes);
    p2p_eager_start(q, proc, q->tmp);
}
