/* Schedule messages by cross-memory attach, each side copying half or the
 * receiver all.
 *
 * Between processes of one node, UCX moves a schedule's large message by
 * its rendezvous: the receiver reads it all with one core, where the
 * point-to-point CMA route splits the copy between both processes' cores
 * (p2p_cma.c).  So a message of at least AMPI_CMA_SPLIT bytes to such a
 * peer goes the same way, over the schedule worker's small messages:
 *
 *   sender                                   receiver
 *   CMA {pid, address, bytes}             -> matched with its receive
 *                                         <- CTS {pid, address, first half}
 *   writes the first half                    reads the second half
 *   FIN                                   -> DONE (its half is read)
 *   the send completes on its write and      the receive completes on its read
 *   the DONE                                 and the FIN
 *
 * Ibcast's time with nothing to overlap (IMB-NBC t_pure, 2 processes, 2-vCPU
 * machine) fell to 0.40-0.68x from 128 KiB, below Open MPI's at every size
 * (BENCHMARKS.md, 2026-11-27, bde8c32).  An exchange both ways gains
 * nothing: each core copies one message's worth either way, and the split
 * costs a second system call and the CTS/FIN round trip.  So a schedule
 * whose every process sends what it receives (s->whole: Ialltoall(v),
 * Iallgather(v), Iallreduce) marks its CMA messages whole, and their receivers read all
 * of them:
 *
 *   CMA {pid, address, bytes, whole}      -> matched: reads it all
 *   the send completes on the DONE        <- DONE; the receive completes
 *
 * (MPI_Ialltoall + MPI_Wait in a loop, 2 processes, 3 rounds: 64 KiB
 * 11.5-12.5 -> 9.0-9.9 us, 1 MiB 116-122 -> 115-119 us, with the progress
 * thread backing off as ucx_side.h says).  A receive shorter than the
 * message reads and is written nothing and fails with MPI_ERR_TRUNCATE (a
 * split one's CTS asks for no bytes: no FIN).  The exchanges in flight sit
 * in two tables under the message's name (the sender's, waiting for CTS and
 * DONE; the receiver's, waiting for FIN), guarded like everything of the
 * schedules by the worker's lock. */
#include "coll/coll_sched_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pt2pt/p2p.h"
#include "ucx/ucx_async.h"
#include "util/util_log.h"

typedef struct pend {
    struct pend *next;
    sched_wire_t key;
    sched_t *s;
    char *buf;    /* sender: its data; receiver: the receive buffer */
    size_t bytes; /* receiver: the half the sender writes */
    int settle;   /* sender: CTS handled and DONE, both to come */
} pend_t;

static pend_t *sends, *fins;

static pend_t *find(pend_t **list, const sched_wire_t *k, bool remove)
{
    for (pend_t **pp = list; *pp; pp = &(*pp)->next)
        if (sched_wire_same(&(*pp)->key, k)) {
            pend_t *p = *pp;
            if (remove)
                *pp = p->next;
            return p;
        }
    return NULL;
}

static pend_t *pend_new(pend_t **list, const sched_wire_t *k, sched_t *s, void *buf, size_t bytes, int settle)
{
    pend_t *p = malloc(sizeof *p);
    if (!p)
        util_fatal("out of memory for a nonblocking collective");
    *p = (pend_t){ .next = *list, .key = *k, .s = s, .buf = buf, .bytes = bytes, .settle = settle };
    *list = p;
    return p;
}

static void sent(void *arg, int status)
{
    (void)arg;
    if (status)
        util_warn("a control message of a nonblocking collective failed (UCX status %d)", status);
}

static void control(int world, const sched_wire_t *key, uint32_t kind, int32_t pid, uint64_t addr, uint64_t len)
{
    sched_wire_t h = *key;
    h.kind = kind;
    h.pid = pid;
    h.addr = addr;
    h.len = len;
    ucx_async_send(p2p_proc_of(world), &h, sizeof h, NULL, 0, sent, NULL);
}

bool sched_cma_send(sched_t *s, int proc, const sched_wire_t *key, const void *buf, size_t len)
{
    size_t min = p2p_cma_split_min();
    if (min == 0 || len < min || !p2p_cma_peer(proc))
        return false;
    s->pending++;
    pend_new(&sends, key, s, (void *)buf, 0, s->whole ? 1 : 2);
    sched_wire_t h = *key;
    h.whole = s->whole;
    control(key->dst_world, &h, SCHED_CMA, (int32_t)getpid(), (uint64_t)(uintptr_t)buf, len);
    return true;
}

/* A reduction's receive (s->fold) reads the peer's operand in pieces that
 * stay in cache and folds each into the accumulator at once, as the blocking
 * reduction's pull does, instead of copying it whole and reducing it after
 * (predefined ops commute: acc = piece op acc).  Ireduce, 2 processes, 2-vCPU
 * machine: see BENCHMARKS.md (2026-11-27). */
#define FOLD_PIECE (64 * 1024)

/* Reads n bytes at the sender's addr piece by piece and folds each into
 * dst (dst = piece op dst).  operand set (a reduction's first operand while
 * ours is still the user's input, s->in): each piece is read straight into
 * dst and our input, operand, folded into it there, so the input is never
 * copied whole first. */
static void fold_from(sched_t *s, int32_t pid, uint64_t addr, size_t n, int sender, char *dst, const char *operand)
{
    size_t el = s->count ? s->bytes / s->count : 1, piece = FOLD_PIECE / el * el;
    char *tmp = operand ? NULL : malloc(piece ? piece : 1);
    if ((!operand && !tmp) || !piece)
        util_fatal("out of memory for a nonblocking reduction");
    for (size_t off = 0; off < n; off += piece) {
        size_t c = n - off < piece ? n - off : piece;
        char *into = operand ? dst + off : tmp;
        p2p_cma_copy(pid, into, addr + off, c, false, sender);
        s->op.kernel(operand ? operand + off : tmp, dst + off, c / el);
    }
    free(tmp);
    s->folded = true;
}

/* Whether buf is a receive of the partner's operand into acc while ours is
 * still in s->in. */
static bool over_input(const sched_t *s, const void *buf)
{
    const char *b = buf, *acc = s->acc;
    return s->in && s->count && b >= acc && b < acc + s->bytes;
}

void sched_cma_deliver(sched_t *s, const sched_wire_t *h, void *buf, size_t len)
{
    int sender = core_comm_world_rank(s->c, h->src);
    size_t n = (size_t)h->len, half = n / 2;
    if (n > len) {
        if (!s->err)
            s->err = MPI_ERR_TRUNCATE;
        n = half = 0;
    }
    if (h->whole)
        half = 0; /* the sender writes nothing and waits for no CTS */
    else
        control(sender, h, SCHED_CTS, (int32_t)getpid(), (uint64_t)(uintptr_t)buf, half);
    if (half) {
        s->pending++;
        pend_new(&fins, h, s, buf, half, 0);
    }
    sched_tally(SCHED_TALLY_CMA_BYTES, n - half);
    uint64_t t0 = sched_tally_clock();
    if (n > half && h->whole && over_input(s, buf))
        fold_from(s, h->pid, h->addr, n, sender, buf, (const char *)s->in + ((char *)buf - (char *)s->acc));
    else if (n > half && s->fold && h->whole)
        fold_from(s, h->pid, h->addr, n, sender, s->acc, NULL);
    else if (n > half)
        p2p_cma_copy(h->pid, (char *)buf + half, h->addr + half, n - half, false, sender);
    sched_tally(SCHED_TALLY_CMA_NS, sched_tally_clock() - t0);
    control(sender, h, SCHED_DONE, 0, 0, 0);
}

void sched_cma_control(const sched_wire_t *h)
{
    if (h->kind == SCHED_FIN) {
        pend_t *p = find(&fins, h, true);
        if (!p)
            util_fatal("nonblocking collective: a FIN for no receive");
        p2p_cma_written(p->buf, p->bytes);
        sched_t *s = p->s;
        free(p);
        sched_op_done(s);
        return;
    }
    pend_t *p = find(&sends, h, false);
    if (!p || (h->kind != SCHED_CTS && h->kind != SCHED_DONE))
        util_fatal("nonblocking collective: control message %u for no send", (unsigned)h->kind);
    if (h->kind == SCHED_CTS && h->len) {
        sched_tally(SCHED_TALLY_CMA_BYTES, (unsigned long)h->len);
        uint64_t t0 = sched_tally_clock();
        p2p_cma_copy(h->pid, p->buf, h->addr, (size_t)h->len, true, h->dst_world);
        sched_tally(SCHED_TALLY_CMA_NS, sched_tally_clock() - t0);
        control(h->dst_world, h, SCHED_FIN, 0, 0, 0);
    }
    if (--p->settle > 0)
        return;
    find(&sends, h, true);
    sched_t *s = p->s;
    free(p);
    sched_op_done(s);
}
