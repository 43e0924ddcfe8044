/* Unit test of the point-to-point intake against malformed and stale
 * envelopes (src/pt2pt/p2p_wire.h): replies naming request ids that were
 * never issued or whose request has completed are rejected without
 * touching any request; a reply that names a running request but has a
 * malformed body fails that request with MPI_ERR_INTERN; a sequenced
 * envelope whose body does not match its kind fails the receive it
 * matches and lets the next envelope of its sender through; envelopes too
 * short, of no known kind or for ranks that are not here are dropped.
 * One process of a two-process job (ranks 0 and 1 here, 2 and 3 away); no
 * transport is started: nothing here sends. */
#include "pt2pt/p2p.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

/* An envelope as the intake hands it over: in an envelope buffer. */
static void arrive(const p2p_wire_hdr_t *h, const void *body, size_t body_len)
{
    size_t len = sizeof *h + body_len;
    uint8_t *w = p2p_env_alloc(len <= p2p_env_max() ? p2p_env_max() : len);
    memcpy(w, h, sizeof *h);
    if (body_len)
        memcpy(w + sizeof *h, body, body_len);
    p2p_env_arrived(w, len);
}

/* Only the first bytes of a header: shorter than any envelope. */
static void arrive_short(const p2p_wire_hdr_t *h, size_t len)
{
    uint8_t *w = p2p_env_alloc(p2p_env_max());
    memcpy(w, h, len);
    p2p_env_arrived(w, len);
}

static p2p_req_t *post_recv(p2p_rank_t *r, void *buf, size_t bytes, int src, int tag)
{
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_RECV);
    q->buf = buf;
    q->bytes = bytes;
    q->count = (int)bytes;
    q->peer = src;
    q->tag = tag;
    q->ctx = 0;
    p2p_recv_start(q);
    return q;
}

static p2p_req_t *running_send(p2p_rank_t *r, int parts)
{
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_SEND);
    q->active = true;
    q->pending = parts;
    q->bytes = 4096;
    return q;
}

static p2p_wire_hdr_t eager(int src_world, int dst_world, uint32_t seq, int tag, uint64_t size)
{
    return (p2p_wire_hdr_t){ .kind = P2P_WIRE_EAGER, .ctx = 0, .src = src_world, .tag = tag,
                             .src_world = src_world, .dst_world = dst_world, .seq = seq, .size = size };
}

int main(void)
{
    unit_check_watchdog(60, "test_wire");
    p2p_proc_init(4, 2, 0);
    CHECK(core_proc.first == 0 && core_proc.nlocal == 2, "first %d nlocal %d", core_proc.first, core_proc.nlocal);
    p2p_rank_t *r0 = p2p_local(0);

    /* replies naming ids never issued */
    p2p_wire_hdr_t ack = { .kind = P2P_WIRE_ACK, .dst_world = 0, .sreq = 0 };
    arrive(&ack, NULL, 0);
    ack.sreq = (uint64_t)1 << 32 | 7;
    arrive(&ack, NULL, 0);
    ack.sreq = (uint64_t)(uintptr_t)r0; /* an address, as the wire once carried */
    arrive(&ack, NULL, 0);

    /* an ACK for a running send finishes one part; once the send has
     * completed its id is stale, and so is it when the slot is reused */
    p2p_req_t *s = running_send(r0, 2);
    uint64_t id = p2p_reqid_issue(s);
    CHECK(id != 0 && p2p_reqid_find(id) == s);
    CHECK(p2p_reqid_issue(s) == id, "an id per request, not per call");
    ack.sreq = id;
    arrive(&ack, NULL, 0);
    CHECK(s->pending == 1, "pending %d", s->pending);
    p2p_req_part_done(s);
    CHECK(s->complete && s->status.MPI_ERROR == MPI_SUCCESS);
    CHECK(p2p_reqid_find(id) == NULL, "a completed request's id is dead");
    arrive(&ack, NULL, 0); /* late or repeated: rejected, s untouched */
    CHECK(s->pending == 0 && s->status.MPI_ERROR == MPI_SUCCESS);
    p2p_req_release(s);
    p2p_req_t *s2 = running_send(r0, 1);
    uint64_t id2 = p2p_reqid_issue(s2);
    CHECK((uint32_t)id2 == (uint32_t)id && id2 != id, "the slot is reused under a new generation");
    CHECK(p2p_reqid_find(id) == NULL && p2p_reqid_find(id2) == s2);
    arrive(&ack, NULL, 0); /* the stale id must not reach s2 */
    CHECK(s2->pending == 1 && s2->status.MPI_ERROR == MPI_SUCCESS);

    /* CTS and CMA PUT: stale ids rejected; a running request named with a
     * malformed body fails with MPI_ERR_INTERN */
    p2p_wire_hdr_t cts = { .kind = P2P_WIRE_CTS, .src_world = 2, .dst_world = 0, .sreq = id, .size = 8 };
    arrive(&cts, NULL, 0);
    CHECK(s2->pending == 1 && s2->status.MPI_ERROR == MPI_SUCCESS);
    cts.sreq = id2;
    arrive(&cts, NULL, 0); /* no descriptor */
    CHECK(s2->complete && s2->status.MPI_ERROR == MPI_ERR_INTERN, "error %d", s2->status.MPI_ERROR);
    CHECK(p2p_reqid_find(id2) == NULL);
    p2p_req_release(s2);
    p2p_req_t *s3 = running_send(r0, 2);
    struct { uint64_t addr, off; int32_t pid; uint32_t unused; } put = { 0, 4000, 1, 0 };
    p2p_wire_hdr_t ph = { .kind = P2P_WIRE_CMA_PUT, .src_world = 2, .dst_world = 0,
                          .sreq = p2p_reqid_issue(s3), .size = 1000 };
    arrive(&ph, &put, sizeof put); /* bytes 4000..5000 of a 4096-byte send */
    CHECK(s3->pending == 1 && s3->status.MPI_ERROR == MPI_ERR_INTERN, "pending %d error %d", s3->pending,
          s3->status.MPI_ERROR);
    p2p_req_part_done(s3);
    p2p_req_release(s3);

    /* envelopes that name nothing usable are dropped */
    p2p_wire_hdr_t e = eager(2, 0, 0, 5, 4);
    arrive_short(&e, 12);
    p2p_wire_hdr_t odd = e;
    odd.kind = 42;
    arrive(&odd, "abcd", 4);
    odd = e;
    odd.dst_world = 3; /* a rank of the other process */
    arrive(&odd, "abcd", 4);
    odd = e;
    odd.dst_world = -7;
    arrive(&odd, "abcd", 4);
    odd = e;
    odd.src_world = 99;
    arrive(&odd, "abcd", 4);
    CHECK(r0->unexpected.count == 0 && util_dlist_empty(&r0->stash), "dropped, not queued");

    /* a sequenced envelope whose body does not match its kind fails the
     * receive it matches; its sender's next envelope still gets through */
    char b1[64] = { 0 }, b2[64] = { 0 }, b3[64] = { 0 };
    p2p_req_t *r1 = post_recv(r0, b1, sizeof b1, 2, 5);
    p2p_req_t *r2 = post_recv(r0, b2, sizeof b2, 2, 5);
    p2p_req_t *r3 = post_recv(r0, b3, sizeof b3, 2, 5);
    e = eager(2, 0, 0, 5, 100); /* announces 100 bytes, carries 4 */
    arrive(&e, "abcd", 4);
    CHECK(r1->complete && r1->status.MPI_ERROR == MPI_ERR_INTERN, "error %d", r1->status.MPI_ERROR);
    p2p_wire_hdr_t ipc = eager(2, 0, 1, 5, 16);
    ipc.kind = P2P_WIRE_IPC; /* a descriptor of 4 bytes instead of P2P_IPC_DESC_SIZE */
    arrive(&ipc, "abcd", 4);
    CHECK(r2->complete && r2->status.MPI_ERROR == MPI_ERR_INTERN, "error %d", r2->status.MPI_ERROR);
    e = eager(2, 0, 2, 5, 4);
    arrive(&e, "wxyz", 4);
    CHECK(r3->complete && r3->status.MPI_ERROR == MPI_SUCCESS && memcmp(b3, "wxyz", 4) == 0 &&
              r3->status.ampi_count == 4,
          "error %d count %lld", r3->status.MPI_ERROR, r3->status.ampi_count);
    p2p_req_release(r1);
    p2p_req_release(r2);
    p2p_req_release(r3);

    /* an unexpected malformed envelope waits like any other, then fails
     * the receive that takes it */
    e = eager(3, 1, 0, 9, 50);
    arrive(&e, "ab", 2);
    p2p_rank_t *r1k = p2p_local(1);
    CHECK(r1k->unexpected.count == 1);
    char b4[8];
    p2p_req_t *r4 = post_recv(r1k, b4, sizeof b4, 3, 9);
    CHECK(r4->complete && r4->status.MPI_ERROR == MPI_ERR_INTERN, "error %d", r4->status.MPI_ERROR);
    p2p_req_release(r4);

    for (int i = 0; i < core_proc.nlocal; i++)
        p2p_rank_fini(&p2p_proc.ranks[i]);
    p2p_env_pool_drain();
    return unit_check_summary("test_wire");
}
