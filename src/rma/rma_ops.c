/* The operations: Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap and their request forms.  One function issues them all:
 * on a target of this process it applies the operation itself (complete at
 * once); otherwise it sends it (rma_target.c applies it on arrival). */
#include <stdlib.h>
#include <string.h>
#include "coll/coll_op.h"
#include "pt2pt/p2p_api.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"

typedef struct rma_args {
    int kind;
    const void *obuf;
    int ocount;
    MPI_Datatype odt;
    void *rbuf; /* Get: obuf's place; Get_accumulate, Fetch_and_op, CAS: the result */
    int rcount;
    MPI_Datatype rdt;
    const void *cmp;
    int target;
    MPI_Aint disp;
    int tcount;
    MPI_Datatype tdt;
    MPI_Op op;
} rma_args_t;

static bool is_host_contig(const void *buf, int count, MPI_Datatype dt)
{
    return dt_is_contig(dt) && !p2p_is_device(buf, (size_t)count * dt_size(dt));
}

/* The origin's data as one contiguous host buffer: buf itself or a packed copy (*tmp to free). */
static const void *origin_bytes(const void *buf, int count, MPI_Datatype dt, void **tmp)
{
    size_t n = (size_t)count * dt_size(dt);
    *tmp = NULL;
    if (n == 0)
        return NULL;
    if (dt_is_contig(dt)) {
        const char *p = (const char *)buf + dt_contig_offset(dt);
        if (!p2p_is_device(p, n))
            return p;
        *tmp = malloc(n);
        if (*tmp)
            p2p_copy_sync(*tmp, p, n);
        return *tmp;
    }
    *tmp = malloc(n);
    if (*tmp)
        dt_pack(buf, count, dt, *tmp);
    return *tmp;
}

/* Compare_and_swap's origin and compare values into host bytes: either may
 * be device memory (CUDA-aware codes pass device buffers to every call). */
static void cas_operands(char *dst, const rma_args_t *a, size_t sz)
{
    const void *from[2] = { a->obuf, a->cmp };
    for (int k = 0; k < 2; k++) {
        if (p2p_is_device(from[k], sz))
            p2p_copy_sync(dst + (size_t)k * sz, from[k], sz);
        else
            memcpy(dst + (size_t)k * sz, from[k], sz);
    }
}

/* Scatter n answer bytes into the result buffer (count elements of dt). */
static void result_store(void *buf, int count, MPI_Datatype dt, const void *bytes, size_t n)
{
    if (n == 0)
        return;
    if (dt_is_contig(dt)) {
        char *p = (char *)buf + dt_contig_offset(dt);
        if (p2p_is_device(p, n))
            p2p_copy_sync(p, bytes, n);
        else
            memcpy(p, bytes, n);
        return;
    }
    dt_unpack(bytes, n, buf, count, dt);
}

int rma_finish_fetches(void)
{
    rma_fetch_t *rma_net_take_done(void);
    rma_fetch_t *f = rma_net_take_done();
    int n = 0;
    while (f) {
        rma_fetch_t *next = f->next;
        if (f->tmp) {
            result_store(f->dst, f->count, f->dt, f->tmp, f->len);
            free(f->tmp);
        }
        dt_release(f->dt);
        f->w->fetching[f->target]--;
        f->w->nfetching--;
        if (f->req)
            p2p_req_part_done(f->req);
        free(f);
        f = next;
        n++;
    }
    return n;
}

/* Checks shared by every operation; MPI_SUCCESS, RMA_NOTHING (complete as
 * it is) or an error class. */
#define RMA_NOTHING (-1)
static int check(rma_win_t *w, const rma_args_t *a)
{
    if (a->target != MPI_PROC_NULL && (a->target < 0 || a->target >= w->size))
        return MPI_ERR_RANK;
    if (a->ocount < 0 || a->tcount < 0 || a->rcount < 0)
        return MPI_ERR_COUNT;
    if ((a->ocount > 0 && !dt_valid(a->odt)) || (a->tcount > 0 && !dt_valid(a->tdt)) ||
        (a->rcount > 0 && !dt_valid(a->rdt)))
        return MPI_ERR_TYPE;
    if (a->target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return MPI_ERR_DISP;
    if (!rma_epoch_ok(w, a->target))
        return MPI_ERR_RMA_SYNC;
    size_t obytes = a->ocount ? (size_t)a->ocount * dt_size(a->odt) : 0;
    size_t tbytes = a->tcount ? (size_t)a->tcount * dt_size(a->tdt) : 0;
    if (a->kind != RMA_CAS && obytes == 0 && tbytes == 0)
        return RMA_NOTHING; /* zero counts or zero-size types: nothing moves */
    if (a->kind == RMA_ACC || a->kind == RMA_GACC) {
        MPI_Datatype b = a->tcount ? rma_basic_of(a->tdt) : MPI_DATATYPE_NULL;
        if (a->tcount && b == MPI_DATATYPE_NULL)
            return MPI_ERR_TYPE;
        if (a->op == MPI_NO_OP ? a->kind != RMA_GACC
                               : a->op != MPI_REPLACE && (a->tcount && !coll_op_kernel(a->op, b)))
            return MPI_ERR_OP;
        if (a->op != MPI_NO_OP && a->ocount && rma_basic_of(a->odt) != b)
            return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* Byte offset of the target address from the target's base (the address itself on dynamic windows). */
static uint64_t target_off(rma_win_t *w, const rma_args_t *a)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (uint64_t)a->disp;
    return (uint64_t)a->disp * (uint64_t)w->mem[a->target].disp_unit;
}

static int range_check(rma_win_t *w, const rma_args_t *a, size_t tbytes)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || a->tcount == 0)
        return MPI_SUCCESS;
    uint64_t off = target_off(w, a);
    ptrdiff_t ext = dt_extent(a->tdt);
    const dt_type_t *d = dt_derived(a->tdt);
    uint64_t end = off + (uint64_t)(a->tcount - 1) * (uint64_t)ext + (d ? (uint64_t)d->true_ub : dt_size(a->tdt));
    (void)tbytes;
    return end > w->mem[a->target].size ? MPI_ERR_RMA_RANGE : MPI_SUCCESS;
}

/* Target memory this process can load and store (a rank of this process,
 * or another process's memory mapped here): apply at once.  tbase: the
 * target's base as mapped here (NULL on dynamic windows: the displacement is
 * the address); acc_lk: the lock its accumulates apply under.  Puts and gets
 * of a device target whose origin needs no staging only start their copies
 * (rma_dev.c); q (a request form) completes when they ran, or at return. */
static int issue_direct(rma_win_t *w, const rma_args_t *a, size_t tbytes, char *tbase, pthread_mutex_t *acc_lk,
                        bool dev, p2p_req_t *q)
{
    char *t = (char *)((uintptr_t)tbase + target_off(w, a));
    uint32_t nseg;
    int64_t first;
    rma_seg_t *segs = a->tcount ? rma_layout(a->tcount, a->tdt, &nseg, &first) : NULL;
    if (!a->tcount)
        nseg = 0, first = 0;
    t += first;
    void *tmp = NULL, *res = NULL;
    const void *src = NULL;
    if (dev && a->kind == RMA_PUT && dt_is_contig(a->odt)) {
        /* a device target: the copy engine takes host and device origins alike */
        src = (const char *)a->obuf + dt_contig_offset(a->odt);
    } else if (a->kind != RMA_GET && a->ocount && !(a->kind == RMA_GACC && a->op == MPI_NO_OP)) {
        src = origin_bytes(a->obuf, a->ocount, a->odt, &tmp);
        if (!src) {
            free(segs);
            return MPI_ERR_NO_MEM;
        }
    }
    int err = MPI_SUCCESS;
    switch (a->kind) {
    case RMA_PUT:
        if (dev && !tmp) { /* the user's buffer: it stays until the synchronization */
            err = rma_dev_copy(w, a->target, t, segs, nseg, (void *)src, tbytes, true, q);
            q = NULL;
            break;
        }
        rma_apply_put(t, segs, nseg, src, tbytes, dev);
        break;
    case RMA_GET:
        if (dt_is_contig(a->rdt) && (size_t)a->rcount * dt_size(a->rdt) == tbytes) {
            char *dst = (char *)a->rbuf + dt_contig_offset(a->rdt); /* straight into the result */
            if (dev) {
                err = rma_dev_copy(w, a->target, t, segs, nseg, dst, tbytes, false, q);
                q = NULL;
                break;
            }
            if (!segs) {
                if (p2p_is_device(dst, tbytes))
                    p2p_copy_sync(dst, t, tbytes);
                else
                    memcpy(dst, t, tbytes);
                break;
            }
        }
        res = malloc(tbytes ? tbytes : 1);
        rma_apply_get(t, segs, nseg, res, tbytes, dev);
        result_store(a->rbuf, a->rcount, a->rdt, res, tbytes);
        break;
    case RMA_ACC:
        rma_acc_lock(acc_lk);
        rma_apply_acc(t, segs, nseg, src, tbytes, a->op, rma_basic_of(a->tdt), dev);
        rma_acc_unlock(acc_lk);
        break;
    case RMA_GACC:
        res = malloc(tbytes ? tbytes : 1);
        rma_acc_lock(acc_lk);
        rma_apply_get(t, segs, nseg, res, tbytes, dev);
        rma_apply_acc(t, segs, nseg, src, tbytes, a->op, a->tcount ? rma_basic_of(a->tdt) : MPI_BYTE, dev);
        rma_acc_unlock(acc_lk);
        result_store(a->rbuf, a->rcount, a->rdt, res, tbytes);
        break;
    case RMA_CAS: {
        size_t sz = dt_size(a->odt);
        char buf[2 * 64];
        res = malloc(sz);
        if (sz > 64 || !res) {
            err = MPI_ERR_TYPE;
            break;
        }
        cas_operands(buf, a, sz);
        rma_acc_lock(acc_lk);
        rma_apply_cas(t, buf, buf + sz, res, sz, dev);
        rma_acc_unlock(acc_lk);
        result_store(a->rbuf, 1, a->odt, res, sz);
        break;
    }
    }
    free(res);
    free(tmp);
    free(segs);
    if (q)
        p2p_req_part_done(q);
    return err;
}

/* Another process of the node, host window: copy it ourselves (rma_cma.c);
 * small contiguous ones without a request wait for the next synchronization. */
static int issue_cma(rma_win_t *w, const rma_args_t *a, size_t tbytes, bool has_req)
{
    uint64_t at = w->mem[a->target].base + target_off(w, a);
    if (!has_req && rma_cma_batchable(tbytes) && dt_is_contig(a->tdt)) {
        at += (uint64_t)dt_contig_offset(a->tdt);
        if (a->kind == RMA_PUT && is_host_contig(a->obuf, a->ocount, a->odt))
            return rma_cma_defer(w, a->target, true, (char *)a->obuf + dt_contig_offset(a->odt), at, tbytes);
        if (a->kind == RMA_GET && is_host_contig(a->rbuf, a->rcount, a->rdt) &&
            (size_t)a->rcount * dt_size(a->rdt) == tbytes)
            return rma_cma_defer(w, a->target, false, (char *)a->rbuf + dt_contig_offset(a->rdt), at, tbytes);
    }
    uint32_t nseg = 0;
    int64_t first = 0;
    rma_seg_t *segs = a->tcount ? rma_layout(a->tcount, a->tdt, &nseg, &first) : NULL;
    uint64_t remote = w->mem[a->target].base + target_off(w, a) + (uint64_t)first;
    int err = MPI_SUCCESS;
    void *tmp = NULL;
    if (tbytes == 0) {
        /* nothing moves */
    } else if (a->kind == RMA_PUT) {
        const void *src = origin_bytes(a->obuf, a->ocount, a->odt, &tmp);
        err = src ? rma_cma_copy(w, a->target, true, (void *)src, remote, segs, nseg, tbytes) : MPI_ERR_NO_MEM;
    } else {
        size_t rbytes = (size_t)a->rcount * (a->rcount ? dt_size(a->rdt) : 0);
        size_t n = tbytes < rbytes ? tbytes : rbytes;
        bool direct = is_host_contig(a->rbuf, a->rcount, a->rdt) && n == tbytes;
        char *dst = direct ? (char *)a->rbuf + dt_contig_offset(a->rdt) : (tmp = malloc(tbytes));
        err = dst ? rma_cma_copy(w, a->target, false, dst, remote, segs, nseg, tbytes) : MPI_ERR_NO_MEM;
        if (err == MPI_SUCCESS && !direct)
            result_store(a->rbuf, a->rcount, a->rdt, tmp, n);
    }
    free(tmp);
    free(segs);
    return err;
}

/* An accumulate into a device window that CUDA IPC maps here, under an
 * exclusive lock: nothing else touches the target meanwhile, so the origin
 * applies it itself with a device kernel (rma_dev.c) instead of sending it
 * to the target process, which combines through host copies.  Contiguous
 * layouts of plain types from RMA_DEV_ACC_MIN bytes on. */
static bool dev_acc_direct(rma_win_t *w, const rma_args_t *a, size_t tbytes)
{
    int t = a->target;
    if ((a->kind != RMA_ACC && a->kind != RMA_GACC) || tbytes < RMA_DEV_ACC_MIN ||
        (w->locked[t] & ~RMA_LOCK_NOCHECK) != MPI_LOCK_EXCLUSIVE)
        return false;
    if (!dt_is_contig(a->tdt) ||
        (a->ocount && (!dt_is_contig(a->odt) || (size_t)a->ocount * dt_size(a->odt) != tbytes)))
        return false;
    if (a->kind == RMA_GACC && (!dt_is_contig(a->rdt) || (size_t)a->rcount * dt_size(a->rdt) != tbytes))
        return false;
    MPI_Datatype b = rma_basic_of(a->tdt);
    return a->op == MPI_NO_OP || (dt_is_plain(b) && (a->op == MPI_REPLACE || rma_dev_reduce_ok(a->op, b)));
}

static int issue_dev_acc(rma_win_t *w, const rma_args_t *a, size_t tbytes, char *tbase)
{
    int t = a->target;
    if (w->sent_to[t] > w->acked[t] || w->fetching[t])
        rma_flush_target(w, t, false); /* what we sent it before applies first */
    char *target = tbase + target_off(w, a) + dt_contig_offset(a->tdt);
    const char *origin = a->ocount ? (const char *)a->obuf + dt_contig_offset(a->odt) : NULL;
    char *result = a->kind == RMA_GACC ? (char *)a->rbuf + dt_contig_offset(a->rdt) : NULL;
    return rma_dev_acc(target, origin, result, tbytes, a->op, rma_basic_of(a->tdt));
}

/* Another process: send it. */
static int issue_remote(rma_win_t *w, const rma_args_t *a, size_t tbytes, p2p_req_t *q)
{
    int t = a->target;
    uint32_t nseg = 0;
    int64_t first = 0;
    rma_seg_t *segs = a->tcount ? rma_layout(a->tcount, a->tdt, &nseg, &first) : NULL;
    rma_hdr_t h = { .kind = (uint8_t)a->kind, .ctx = w->ctx, .target = w->mem[t].world, .origin = w->rank,
                    .origin_world = w->world, .op = a->op, .nseg = nseg,
                    .off = target_off(w, a) + (uint64_t)first, .len = tbytes };
    if (a->kind == RMA_ACC || a->kind == RMA_GACC)
        h.basic = a->tcount ? rma_basic_of(a->tdt) : MPI_BYTE;
    size_t seglen = (size_t)nseg * sizeof(rma_seg_t);
    size_t plen = 0;
    const void *payload = NULL;
    void *tmp = NULL;
    if ((a->kind == RMA_PUT || a->kind == RMA_ACC || a->kind == RMA_GACC) && a->ocount &&
        !(a->kind == RMA_GACC && a->op == MPI_NO_OP)) {
        plen = (size_t)a->ocount * dt_size(a->odt);
        payload = origin_bytes(a->obuf, a->ocount, a->odt, &tmp);
        if (!payload) {
            free(segs);
            return MPI_ERR_NO_MEM;
        }
    }
    char cas[2 * 64];
    if (a->kind == RMA_CAS) {
        size_t sz = dt_size(a->odt);
        if (sz > 64) {
            free(segs);
            return MPI_ERR_TYPE;
        }
        cas_operands(cas, a, sz);
        payload = cas;
        plen = 2 * sz;
        h.len = sz;
    }
    /* segments lead the payload: one buffer */
    const void *data = payload;
    size_t dlen = plen;
    void *free_after = tmp;
    if (nseg || a->kind == RMA_CAS) {
        char *b = malloc(seglen + plen + 1);
        if (!b) {
            free(segs);
            free(tmp);
            return MPI_ERR_NO_MEM;
        }
        if (seglen) /* (segs is NULL without segments: memcpy's arguments must not be) */
            memcpy(b, segs, seglen);
        if (plen)
            memcpy(b + seglen, payload, plen);
        free(tmp);
        data = b;
        dlen = seglen + plen;
        free_after = b;
    }
    free(segs);
    if (a->kind == RMA_GET || a->kind == RMA_GACC || a->kind == RMA_CAS) {
        rma_fetch_t *f = calloc(1, sizeof *f);
        if (!f)
            return MPI_ERR_NO_MEM;
        f->w = w;
        f->target = t;
        f->dst = a->rbuf;
        f->count = a->rcount;
        f->dt = a->rdt;
        size_t rbytes = (size_t)a->rcount * (a->rcount ? dt_size(a->rdt) : 0);
        f->len = h.len < rbytes ? h.len : rbytes;
        f->req = q;
        dt_retain(a->rdt);
        if (f->len && !is_host_contig(a->rbuf, a->rcount, a->rdt)) {
            f->tmp = malloc(f->len);
            if (!f->tmp)
                return MPI_ERR_NO_MEM;
        } else if (f->len) {
            f->dst = (char *)a->rbuf + dt_contig_offset(a->rdt);
        }
        h.id = (uint64_t)(uintptr_t)f;
        w->fetching[t]++;
        w->nfetching++;
        rma_net_send(p2p_proc_of(h.target), &h, data, dlen, &w->sending, free_after, a->kind != RMA_GET);
        return MPI_SUCCESS;
    }
    w->sent_to[t]++;
    rma_net_send(p2p_proc_of(h.target), &h, data, dlen, &w->sending, free_after, a->kind == RMA_ACC);
    if (q) { /* Rput, Raccumulate: complete once UCX no longer reads the origin's buffer */
        while (atomic_load(&w->sending))
            rma_wait_poll();
        p2p_req_part_done(q);
    }
    return MPI_SUCCESS;
}

/* A put or get of count elements of one plain predefined type on both
 * sides, without a request, to a host window this process loads and stores
 * (a rank of this process, or another process's memory mapped here), with a
 * host buffer here: one copy.  The general path spent ~500 instructions on a
 * 1-byte MPI_Put (callgrind, -np 2) building layouts and looking for staging
 * and devices that such a call never needs; osu_put_bw H H at 1-512 B was
 * 0.25-0.38x Open MPI's ob1 (loads and stores too).  False: anything else,
 * errors included, which the general path reports. */
static bool plain_direct(rma_win_t *w, const rma_args_t *a)
{
    bool put = a->kind == RMA_PUT;
    if ((!put && a->kind != RMA_GET) || w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return false;
    int t = a->target;
    if (t < 0 || t >= w->size || a->tcount <= 0 || (put ? a->ocount : a->rcount) != a->tcount ||
        (put ? a->odt : a->rdt) != a->tdt || !dt_is_plain(a->tdt) || a->disp < 0 || !rma_epoch_ok(w, t))
        return false;
    const rma_member_t *m = &w->mem[t];
    char *tbase = m->map;
    if (m->local) {
        const rma_win_t *p = rma_peer(w, t);
        tbase = p && !p->dev ? p->base : NULL;
    }
    size_t bytes = (size_t)a->tcount * dt_size(a->tdt);
    uint64_t off = (uint64_t)a->disp * (uint64_t)m->disp_unit;
    if (!tbase || off > m->size || bytes > m->size - off)
        return false;
    void *here = put ? (void *)a->obuf : a->rbuf;
    if (p2p_is_device(here, bytes))
        return false;
    if (put)
        memcpy(tbase + off, here, bytes);
    else
        memcpy(here, tbase + off, bytes);
    return true;
}

static int issue(const char *fn, MPI_Win win, rma_args_t *a, MPI_Request *request)
{
    P2P_ENTER(r, fn);
    rma_win_t *w = rma_win_of(win);
    if (!w)
        return core_error(NULL, MPI_ERR_WIN, fn);
    if (!request && plain_direct(w, a))
        return MPI_SUCCESS;
    int err = check(w, a);
    if (err != MPI_SUCCESS && err != RMA_NOTHING)
        return rma_win_error(w, err, fn);
    size_t tbytes = (size_t)a->tcount * (a->tcount ? dt_size(a->tdt) : 0);
    if (a->kind == RMA_CAS)
        tbytes = dt_size(a->odt);
    p2p_req_t *q = NULL;
    if (request) {
        q = p2p_req_new(r, P2P_REQ_SEND);
        q->active = true;
        q->pending = 1;
        *request = q;
    }
    if (a->target == MPI_PROC_NULL || err == RMA_NOTHING) {
        if (q)
            p2p_req_part_done(q);
        return MPI_SUCCESS;
    }
    err = range_check(w, a, tbytes);
    if (err == MPI_SUCCESS && (a->kind == RMA_PUT || a->kind == RMA_ACC) &&
        (size_t)a->ocount * dt_size(a->odt) != tbytes)
        err = MPI_ERR_TYPE; /* the origin and target type maps must hold the same data */
    if (err == MPI_SUCCESS) {
        rma_member_t *m = &w->mem[a->target];
        rma_win_t *p = m->local ? rma_peer(w, a->target) : NULL;
        if (a->kind != RMA_PUT && a->kind != RMA_GET)
            rma_dev_drain(w, a->target); /* accumulates apply after the puts before them */
        if (m->local) {
            char *tbase = w->flavor == MPI_WIN_FLAVOR_DYNAMIC || !p ? NULL : p->base;
            if (p) {
                err = issue_direct(w, a, tbytes, tbase, p->acc_lk ? p->acc_lk : &p->lk, p->dev, q);
            } else {
                err = MPI_ERR_INTERN;
                if (q)
                    p2p_req_part_done(q);
            }
        } else if (m->map) {
            err = issue_direct(w, a, tbytes, m->map, m->acc_lk, false, q);
        } else if (m->ipc && (a->kind == RMA_PUT || a->kind == RMA_GET)) {
            err = issue_direct(w, a, tbytes, m->ipc, NULL, true, q);
        } else if (m->ipc && dev_acc_direct(w, a, tbytes)) {
            err = issue_dev_acc(w, a, tbytes, m->ipc);
            if (q)
                p2p_req_part_done(q);
        } else if (w->mem[a->target].cma && (a->kind == RMA_PUT || a->kind == RMA_GET)) {
            err = issue_cma(w, a, tbytes, q != NULL);
            if (q)
                p2p_req_part_done(q);
        } else {
            err = issue_remote(w, a, tbytes, q);
        }
    } else if (q) {
        p2p_req_part_done(q);
    }
    return err == MPI_SUCCESS ? MPI_SUCCESS : rma_win_error(w, err, fn);
}

#pragma weak MPI_Put = PMPI_Put
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    rma_args_t a = { .kind = RMA_PUT, .obuf = origin_addr, .ocount = origin_count, .odt = origin_datatype,
                     .target = target_rank, .disp = target_disp, .tcount = target_count, .tdt = target_datatype,
                     .rdt = MPI_BYTE };
    return issue("MPI_Put", win, &a, NULL);
}

#pragma weak MPI_Rput = PMPI_Rput
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    rma_args_t a = { .kind = RMA_PUT, .obuf = origin_addr, .ocount = origin_count, .odt = origin_datatype,
                     .target = target_rank, .disp = target_disp, .tcount = target_count, .tdt = target_datatype,
                     .rdt = MPI_BYTE };
    if (!request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Rput");
    return issue("MPI_Rput", win, &a, request);
}

#pragma weak MPI_Get = PMPI_Get
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    rma_args_t a = { .kind = RMA_GET, .rbuf = origin_addr, .rcount = origin_count, .rdt = origin_datatype,
                     .odt = MPI_BYTE, .target = target_rank, .disp = target_disp, .tcount = target_count,
                     .tdt = target_datatype };
    return issue("MPI_Get", win, &a, NULL);
}

#pragma weak MPI_Rget = PMPI_Rget
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    rma_args_t a = { .kind = RMA_GET, .rbuf = origin_addr, .rcount = origin_count, .rdt = origin_datatype,
                     .odt = MPI_BYTE, .target = target_rank, .disp = target_disp, .tcount = target_count,
                     .tdt = target_datatype };
    if (!request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Rget");
    return issue("MPI_Rget", win, &a, request);
}

#pragma weak MPI_Accumulate = PMPI_Accumulate
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    rma_args_t a = { .kind = RMA_ACC, .obuf = origin_addr, .ocount = origin_count, .odt = origin_datatype,
                     .target = target_rank, .disp = target_disp, .tcount = target_count, .tdt = target_datatype,
                     .op = op, .rdt = MPI_BYTE };
    return issue("MPI_Accumulate", win, &a, NULL);
}

#pragma weak MPI_Raccumulate = PMPI_Raccumulate
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    rma_args_t a = { .kind = RMA_ACC, .obuf = origin_addr, .ocount = origin_count, .odt = origin_datatype,
                     .target = target_rank, .disp = target_disp, .tcount = target_count, .tdt = target_datatype,
                     .op = op, .rdt = MPI_BYTE };
    if (!request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Raccumulate");
    return issue("MPI_Raccumulate", win, &a, request);
}

#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    rma_args_t a = { .kind = RMA_GACC, .obuf = origin_addr, .ocount = op == MPI_NO_OP ? 0 : origin_count,
                     .odt = origin_datatype, .rbuf = result_addr, .rcount = result_count, .rdt = result_datatype,
                     .target = target_rank, .disp = target_disp, .tcount = target_count, .tdt = target_datatype,
                     .op = op };
    return issue("MPI_Get_accumulate", win, &a, NULL);
}

#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request)
{
    rma_args_t a = { .kind = RMA_GACC, .obuf = origin_addr, .ocount = op == MPI_NO_OP ? 0 : origin_count,
                     .odt = origin_datatype, .rbuf = result_addr, .rcount = result_count, .rdt = result_datatype,
                     .target = target_rank, .disp = target_disp, .tcount = target_count, .tdt = target_datatype,
                     .op = op };
    if (!request)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Rget_accumulate");
    return issue("MPI_Rget_accumulate", win, &a, request);
}

#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    rma_args_t a = { .kind = RMA_GACC, .obuf = origin_addr, .ocount = op == MPI_NO_OP ? 0 : 1, .odt = datatype,
                     .rbuf = result_addr, .rcount = 1, .rdt = datatype, .target = target_rank,
                     .disp = target_disp, .tcount = 1, .tdt = datatype, .op = op };
    return issue("MPI_Fetch_and_op", win, &a, NULL);
}

#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    rma_args_t a = { .kind = RMA_CAS, .obuf = origin_addr, .ocount = 1, .odt = datatype, .cmp = compare_addr,
                     .rbuf = result_addr, .rcount = 1, .rdt = datatype, .target = target_rank,
                     .disp = target_disp, .tcount = 1, .tdt = datatype };
    if (!dt_is_predefined(datatype))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Compare_and_swap");
    return issue("MPI_Compare_and_swap", win, &a, NULL);
}
