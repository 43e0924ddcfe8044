/* Nonblocking collectives on helper user-level threads.
 *
 * MPI_Ixxx creates a ULT on the caller's PE that runs the blocking
 * algorithm (coll_nb_fn) and then completes the user's request.  The
 * helper's `user` is the calling rank, so p2p_self() inside it is that rank
 * and its point-to-point steps run as the rank; requests wake the thread
 * that made them, so the helper blocks on its own messages while the rank
 * goes on.  The user's request is a SEND-kind request (empty status) with
 * one pending part, finished by the helper: MPI_Wait/Test work unchanged.
 *
 * Matching: every rank starts the collectives of a communicator in the
 * same order, so a per-(rank, communicator) counter gives each nonblocking
 * collective the same sequence number on every member, and its tags come
 * from that number: outstanding collectives never take each other's
 * messages.  Blocking collectives keep their fixed tags, which lie below
 * every nonblocking tag; one rank runs at most one of them at a time, and
 * their algorithms only need non-overtaking messages (coll.h).
 *
 * A ULT cannot free its own stack, so a helper puts itself on the list of
 * finished ones as its last step; the next nonblocking call on the process
 * (or coll_nb_fini) destroys it.  Everything here runs on the single PE of
 * the process, without locks; several PEs per process would need a list
 * and sequence tables per PE. */
#include "coll/coll_nb.h"

#include <stdlib.h>
#include <string.h>

#define HELPER_STACK (256 * 1024)
#define SEQ_MOD (1u << 20)

typedef struct nb_op {
    coll_nb_args_t a;
    coll_nb_fn *fn;
    p2p_rank_t *r;
    core_comm_t *c;
    p2p_req_t *q;
    int tag;
    rank_ult_t *ult;
    int *arrays; /* copies of the count and displacement arrays a points at */
    struct nb_op *next_done;
} nb_op_t;

/* The count and displacement arrays of a v-collective, copied at the call:
 * the caller may free or change its own as soon as the call returns (mpi4py
 * does), although MPI 3.1 5.12 says it should not.  Only the arrays this
 * rank uses are read: those of a side whose datatype it uses (reductions:
 * the receive side), since the others may be anything (MPI_Igatherv's
 * recvcounts at a non-root, say).  Returns the block that holds the copies
 * (NULL when none), or sets *err. */
static int *copy_arrays(const core_comm_t *c, coll_nb_args_t *a, int *err)
{
    bool send = a->sdt != MPI_DATATYPE_NULL, recv = a->rdt != MPI_DATATYPE_NULL || a->op.dt != MPI_DATATYPE_NULL;
    const int **fields[4] = { &a->scounts, &a->sdispls, &a->rcounts, &a->rdispls };
    bool used[4] = { send, send, recv, recv };
    /* one entry per rank of the remote group (c->size), except MPI_Ireduce_scatter's
     * receive counts on an intercommunicator: one per rank of the local group */
    int len = c->remote && a->op.dt != MPI_DATATYPE_NULL ? c->group->size : c->size;
    int lens[4] = { c->size, c->size, len, len };
    size_t n = 0;
    for (int i = 0; i < 4; i++)
        if (*fields[i] && used[i])
            n += (size_t)lens[i];
    *err = MPI_SUCCESS;
    if (n == 0)
        return NULL;
    int *block = malloc(n * sizeof *block), *next = block;
    if (!block) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (!*fields[i] || !used[i])
            continue;
        memcpy(next, *fields[i], (size_t)lens[i] * sizeof *next);
        *fields[i] = next;
        next += lens[i];
    }
    return block;
}

/* Sequence numbers of one local rank by communicator context (a rank never
 * has two communicators with the same context, and contexts are never
 * reused by a rank: comm_create.c). */
typedef struct seq_table {
    uint32_t *ctx, *next;
    int n, cap;
} seq_table_t;

static nb_op_t *finished;      /* helpers whose function has returned */
static seq_table_t *seq_tables; /* core_proc.nlocal of them, made on first use */

uint32_t coll_nb_next_seq(p2p_rank_t *r, const core_comm_t *c)
{
    if (!seq_tables) {
        seq_tables = calloc((size_t)core_proc.nlocal, sizeof *seq_tables);
        if (!seq_tables)
            util_fatal("out of memory for collective sequence numbers");
    }
    seq_table_t *t = &seq_tables[r->core.world - core_proc.first];
    for (int i = 0; i < t->n; i++)
        if (t->ctx[i] == c->ctx)
            return t->next[i]++;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4;
        uint32_t *ctx = realloc(t->ctx, (size_t)t->cap * sizeof *ctx);
        if (ctx)
            t->ctx = ctx;
        uint32_t *next = realloc(t->next, (size_t)t->cap * sizeof *next);
        if (next)
            t->next = next;
        if (!ctx || !next)
            util_fatal("out of memory for collective sequence numbers");
    }
    t->ctx[t->n] = c->ctx;
    t->next[t->n] = 1;
    t->n++;
    return 0;
}

static void retain_types(const coll_nb_args_t *a)
{
    dt_retain(a->sdt);
    dt_retain(a->rdt);
    dt_retain(a->op.dt);
}

static void release_types(const coll_nb_args_t *a)
{
    dt_release(a->sdt);
    dt_release(a->rdt);
    dt_release(a->op.dt);
}

/* Destroys the helpers that have finished.  Every entry is DONE: a helper
 * joins the list as its last step and returns without switching threads. */
static void reap(void)
{
    while (finished) {
        nb_op_t *o = finished;
        if (o->ult->state != RANK_ULT_DONE)
            util_fatal("internal error: a finished collective helper is still running");
        finished = o->next_done;
        rank_ult_destroy(o->ult);
        free(o->arrays);
        free(o);
    }
}

static void helper_main(void *arg)
{
    nb_op_t *o = arg;
    int err = o->fn(o->r, o->c, &o->a, o->tag);
    release_types(&o->a);
    p2p_req_fail(o->q, err);
    o->next_done = finished;
    finished = o;
    /* last: completion may let the rank release the request (and the
     * communicator's reference) at once */
    p2p_req_part_done(o->q);
}

/* Runs fn(a) on a new helper thread, which completes q.  q is the user's
 * request, set up by the caller (communicator included).  tag: the
 * collective's tags, or -1 to take the next sequence number. */
static int launch(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, p2p_req_t *q, int tag)
{
    reap();
    nb_op_t *o = malloc(sizeof *o);
    if (!o)
        return MPI_ERR_NO_MEM;
    *o = (nb_op_t){ .a = *a, .fn = fn, .r = r, .c = c, .q = q };
    int err;
    o->arrays = copy_arrays(c, &o->a, &err);
    if (!err) {
        o->ult = rank_ult_create(rank_current_pe(), HELPER_STACK, helper_main, o);
        if (!o->ult)
            err = MPI_ERR_NO_MEM;
    }
    if (err) {
        free(o->arrays);
        free(o);
        return err;
    }
    o->ult->user = &r->core;
    o->ult->id = r->core.world;
    /* the sequence number is taken only once nothing can fail any more, so
     * every member counts the same collectives */
    o->tag = tag >= 0 ? tag : coll_nb_tag(coll_nb_next_seq(r, c));
    retain_types(&o->a);
    q->active = true;
    q->complete = false;
    q->pending = 1;
    q->status.MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

/* MPI_Xxx_init: the persistent request keeps the arguments (arrays copied,
 * types retained) for every MPI_Start, until MPI_Request_free.  Its tags
 * come from a sequence number taken at the init call: MPI 4.0 5.13 orders
 * persistent collectives by their init calls, and members may start them
 * in different orders.  Starts of one request follow each other, and a
 * rank's messages of one tag do not overtake each other. */
typedef struct persist {
    p2p_pcoll_t base; /* first: the request points at it */
    coll_nb_fn *fn;
    int tag;
    coll_nb_args_t a;
    int *arrays;
    void (*dispose)(const coll_nb_args_t *a);
} persist_t;

/* Set while MPI_Xxx_init runs MPI_Ixxx (coll_persist.c). */
static bool capturing;

static int persist_start(p2p_req_t *q)
{
    persist_t *p = (persist_t *)q->pcoll;
    return launch(q->owner, q->c, p->fn, &p->a, q, p->tag);
}

static void persist_free(p2p_req_t *q)
{
    persist_t *p = (persist_t *)q->pcoll;
    release_types(&p->a);
    if (p->dispose)
        p->dispose(&p->a);
    free(p->arrays);
    free(p);
    q->pcoll = NULL;
}

int coll_nb_persist(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, MPI_Request *request,
                    void (*dispose)(const coll_nb_args_t *a))
{
    if (!request)
        return MPI_ERR_REQUEST;
    persist_t *p = malloc(sizeof *p);
    if (!p)
        return MPI_ERR_NO_MEM;
    *p = (persist_t){ .base = { persist_start, persist_free }, .fn = fn, .a = *a, .dispose = dispose };
    int err;
    p->arrays = copy_arrays(c, &p->a, &err);
    if (err) {
        free(p);
        return err;
    }
    retain_types(&p->a);
    p->tag = coll_nb_tag(coll_nb_next_seq(r, c));
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_SEND);
    q->persistent = true;
    q->active = false;
    q->complete = true;
    q->pcoll = &p->base;
    q->comm = c->handle;
    q->c = c;
    if (!c->predefined)
        core_comm_retain(c);
    *request = q;
    return MPI_SUCCESS;
}

void coll_nb_capture(bool on) { capturing = on; }

bool coll_nb_capturing(void) { return capturing; }

int coll_nb_tag(uint32_t seq) { return COLL_NB_TAG_BASE + COLL_NB_TAG_SPAN * (int)(seq % SEQ_MOD); }

int coll_nb_start(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, MPI_Request *request)
{
    if (capturing && request)
        return coll_nb_persist(r, c, fn, a, request, NULL);
    return coll_nb_start_tag(r, c, fn, a, -1, request);
}

int coll_nb_start_tag(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const coll_nb_args_t *a, int tag,
                      MPI_Request *request)
{
    if (!request)
        return MPI_ERR_REQUEST;
    p2p_req_t *q = p2p_req_new(r, P2P_REQ_SEND);
    q->comm = c->handle;
    q->c = c;
    int err = launch(r, c, fn, a, q, tag);
    if (err) {
        q->c = NULL;
        p2p_req_release(q);
        return err;
    }
    if (!c->predefined) /* the user may free the communicator meanwhile */
        core_comm_retain(c);
    *request = q;
    return MPI_SUCCESS;
}

void coll_nb_fini(void)
{
    reap();
    coll_scratch_fini(); /* the helpers are gone: nothing holds scratch space now */
    if (!seq_tables)
        return;
    for (int i = 0; i < core_proc.nlocal; i++) {
        free(seq_tables[i].ctx);
        free(seq_tables[i].next);
    }
    free(seq_tables);
    seq_tables = NULL;
}

int coll_nb_start_uniform(p2p_rank_t *r, core_comm_t *c, coll_nb_fn *fn, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          MPI_Request *request)
{
    int err = sendbuf == MPI_IN_PLACE ? MPI_SUCCESS : coll_check_buf_nc(sendbuf, sendcount, sendtype);
    if (!err)
        err = coll_check_buf_nc(recvbuf, recvcount, recvtype);
    if (err)
        return err;
    coll_nb_args_t a = { .sbuf = sendbuf, .scount = sendcount, .rbuf = recvbuf, .rcount = recvcount,
                         .sdt = coll_nb_type(sendbuf != MPI_IN_PLACE, sendtype), .rdt = recvtype };
    return coll_nb_start(r, c, fn, &a, request);
}
