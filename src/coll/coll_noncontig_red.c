/* Reductions (Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan and
 * their nonblocking and persistent forms) on derived datatypes whose data
 * is not one block of size bytes at the buffer.
 *
 * The reduction algorithms (coll_reduce.c & co.) move and combine
 * contiguous blocks, so these calls take a simple way of their own: every
 * rank packs its input, rank 0 (the root of MPI_Reduce) gathers the packed
 * inputs and folds them in rank order -- x0 op (x1 op (... op xn-1)), MPI's
 * order, so non-commutative ops are right -- and the result goes where the
 * call says (bcast, scatter).  A predefined op runs its kernel on the basic
 * elements of the packed data (MPI allows predefined ops only on types of
 * one basic type); a user op gets both operands unpacked into the type's
 * own layout, as MPI promises it.  It costs n times the data at one rank:
 * such reductions are rare, and correctness is what they need. */
#include "coll/coll_nb.h"
#include "coll/coll_nc.h"

#include <limits.h>
#include <stdlib.h>

typedef enum { NC_REDUCE, NC_ALLREDUCE, NC_REDSCAT, NC_SCAN, NC_EXSCAN } nc_red_t;

/* The op for dt: a predefined op gets the kernel of dt's basic type. */
static int op_resolve(MPI_Op op, MPI_Datatype dt, coll_op_t *o)
{
    const dt_type_t *d = dt_derived(dt);
    MPI_Datatype basic = d && d->nruns ? d->runs[0].basic : MPI_DATATYPE_NULL;
    for (size_t i = 1; d && i < d->nruns; i++)
        if (d->runs[i].basic != basic)
            basic = MPI_DATATYPE_NULL;
    int err = coll_op_resolve(op, basic != MPI_DATATYPE_NULL ? basic : MPI_BYTE, o);
    o->dt = dt;
    if (o->user)
        return MPI_SUCCESS;
    return basic == MPI_DATATYPE_NULL ? MPI_ERR_OP : err;
}

/* Room for count elements of dt in its own layout; *base: where element 0
 * starts (the data may lie before it: a negative true lower bound). */
static char *layout_alloc(MPI_Datatype dt, int count, char **base)
{
    const dt_type_t *d = dt_derived(dt);
    ptrdiff_t step = (ptrdiff_t)(count > 0 ? count - 1 : 0) * (d->ub - d->lb);
    ptrdiff_t lo = d->true_lb < d->true_lb + step ? d->true_lb : d->true_lb + step;
    ptrdiff_t hi = d->true_ub > d->true_ub + step ? d->true_ub : d->true_ub + step;
    char *p = malloc((size_t)(hi - lo) + 1);
    *base = p ? p - lo : NULL;
    return p;
}

typedef struct {
    const coll_op_t *o;
    int count;
    size_t bytes;
    char *t1, *t2; /* the user op's operands in dt's layout */
    char *b1, *b2; /* their allocations (t1, t2 may point before them) */
} fold_t;

/* A fold of count elements with op o; a user op needs its two operands
 * unpacked, so it gets room for both in the type's layout. */
static int fold_init(fold_t *f, const coll_op_t *o, int count)
{
    *f = (fold_t){ .o = o, .count = count, .bytes = (size_t)count * dt_size(o->dt) };
    if (o->kernel)
        return MPI_SUCCESS;
    f->b1 = layout_alloc(o->dt, count, &f->t1);
    f->b2 = layout_alloc(o->dt, count, &f->t2);
    return f->b1 && f->b2 ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void fold_free(fold_t *f)
{
    free(f->b1), free(f->b2);
}

/* acc = x op acc (count packed elements). */
static void fold(const fold_t *f, const char *x, char *acc)
{
    const coll_op_t *o = f->o;
    if (o->kernel) {
        o->kernel(x, acc, (size_t)f->count * dt_derived(o->dt)->nbasic);
        return;
    }
    dt_unpack(x, f->bytes, f->t1, f->count, o->dt);
    dt_unpack(acc, f->bytes, f->t2, f->count, o->dt);
    int len = f->count;
    MPI_Datatype dt = o->dt;
    o->user(f->t1, f->t2, &len, &dt);
    dt_pack(f->t2, f->count, o->dt, acc);
}

/* acc = x_first op ... op x_last of the packed inputs in `all`. */
static void fold_range(const fold_t *f, const char *all, int first, int last, char *acc)
{
    memcpy(acc, all + (size_t)last * f->bytes, f->bytes);
    for (int i = last - 1; i >= first; i--)
        fold(f, all + (size_t)i * f->bytes, acc);
}

/* The reduction of kind k of `in` (count elements of o->dt) into out;
 * rcounts / rcount: Reduce_scatter's blocks (rcounts NULL: rcount each). */
static int red_run(p2p_rank_t *r, core_comm_t *c, nc_red_t k, const void *in, void *out, int count,
                   const int *rcounts, int rcount, const coll_op_t *o, int root, int tag, int tag2)
{
    int n = c->size, me = c->rank, at = k == NC_REDUCE ? root : 0;
    MPI_Datatype dt = o->dt;
    size_t bytes = (size_t)count * dt_size(dt);
    bool folds = k == NC_SCAN || k == NC_EXSCAN || me == at;
    char *mine = malloc(bytes + 1), *all = folds ? malloc((size_t)n * bytes + 1) : NULL, *acc = malloc(bytes + 1);
    fold_t f;
    int err = fold_init(&f, o, count);
    if (!mine || !acc || (folds && !all))
        err = MPI_ERR_NO_MEM;
    if (!err) {
        coll_nc_pack_buf(in, count, dt, mine);
        coll_layout_t rl = { .count = bytes, .dt = MPI_BYTE };
        err = coll_gather(r, c, mine, bytes, me == at ? all : NULL, &rl, at, tag);
    }
    if (!err && (k == NC_SCAN || k == NC_EXSCAN))
        err = coll_bcast(r, c, all, (size_t)n * bytes, 0, tag2);
    if (err)
        goto out;
    if (k == NC_SCAN || k == NC_EXSCAN) {
        int last = k == NC_SCAN ? me : me - 1;
        if (last >= 0) {
            fold_range(&f, all, 0, last, acc);
            coll_nc_unpack_buf(acc, bytes, out, count, dt);
        }
        goto out;
    }
    if (me == at)
        fold_range(&f, all, 0, n - 1, acc);
    if (k == NC_REDUCE) {
        if (me == at)
            coll_nc_unpack_buf(acc, bytes, out, count, dt);
    } else if (k == NC_ALLREDUCE) {
        err = coll_bcast(r, c, acc, bytes, 0, tag2);
        if (!err)
            coll_nc_unpack_buf(acc, bytes, out, count, dt);
    } else { /* NC_REDSCAT: rank i gets its block of the result */
        size_t *offs = malloc((size_t)n * sizeof *offs), off = 0;
        int *bcounts = malloc((size_t)n * sizeof *bcounts);
        if (!offs || !bcounts) {
            err = MPI_ERR_NO_MEM;
        } else {
            for (int i = 0; i < n; i++) {
                bcounts[i] = (int)((size_t)(rcounts ? rcounts[i] : rcount) * dt_size(dt));
                offs[i] = off;
                off += (size_t)bcounts[i];
            }
            coll_layout_t sl = { .counts = bcounts, .offs = offs, .dt = MPI_BYTE };
            err = coll_scatter(r, c, acc, &sl, mine, (size_t)bcounts[me], 0, tag2);
            if (!err)
                coll_nc_unpack_buf(mine, (size_t)bcounts[me], out, rcounts ? rcounts[me] : rcount, dt);
        }
        free(offs);
        free(bcounts);
    }
out:
    free(mine), free(all), free(acc);
    fold_free(&f);
    return err;
}

/* The nonblocking and persistent forms: one function per kind. */
#define NB_RUN(name, kind)                                                                                   \
    static int name(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)                         \
    {                                                                                                        \
        return red_run(r, c, kind, a->sbuf, a->rbuf, (int)a->count, a->rcounts, a->rcount, &a->op, a->root, \
                       tag, tag + 1);                                                                        \
    }
NB_RUN(nb_reduce, NC_REDUCE)
NB_RUN(nb_allreduce, NC_ALLREDUCE)
NB_RUN(nb_redscat, NC_REDSCAT)
NB_RUN(nb_scan, NC_SCAN)
NB_RUN(nb_exscan, NC_EXSCAN)

static int start(p2p_rank_t *r, core_comm_t *c, nc_red_t k, const void *sendbuf, void *recvbuf, int count,
                 const int *rcounts, int rcount, MPI_Datatype dt, MPI_Op op, int root, MPI_Request *request)
{
    bool has_out = k != NC_REDUCE || c->rank == root;
    if (k == NC_REDUCE && (root < 0 || root >= c->size))
        return MPI_ERR_ROOT;
    if (count < 0)
        return MPI_ERR_COUNT;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    coll_op_t o;
    int err = op_resolve(op, dt, &o);
    if (!err && count > 0 && dt_size(dt) > 0 && (!in || in == MPI_IN_PLACE || (has_out && !recvbuf)))
        err = MPI_ERR_BUFFER;
    if (err)
        return err;
    static coll_nb_fn *const nb[] = { nb_reduce, nb_allreduce, nb_redscat, nb_scan, nb_exscan };
    if (request) {
        coll_nb_args_t a = { .sbuf = in, .rbuf = recvbuf, .count = (size_t)count, .rcounts = rcounts,
                             .rcount = rcount, .root = root, .op = o };
        return coll_nb_start(r, c, nb[k], &a, request);
    }
    static const int tags[][2] = { { COLL_TAG_REDUCE, COLL_TAG_BCAST },
                                   { COLL_TAG_ALLREDUCE, COLL_TAG_BCAST },
                                   { COLL_TAG_REDSCAT, COLL_TAG_SCATTER },
                                   { COLL_TAG_SCAN, COLL_TAG_BCAST },
                                   { COLL_TAG_EXSCAN, COLL_TAG_BCAST } };
    return red_run(r, c, k, in, recvbuf, count, rcounts, rcount, &o, root, tags[k][0], tags[k][1]);
}

int coll_nc_reduce(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                   MPI_Op op, int root, MPI_Request *request)
{
    return start(r, c, NC_REDUCE, sendbuf, recvbuf, count, NULL, 0, dt, op, root, request);
}

int coll_nc_allreduce(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype dt, MPI_Op op, MPI_Request *request)
{
    return start(r, c, NC_ALLREDUCE, sendbuf, recvbuf, count, NULL, 0, dt, op, 0, request);
}

int coll_nc_reduce_scatter(p2p_rank_t *r, core_comm_t *c, const void *sendbuf, void *recvbuf,
                           const int *recvcounts, int recvcount, MPI_Datatype dt, MPI_Op op, MPI_Request *request)
{
    long long total = 0;
    for (int i = 0; i < c->size; i++) {
        int ci = recvcounts ? recvcounts[i] : recvcount;
        if (ci < 0)
            return MPI_ERR_COUNT;
        total += ci;
    }
    if (total > INT_MAX)
        return MPI_ERR_COUNT;
    return start(r, c, NC_REDSCAT, sendbuf, recvbuf, (int)total, recvcounts, recvcount, dt, op, 0, request);
}

int coll_nc_scan(p2p_rank_t *r, core_comm_t *c, bool exclusive, const void *sendbuf, void *recvbuf, int count,
                 MPI_Datatype dt, MPI_Op op, MPI_Request *request)
{
    return start(r, c, exclusive ? NC_EXSCAN : NC_SCAN, sendbuf, recvbuf, count, NULL, 0, dt, op, 0, request);
}

int coll_nc_reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op)
{
    coll_op_t o;
    int err = count < 0 ? MPI_ERR_COUNT : op_resolve(op, dt, &o);
    if (!err && count > 0 && dt_size(dt) > 0 && (!inbuf || !inoutbuf || inbuf == MPI_IN_PLACE))
        err = MPI_ERR_BUFFER;
    if (err || count == 0)
        return err;
    fold_t f;
    err = fold_init(&f, &o, count);
    char *x = malloc(f.bytes + 1), *acc = malloc(f.bytes + 1);
    if (!x || !acc)
        err = MPI_ERR_NO_MEM;
    if (!err) {
        coll_nc_pack_buf(inbuf, count, dt, x);
        coll_nc_pack_buf(inoutbuf, count, dt, acc);
        fold(&f, x, acc);
        coll_nc_unpack_buf(acc, f.bytes, inoutbuf, count, dt);
    }
    free(x), free(acc);
    fold_free(&f);
    return err;
}
