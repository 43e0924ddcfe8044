/* gpu_coll.c - every collective with CUDA device send and receive buffers.
 *
 * Reductions (Reduce, Allreduce, Scan, Exscan, Reduce_scatter(_block),
 * Iallreduce, Ireduce) run on MPI_INT, MPI_FLOAT and MPI_DOUBLE with SUM, MAX
 * and PROD, in place and not, for a short vector and one long enough for
 * the large-message algorithms; MPI_DOUBLE_INT with MINLOC.  Operands are
 * small integers (products of +-1 and 2), so every result is exact in any
 * combining order and compares equal to the host's.  Data movement (Bcast,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v), Ibcast, Iallgather(v),
 * Igatherv, Iscatterv, Ialltoall(v)) carries element values that name their source rank and
 * position.  Every result is copied back to the host and checked element by
 * element; receive buffers are poisoned first.  Last, a user-defined op on
 * 160 KB of device buffers (no device kernel: host copies) must give the
 * sum.
 * Blocking Allreduce and Reduce of the short vector (and Bcast) run on host
 * copies by default (AMPI_GPU_COLL_HOST_MAX); AMPI_GPU_COLL_HOST_MAX=0 keeps
 * them on the device path.
 * Under ampirun with one rank per process on distinct GPUs the blocking
 * Allreduce, Reduce, Bcast, Allgather and Reduce_scatter_block go to NCCL
 * (AMPI_NCCL=0 turns that off); otherwise they take the kernel path. */
#include "gputest.h"

enum { OPS = 3 };
static const MPI_Op ops[OPS] = {MPI_SUM, MPI_MAX, MPI_PROD};
static const char *const op_names[OPS] = {"SUM", "MAX", "PROD"};
enum { TYPES = 3 };
static const MPI_Datatype types[TYPES] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
static const char *const type_names[TYPES] = {"INT", "FLOAT", "DOUBLE"};
static const size_t esizes[TYPES] = {sizeof(int), sizeof(float), sizeof(double)};

typedef struct {
    int rank, size, errs;
    size_t cap;          /* bytes of each buffer */
    void *d1, *d2;       /* device buffers */
    unsigned char *h, *w; /* host: expected values, and what came back */
} ctx_t;

/* Operand of rank r at index i for op o: exact in every type. */
static double val(int o, int r, size_t i)
{
    if (ops[o] == MPI_PROD)
        return ((r + i) % 3 == 0 ? 2.0 : 1.0) * ((r + 2 * i) % 5 == 1 ? -1.0 : 1.0);
    if (ops[o] == MPI_MAX)
        return (double)((r * 31 + (long)i * 17) % 101) - 50.0;
    return (double)(r % 5) + (double)(i % 7) - 3.0;
}

/* The reduction of val over ranks lo..hi. */
static double expect(int o, int lo, int hi, size_t i)
{
    double acc = val(o, lo, i);
    for (int r = lo + 1; r <= hi; r++) {
        double v = val(o, r, i);
        acc = ops[o] == MPI_SUM ? acc + v : ops[o] == MPI_PROD ? acc * v : (v > acc ? v : acc);
    }
    return acc;
}

static void store(int t, void *b, size_t i, double v)
{
    if (t == 0) ((int *)b)[i] = (int)v;
    else if (t == 1) ((float *)b)[i] = (float)v;
    else ((double *)b)[i] = v;
}
static double load(int t, const void *b, size_t i)
{
    return t == 0 ? ((const int *)b)[i] : t == 1 ? ((const float *)b)[i] : ((const double *)b)[i];
}

static void to_dev(void *d, const void *h, size_t n) { GT_CUDA(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)); gt_sync(); }
static void from_dev(void *h, const void *d, size_t n) { GT_CUDA(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost)); }
static void poison(void *d, size_t n) { GT_CUDA(cudaMemset(d, GT_POISON, n)); gt_sync(); }

/* Device buffer d gets n elements: val(o, rank, base + i) at i. */
static void fill(ctx_t *c, void *d, int t, int o, size_t n, size_t base)
{
    for (size_t i = 0; i < n; i++)
        store(t, c->h, i, val(o, c->rank, base + i));
    to_dev(d, c->h, n * esizes[t]);
}

/* Compares n elements of device buffer d with expect(o, lo, hi, base + i). */
static void check_red(ctx_t *c, const char *what, const void *d, int t, int o, size_t n, size_t base, int lo, int hi)
{
    from_dev(c->w, d, n * esizes[t]);
    for (size_t i = 0; i < n; i++) {
        double want = expect(o, lo, hi, base + i), got = load(t, c->w, i);
        if (got != want) {
            c->errs += gt_fail(c->rank, "%s %s %s n=%zu: element %zu is %g, expected %g", what, type_names[t],
                               op_names[o], n, i, got, want);
            return;
        }
    }
}

#define MPI_OK(c, what, call) ((c)->errs += GT_MPI((c)->rank, what, call))

static void reductions(ctx_t *c, int t, int o, size_t n)
{
    MPI_Datatype ty = types[t];
    MPI_Op op = ops[o];
    int me = c->rank, p = c->size, root = p / 2, cnt = (int)n;
    size_t bytes = n * esizes[t];
    for (int inplace = 0; inplace < 2; inplace++) {
        const void *sb = inplace ? MPI_IN_PLACE : c->d1;
        fill(c, inplace ? c->d2 : c->d1, t, o, n, 0);
        if (!inplace) poison(c->d2, bytes);
        MPI_OK(c, "Allreduce", MPI_Allreduce(sb, c->d2, cnt, ty, op, MPI_COMM_WORLD));
        check_red(c, inplace ? "Allreduce(in place)" : "Allreduce", c->d2, t, o, n, 0, 0, p - 1);

        fill(c, inplace && me == root ? c->d2 : c->d1, t, o, n, 0);
        if (!(inplace && me == root)) poison(c->d2, bytes);
        MPI_OK(c, "Reduce", MPI_Reduce(inplace && me == root ? MPI_IN_PLACE : c->d1, c->d2, cnt, ty, op, root, MPI_COMM_WORLD));
        if (me == root)
            check_red(c, inplace ? "Reduce(in place)" : "Reduce", c->d2, t, o, n, 0, 0, p - 1);

        fill(c, inplace ? c->d2 : c->d1, t, o, n, 0);
        MPI_OK(c, "Scan", MPI_Scan(sb, c->d2, cnt, ty, op, MPI_COMM_WORLD));
        check_red(c, "Scan", c->d2, t, o, n, 0, 0, me);
        fill(c, inplace ? c->d2 : c->d1, t, o, n, 0);
        MPI_OK(c, "Exscan", MPI_Exscan(sb, c->d2, cnt, ty, op, MPI_COMM_WORLD));
        if (me > 0)
            check_red(c, "Exscan", c->d2, t, o, n, 0, 0, me - 1);

        /* Reduce_scatter_block: the input is p blocks of n, block k for rank k */
        fill(c, inplace ? c->d2 : c->d1, t, o, n * (size_t)p, 0);
        if (!inplace) poison(c->d2, bytes);
        MPI_OK(c, "Reduce_scatter_block", MPI_Reduce_scatter_block(sb, c->d2, cnt, ty, op, MPI_COMM_WORLD));
        check_red(c, "Reduce_scatter_block", c->d2, t, o, n, (size_t)me * n, 0, p - 1);

        /* Reduce_scatter with blocks of n + k elements for rank k */
        int *counts = gt_malloc((size_t)p * sizeof *counts);
        size_t total = 0, mine = 0;
        for (int k = 0; k < p; k++) {
            counts[k] = cnt + k;
            if (k == me) mine = total;
            total += (size_t)counts[k];
        }
        fill(c, inplace ? c->d2 : c->d1, t, o, total, 0);
        if (!inplace) poison(c->d2, (n + (size_t)me) * esizes[t]);
        MPI_OK(c, "Reduce_scatter", MPI_Reduce_scatter(sb, c->d2, counts, ty, op, MPI_COMM_WORLD));
        check_red(c, "Reduce_scatter", c->d2, t, o, n + (size_t)me, mine, 0, p - 1);
        free(counts);
    }
    /* nonblocking forms: the kernel path on helper threads */
    MPI_Request rq;
    fill(c, c->d1, t, o, n, 0);
    poison(c->d2, bytes);
    MPI_OK(c, "Iallreduce", MPI_Iallreduce(c->d1, c->d2, cnt, ty, op, MPI_COMM_WORLD, &rq));
    MPI_OK(c, "Wait(Iallreduce)", MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_red(c, "Iallreduce", c->d2, t, o, n, 0, 0, p - 1);
    MPI_OK(c, "Ireduce", MPI_Ireduce(c->d1, c->d2, cnt, ty, op, 0, MPI_COMM_WORLD, &rq));
    MPI_OK(c, "Wait(Ireduce)", MPI_Wait(&rq, MPI_STATUS_IGNORE));
    if (me == 0)
        check_red(c, "Ireduce", c->d2, t, o, n, 0, 0, p - 1);
}

/* MINLOC on MPI_DOUBLE_INT: values repeat across ranks, so ties pick the lowest rank. */
static void minloc(ctx_t *c, size_t n)
{
    typedef struct { double v; int i; } di_t;
    di_t *h = (di_t *)c->h, *w = (di_t *)c->w;
    int p = c->size;
    for (size_t i = 0; i < n; i++)
        h[i] = (di_t){(double)((c->rank * 7 + (long)i) % (p > 3 ? p - 2 : p)), c->rank};
    to_dev(c->d1, h, n * sizeof *h);
    poison(c->d2, n * sizeof *h);
    MPI_OK(c, "Allreduce(MINLOC)", MPI_Allreduce(c->d1, c->d2, (int)n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    from_dev(w, c->d2, n * sizeof *w);
    for (size_t i = 0; i < n; i++) {
        di_t best = {1e300, -1};
        for (int r = 0; r < p; r++) {
            double v = (double)((r * 7 + (long)i) % (p > 3 ? p - 2 : p));
            if (v < best.v) best = (di_t){v, r};
        }
        if (w[i].v != best.v || w[i].i != best.i) {
            c->errs += gt_fail(c->rank, "Allreduce MINLOC n=%zu: element %zu is (%g, %d), expected (%g, %d)", n, i,
                               w[i].v, w[i].i, best.v, best.i);
            return;
        }
    }
}

/* Data movement: element i of rank r's block is r * 1000003 + i (ints). */
static int tagv(int r, size_t i) { return r * 1000003 + (int)i; }
static void fill_blocks(ctx_t *c, void *d, int nblocks, size_t n, int per_dest)
{
    int *h = (int *)c->h;
    for (int k = 0; k < nblocks; k++)
        for (size_t i = 0; i < n; i++) /* per_dest: block k is meant for rank k */
            h[(size_t)k * n + i] = tagv(c->rank, per_dest ? (size_t)k * n + i : i);
    to_dev(d, h, (size_t)nblocks * n * sizeof(int));
}
/* Block k of d (n ints) must hold source src(k)'s element base + i. */
static void check_block(ctx_t *c, const char *what, const void *d, size_t n, int k, int src, size_t base)
{
    int *w = (int *)c->w;
    from_dev(w, (const int *)d + (size_t)k * n, n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        if (w[i] != tagv(src, base + i)) {
            c->errs += gt_fail(c->rank, "%s n=%zu: block %d element %zu is %d, expected %d", what, n, k, i, w[i],
                               tagv(src, base + i));
            return;
        }
}

static void bcasts(ctx_t *c, size_t n)
{
    int root = c->size - 1, cnt = (int)n;
    MPI_Request rq;
    for (int nb = 0; nb < 2; nb++) {
        if (c->rank == root) fill_blocks(c, c->d1, 1, n, 0); else poison(c->d1, n * sizeof(int));
        if (nb) { MPI_OK(c, "Ibcast", MPI_Ibcast(c->d1, cnt, MPI_INT, root, MPI_COMM_WORLD, &rq)); MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        else MPI_OK(c, "Bcast", MPI_Bcast(c->d1, cnt, MPI_INT, root, MPI_COMM_WORLD));
        check_block(c, nb ? "Ibcast" : "Bcast", c->d1, n, 0, root, 0);
    }
}

static void movement(ctx_t *c, size_t n)
{
    int me = c->rank, p = c->size, root = p - 1, cnt = (int)n;
    size_t all = (size_t)p * n * sizeof(int);
    int *counts = gt_malloc((size_t)p * sizeof *counts), *displs = gt_malloc((size_t)p * sizeof *displs);
    MPI_Request rq;
    for (int k = 0; k < p; k++) counts[k] = cnt, displs[k] = (p - 1 - k) * cnt; /* reversed layout */
    bcasts(c, n);
    for (int inplace = 0; inplace < 2; inplace++) {
        const char *ip = inplace ? " (in place)" : "";
        char what[64];
        /* Gather / Gatherv to root, Scatter / Scatterv from it */
        poison(c->d2, all);
        fill_blocks(c, inplace && me == root ? (int *)c->d2 + (size_t)me * n : c->d1, 1, n, 0);
        MPI_OK(c, "Gather", MPI_Gather(inplace && me == root ? MPI_IN_PLACE : c->d1, cnt, MPI_INT, c->d2, cnt, MPI_INT, root, MPI_COMM_WORLD));
        for (int k = 0; me == root && k < p; k++) { snprintf(what, sizeof what, "Gather%s", ip); check_block(c, what, c->d2, n, k, k, 0); }
        fill_blocks(c, c->d1, 1, n, 0);
        poison(c->d2, all);
        MPI_OK(c, "Gatherv", MPI_Gatherv(c->d1, cnt, MPI_INT, c->d2, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
        for (int k = 0; me == root && k < p; k++) check_block(c, "Gatherv", c->d2, n, p - 1 - k, k, 0);
        if (me == root) fill_blocks(c, c->d1, p, n, 1);
        poison(c->d2, n * sizeof(int));
        MPI_OK(c, "Scatter", MPI_Scatter(c->d1, cnt, MPI_INT, inplace && me == root ? MPI_IN_PLACE : c->d2, cnt, MPI_INT, root, MPI_COMM_WORLD));
        if (!(inplace && me == root)) { snprintf(what, sizeof what, "Scatter%s", ip); check_block(c, what, c->d2, n, 0, root, (size_t)me * n); }
        MPI_OK(c, "Scatterv", MPI_Scatterv(c->d1, counts, displs, MPI_INT, c->d2, cnt, MPI_INT, root, MPI_COMM_WORLD));
        check_block(c, "Scatterv", c->d2, n, 0, root, (size_t)(p - 1 - me) * n);
        /* Allgather(v) */
        poison(c->d2, all);
        fill_blocks(c, inplace ? (int *)c->d2 + (size_t)me * n : c->d1, 1, n, 0);
        MPI_OK(c, "Allgather", MPI_Allgather(inplace ? MPI_IN_PLACE : c->d1, cnt, MPI_INT, c->d2, cnt, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < p; k++) { snprintf(what, sizeof what, "Allgather%s", ip); check_block(c, what, c->d2, n, k, k, 0); }
        poison(c->d2, all);
        fill_blocks(c, inplace ? (int *)c->d2 + (size_t)(p - 1 - me) * n : c->d1, 1, n, 0);
        MPI_OK(c, "Allgatherv", MPI_Allgatherv(inplace ? MPI_IN_PLACE : c->d1, cnt, MPI_INT, c->d2, counts, displs, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < p; k++) check_block(c, "Allgatherv", c->d2, n, p - 1 - k, k, 0);
        /* Alltoall(v): block k of rank r's input goes to rank k */
        fill_blocks(c, inplace ? c->d2 : c->d1, p, n, 1);
        if (!inplace) poison(c->d2, all);
        MPI_OK(c, "Alltoall", MPI_Alltoall(inplace ? MPI_IN_PLACE : c->d1, cnt, MPI_INT, c->d2, cnt, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < p; k++) { snprintf(what, sizeof what, "Alltoall%s", ip); check_block(c, what, c->d2, n, k, k, (size_t)me * n); }
        fill_blocks(c, c->d1, p, n, 1);
        poison(c->d2, all);
        MPI_OK(c, "Alltoallv", MPI_Alltoallv(c->d1, counts, displs, MPI_INT, c->d2, counts, displs, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < p; k++) check_block(c, "Alltoallv", c->d2, n, p - 1 - k, k, (size_t)(p - 1 - me) * n);
    }
    fill_blocks(c, c->d1, 1, n, 0);
    poison(c->d2, all);
    MPI_OK(c, "Iallgather", MPI_Iallgather(c->d1, cnt, MPI_INT, c->d2, cnt, MPI_INT, MPI_COMM_WORLD, &rq));
    MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int k = 0; k < p; k++) check_block(c, "Iallgather", c->d2, n, k, k, 0);
    for (int inplace = 0; inplace < 2; inplace++) { /* the schedules copy each block back on their own */
        const char *what = inplace ? "Iallgatherv (in place)" : "Iallgatherv";
        poison(c->d2, all);
        fill_blocks(c, inplace ? (int *)c->d2 + (size_t)(p - 1 - me) * n : c->d1, 1, n, 0);
        MPI_OK(c, what, MPI_Iallgatherv(inplace ? MPI_IN_PLACE : c->d1, cnt, MPI_INT, c->d2, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
        MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int k = 0; k < p; k++) check_block(c, what, c->d2, n, p - 1 - k, k, 0);
    }
    for (int inplace = 0; inplace < 2; inplace++) { /* the root's blocks through a host copy, block by block */
        const char *gw = inplace ? "Igatherv (in place)" : "Igatherv", *sw = inplace ? "Iscatterv (in place)" : "Iscatterv";
        bool ip = inplace && me == root;
        poison(c->d2, all);
        fill_blocks(c, ip ? (int *)c->d2 + (size_t)(p - 1 - me) * n : c->d1, 1, n, 0);
        MPI_OK(c, gw, MPI_Igatherv(ip ? MPI_IN_PLACE : c->d1, cnt, MPI_INT, c->d2, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &rq));
        MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int k = 0; me == root && k < p; k++) check_block(c, gw, c->d2, n, p - 1 - k, k, 0);
        if (me == root) fill_blocks(c, c->d1, p, n, 1);
        poison(c->d2, n * sizeof(int));
        MPI_OK(c, sw, MPI_Iscatterv(c->d1, counts, displs, MPI_INT, ip ? MPI_IN_PLACE : c->d2, cnt, MPI_INT, root, MPI_COMM_WORLD, &rq));
        MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (!ip) check_block(c, sw, c->d2, n, 0, root, (size_t)(p - 1 - me) * n);
    }
    fill_blocks(c, c->d1, p, n, 1);
    poison(c->d2, all);
    MPI_OK(c, "Ialltoall", MPI_Ialltoall(c->d1, cnt, MPI_INT, c->d2, cnt, MPI_INT, MPI_COMM_WORLD, &rq));
    MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int k = 0; k < p; k++) check_block(c, "Ialltoall", c->d2, n, k, k, (size_t)me * n);
    for (int inplace = 0; inplace < 2; inplace++) { /* both buffers through host copies, block by block */
        const char *what = inplace ? "Ialltoallv (in place)" : "Ialltoallv";
        fill_blocks(c, inplace ? c->d2 : c->d1, p, n, 1);
        if (!inplace) poison(c->d2, all);
        MPI_OK(c, what, MPI_Ialltoallv(inplace ? MPI_IN_PLACE : c->d1, counts, displs, MPI_INT, c->d2, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
        MPI_OK(c, "Wait", MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int k = 0; k < p; k++) check_block(c, what, c->d2, n, p - 1 - k, k, (size_t)(p - 1 - me) * n);
    }
    free(counts);
    free(displs);
}

/* A wrapping sum of ints: a user op, which has no device kernel. */
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

int main(int argc, char **argv)
{
    ctx_t c = {0};
    gt_init(&argc, &argv, &c.rank, &c.size);
    const size_t sizes[2] = {5, 40000}; /* 40000 doubles pass every large-message threshold */
    /* 800 KB: a Bcast from the CUDA IPC push size (512 KiB) to the flat tree's limit (1 MiB) */
    const size_t bcast_big = 200000;
    c.cap = (sizes[1] + (size_t)c.size) * (size_t)c.size * sizeof(double) * 2;
    if (c.cap < bcast_big * sizeof(int))
        c.cap = bcast_big * sizeof(int);
    GT_CUDA(cudaMalloc(&c.d1, c.cap));
    GT_CUDA(cudaMalloc(&c.d2, c.cap));
    GT_CUDA(cudaMallocHost((void **)&c.h, c.cap));
    GT_CUDA(cudaMallocHost((void **)&c.w, c.cap));
    for (int s = 0; s < 2; s++) {
        for (int t = 0; t < TYPES; t++)
            for (int o = 0; o < OPS; o++)
                reductions(&c, t, o, sizes[s]);
        minloc(&c, sizes[s]);
        movement(&c, sizes[s]);
    }
    bcasts(&c, bcast_big);
    MPI_Op user;
    MPI_Op_create(user_fn, 1, &user);
    /* 40000 ints: above the size that AMPI-UCX reduces on host copies
     * (64 KiB); the op runs on host copies of the device operands */
    enum { NUSER = 40000 };
    int *hv = (int *)c.h;
    for (int i = 0; i < NUSER; i++)
        hv[i] = c.rank * 3 + i % 11;
    GT_CUDA(cudaMemcpy(c.d1, hv, NUSER * sizeof(int), cudaMemcpyHostToDevice));
    GT_CUDA(cudaMemset(c.d2, GT_POISON, NUSER * sizeof(int)));
    int rc = MPI_Allreduce(c.d1, c.d2, NUSER, MPI_INT, user, MPI_COMM_WORLD);
    c.errs += gt_mpi_ok(c.rank, rc, "MPI_Allreduce", "Allreduce of 40000 ints with a user op on device buffers");
    if (rc == MPI_SUCCESS) {
        GT_CUDA(cudaMemcpy(hv, c.d2, NUSER * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < NUSER; i++) {
            int want = 3 * c.size * (c.size - 1) / 2 + c.size * (i % 11);
            if (hv[i] != want) {
                c.errs += gt_fail(c.rank, "Allreduce of 40000 ints with a user op on device buffers: element %d "
                                          "is %d, expected %d", i, hv[i], want);
                break;
            }
        }
    }
    MPI_Op_free(&user);
    GT_CUDA(cudaFree(c.d1)); GT_CUDA(cudaFree(c.d2));
    GT_CUDA(cudaFreeHost(c.h)); GT_CUDA(cudaFreeHost(c.w));
    return gt_finish(c.rank, c.errs, "gpu_coll");
}
