/* gpu_smallred.c - small reductions and broadcasts on device buffers give
 * the results of the same calls on host buffers, for every predefined type
 * and every predefined op, and for user-defined ops.
 *
 * For each (type, op) the reference is MPI_Allreduce (MPI_Reduce) on host
 * buffers; then the same operands go through device buffers in several
 * placements -- device to device, in place, pageable host in and device
 * out, device in and host out, managed memory, stream-ordered pool memory
 * (cudaMallocAsync), device buffers on even ranks and host ones on odd
 * ranks -- and each result must equal the reference (integers
 * bit for bit, floating-point values by value: operands are small integers,
 * so every sum and product is exact), with the same error class where the
 * host refuses the pair.  A commutative user op (wrapping sum of ints) and a
 * non-commutative one (composition of affine maps on MPI_2INT, whose result
 * is also computed here, in rank order) run the same way.  Sizes: 1, 5 and
 * 37 elements, and MPI_INT sums of exactly 1 KiB and 64 KiB and of 4 bytes
 * more (either side of AMPI-UCX's default limit for reductions on host
 * copies, AMPI_GPU_COLL_HOST_MAX, and of a larger one), with MPI_SUM and the
 * user op, and MPI_LONG_DOUBLE
 * just above 64 KiB.  Bcast of 1 B to 64 KiB from the last rank (device,
 * managed, and device on even ranks with host on odd ones).
 * With AMPI_GPU_COLL_HOST_MAX=0 every device reduction takes the device
 * path (NCCL or kernels; ops without a device kernel on host copies), which
 * must give the same results.  The placements mix memory kinds across the
 * ranks of one call (host->device: a Reduce's non-roots pass host memory
 * only), so every rank must take the same path whatever its buffers; an
 * error class that differs from the host reference ends the job at once
 * (MPI_Abort), since the other ranks may be waiting in that collective.
 * Every receive buffer is poisoned first. */
#include "gputest.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>

enum kind { K_INT, K_FLT, K_DBL, K_LDBL, K_CFLT, K_CDBL, K_CLDBL, K_BOOL, K_LOGICAL, K_PAIR };

typedef struct {
    MPI_Datatype dt;
    const char *name;
    enum kind kind;
    size_t size; /* bytes of one element */
    /* K_PAIR: the value's kind and bytes, then the second member's (the
     * int index of the C pair types; the 2-types' second value) */
    enum kind vkind, ikind;
    size_t vsize, isize, ioff;
} type_t;

#define PAIR(V, VK)                                                                                                 \
    sizeof(struct { V v; int i; }), VK, K_INT, sizeof(V), sizeof(int), offsetof(struct { V v; int i; }, i)
#define NONPAIR K_INT, K_INT, 0, 0, 0 /* unused */
#define PAIR2(V, VK) 2 * sizeof(V), VK, VK, sizeof(V), sizeof(V), sizeof(V)
static const type_t types[] = {
    {MPI_CHAR, "CHAR", K_INT, 1, NONPAIR},
    {MPI_SIGNED_CHAR, "SIGNED_CHAR", K_INT, 1, NONPAIR},
    {MPI_UNSIGNED_CHAR, "UNSIGNED_CHAR", K_INT, 1, NONPAIR},
    {MPI_BYTE, "BYTE", K_INT, 1, NONPAIR},
    {MPI_SHORT, "SHORT", K_INT, sizeof(short), NONPAIR},
    {MPI_UNSIGNED_SHORT, "UNSIGNED_SHORT", K_INT, sizeof(short), NONPAIR},
    {MPI_INT, "INT", K_INT, sizeof(int), NONPAIR},
    {MPI_UNSIGNED, "UNSIGNED", K_INT, sizeof(int), NONPAIR},
    {MPI_LONG, "LONG", K_INT, sizeof(long), NONPAIR},
    {MPI_UNSIGNED_LONG, "UNSIGNED_LONG", K_INT, sizeof(long), NONPAIR},
    {MPI_LONG_LONG_INT, "LONG_LONG_INT", K_INT, sizeof(long long), NONPAIR},
    {MPI_UNSIGNED_LONG_LONG, "UNSIGNED_LONG_LONG", K_INT, sizeof(long long), NONPAIR},
    {MPI_INT8_T, "INT8_T", K_INT, 1, NONPAIR},
    {MPI_INT16_T, "INT16_T", K_INT, 2, NONPAIR},
    {MPI_INT32_T, "INT32_T", K_INT, 4, NONPAIR},
    {MPI_INT64_T, "INT64_T", K_INT, 8, NONPAIR},
    {MPI_UINT8_T, "UINT8_T", K_INT, 1, NONPAIR},
    {MPI_UINT16_T, "UINT16_T", K_INT, 2, NONPAIR},
    {MPI_UINT32_T, "UINT32_T", K_INT, 4, NONPAIR},
    {MPI_UINT64_T, "UINT64_T", K_INT, 8, NONPAIR},
    {MPI_AINT, "AINT", K_INT, sizeof(MPI_Aint), NONPAIR},
    {MPI_OFFSET, "OFFSET", K_INT, sizeof(MPI_Offset), NONPAIR},
    {MPI_COUNT, "COUNT", K_INT, sizeof(MPI_Count), NONPAIR},
    {MPI_INTEGER, "INTEGER", K_INT, 4, NONPAIR},
    {MPI_FLOAT, "FLOAT", K_FLT, sizeof(float), NONPAIR},
    {MPI_DOUBLE, "DOUBLE", K_DBL, sizeof(double), NONPAIR},
    {MPI_LONG_DOUBLE, "LONG_DOUBLE", K_LDBL, sizeof(long double), NONPAIR},
    {MPI_REAL, "REAL", K_FLT, 4, NONPAIR},
    {MPI_DOUBLE_PRECISION, "DOUBLE_PRECISION", K_DBL, 8, NONPAIR},
    {MPI_C_FLOAT_COMPLEX, "C_FLOAT_COMPLEX", K_CFLT, sizeof(float complex), NONPAIR},
    {MPI_C_DOUBLE_COMPLEX, "C_DOUBLE_COMPLEX", K_CDBL, sizeof(double complex), NONPAIR},
    {MPI_C_LONG_DOUBLE_COMPLEX, "C_LONG_DOUBLE_COMPLEX", K_CLDBL, sizeof(long double complex), NONPAIR},
    {MPI_COMPLEX, "COMPLEX", K_CFLT, 8, NONPAIR},
    {MPI_DOUBLE_COMPLEX, "DOUBLE_COMPLEX", K_CDBL, 16, NONPAIR},
    {MPI_C_BOOL, "C_BOOL", K_BOOL, sizeof(_Bool), NONPAIR},
    {MPI_LOGICAL, "LOGICAL", K_LOGICAL, 4, NONPAIR},
    {MPI_FLOAT_INT, "FLOAT_INT", K_PAIR, PAIR(float, K_FLT)},
    {MPI_DOUBLE_INT, "DOUBLE_INT", K_PAIR, PAIR(double, K_DBL)},
    {MPI_LONG_INT, "LONG_INT", K_PAIR, PAIR(long, K_INT)},
    {MPI_2INT, "2INT", K_PAIR, PAIR(int, K_INT)},
    {MPI_SHORT_INT, "SHORT_INT", K_PAIR, PAIR(short, K_INT)},
    {MPI_LONG_DOUBLE_INT, "LONG_DOUBLE_INT", K_PAIR, PAIR(long double, K_LDBL)},
    {MPI_2INTEGER, "2INTEGER", K_PAIR, PAIR2(int, K_INT)},
    {MPI_2REAL, "2REAL", K_PAIR, PAIR2(float, K_FLT)},
    {MPI_2DOUBLE_PRECISION, "2DOUBLE_PRECISION", K_PAIR, PAIR2(double, K_DBL)},
};
enum { NTYPES = sizeof types / sizeof types[0] };

static const MPI_Op pre_ops[] = {MPI_MAX,  MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR,
                                 MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
static const char *const pre_names[] = {"MAX", "MIN",  "SUM", "PROD", "LAND",   "LOR",
                                        "LXOR", "BAND", "BOR", "BXOR", "MAXLOC", "MINLOC"};
enum { NPRE = sizeof pre_ops / sizeof pre_ops[0] };

/* The placements of the device runs: where the input and the output are. */
enum place { DEV_DEV, DEV_INPLACE, HOST_DEV, DEV_HOST, MANAGED, POOL_DEV, MIXED, NPLACES };
static const char *const place_names[] = {"device->device", "device in place", "host->device", "device->host",
                                          "managed->managed", "pool->device",
                                          "device on even ranks, host on odd ones"};

typedef struct {
    int rank, size, errs;
    size_t cap;
    unsigned char *ref, *got, *data; /* host: reference result, a result read back, this rank's operand */
    unsigned char *hin, *hout;       /* pageable host operands */
    void *din, *dout, *min, *mout, *pin; /* device, managed, pool */
    cudaStream_t stream;
} ctx_t;

/* Operand value of rank r at element i: a small integer, never 0 for
 * products to stay informative, within every type's range. */
static long small(int r, size_t i, unsigned salt)
{
    long v = (long)((r * 7 + (long)i * 3 + (long)salt) % 5) - 2;
    return v == 0 ? 1 : v;
}

static void store_val(enum kind k, size_t vsize, unsigned char *p, long v)
{
    switch (k) {
    case K_INT: {
        long long x = v;
        if (vsize == 1) { signed char c = (signed char)x; memcpy(p, &c, 1); }
        else if (vsize == 2) { short s = (short)x; memcpy(p, &s, 2); }
        else if (vsize == 4) { int i = (int)x; memcpy(p, &i, 4); }
        else { memcpy(p, &x, 8); }
        break;
    }
    case K_FLT: { float f = (float)v; memcpy(p, &f, sizeof f); break; }
    case K_DBL: { double d = (double)v; memcpy(p, &d, sizeof d); break; }
    case K_LDBL: { long double d = (long double)v; memcpy(p, &d, sizeof d); break; }
    case K_CFLT: { float f[2] = {(float)v, (float)(1 - v)}; memcpy(p, f, sizeof f); break; }
    case K_CDBL: { double d[2] = {(double)v, (double)(1 - v)}; memcpy(p, d, sizeof d); break; }
    case K_CLDBL: {
        long double d[2] = {(long double)v, (long double)(1 - v)};
        memcpy(p, d, sizeof d);
        break;
    }
    case K_BOOL: { _Bool b = v > 0; memcpy(p, &b, 1); break; }
    case K_LOGICAL: { int i = v > 0; memcpy(p, &i, 4); break; }
    case K_PAIR: break;
    }
}

/* Element i of rank r's operand of type t. */
static void operand(const type_t *t, unsigned char *buf, size_t n, int r)
{
    memset(buf, 0, n * t->size); /* padding of pairs and long doubles alike on every rank */
    for (size_t i = 0; i < n; i++) {
        unsigned char *e = buf + i * t->size;
        if (t->kind != K_PAIR) {
            store_val(t->kind, t->size, e, small(r, i, 0));
            continue;
        }
        store_val(t->vkind, t->vsize, e, small(r, i, 1));
        /* the index: MAXLOC/MINLOC ties pick the lower one */
        store_val(t->ikind, t->isize, e + t->ioff, r * 3 + (int)(i % 4));
    }
}

/* Whether two values of kind k agree (floating point by value: padding
 * bytes of long double are not data). */
static bool same_val(enum kind k, size_t vsize, const unsigned char *a, const unsigned char *b)
{
    switch (k) {
    case K_FLT: { float x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x == y; }
    case K_DBL: { double x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x == y; }
    case K_LDBL: { long double x, y; memcpy(&x, a, sizeof x); memcpy(&y, b, sizeof y); return x == y; }
    case K_CFLT: return same_val(K_FLT, 4, a, b) && same_val(K_FLT, 4, a + 4, b + 4);
    case K_CDBL: return same_val(K_DBL, 8, a, b) && same_val(K_DBL, 8, a + 8, b + 8);
    case K_CLDBL:
        return same_val(K_LDBL, 0, a, b) &&
               same_val(K_LDBL, 0, a + sizeof(long double), b + sizeof(long double));
    case K_BOOL: return (*a != 0) == (*b != 0);
    default: return memcmp(a, b, vsize) == 0;
    }
}

/* Index of the first element where got and ref differ, or -1. */
static long differs(const type_t *t, const unsigned char *got, const unsigned char *ref, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char *g = got + i * t->size, *w = ref + i * t->size;
        bool ok = t->kind != K_PAIR ? same_val(t->kind, t->size, g, w)
                                    : same_val(t->vkind, t->vsize, g, w) &&
                                          same_val(t->ikind, t->isize, g + t->ioff, w + t->ioff);
        if (!ok)
            return (long)i;
    }
    return -1;
}

/* ---- user ops ---- */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}
/* inout = in o inout for affine maps x -> a x + b stored as MPI_2INT
 * (a, b): associative, not commutative. */
static void user_compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *f = in;
    unsigned *g = inout;
    for (int i = 0; i < *len; i++) {
        unsigned fa = f[2 * i], fb = f[2 * i + 1], ga = g[2 * i], gb = g[2 * i + 1];
        g[2 * i] = fa * ga;
        g[2 * i + 1] = fa * gb + fb;
    }
}

/* ---- the runs ---- */
static void poison_dev(void *d, size_t n) { GT_CUDA(cudaMemset(d, GT_POISON, n)); gt_sync(); }
static void to_dev(void *d, const void *h, size_t n) { GT_CUDA(cudaMemcpy(d, h, n, cudaMemcpyDefault)); gt_sync(); }
static void from_any(void *h, const void *d, size_t n) { GT_CUDA(cudaMemcpy(h, d, n, cudaMemcpyDefault)); }

static int err_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* One call: reduce (root >= 0: MPI_Reduce to root) n elements of t with op
 * from buffers placed as p; compares with the reference (ref_cls: its
 * error class).  Returns the number of failures. */
static int device_run(ctx_t *c, const type_t *t, MPI_Op op, const char *opname, size_t n, int root, enum place p,
                      int ref_cls)
{
    size_t bytes = n * t->size;
    void *in, *out;
    switch (p) {
    case DEV_DEV: in = c->din; out = c->dout; break;
    case DEV_INPLACE: in = MPI_IN_PLACE; out = c->dout; break;
    case HOST_DEV: in = c->hin; out = c->dout; break;
    case DEV_HOST: in = c->din; out = c->hout; break;
    case MANAGED: in = c->min; out = c->mout; break;
    case MIXED:
        in = c->rank % 2 ? (void *)c->hin : c->din;
        out = c->rank % 2 ? (void *)c->hout : c->dout;
        break;
    default: in = c->pin; out = c->dout; break;
    }
    bool am_root = root < 0 || root == c->rank;
    if (p == DEV_INPLACE && !am_root) /* MPI_IN_PLACE is the root's alone */
        in = c->din;
    void *src = in == MPI_IN_PLACE ? out : in;
    to_dev(src, c->data, bytes);
    if (out != src) {
        if (p == DEV_HOST || (p == MIXED && c->rank % 2))
            memset(out, GT_POISON, bytes);
        else
            poison_dev(out, bytes);
    }
    int rc = root < 0 ? MPI_Allreduce(in, out, (int)n, t->dt, op, MPI_COMM_WORLD)
                      : MPI_Reduce(in, out, (int)n, t->dt, op, root, MPI_COMM_WORLD);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s n=%zu %s", root < 0 ? "Allreduce" : "Reduce", t->name, opname, n,
             place_names[p]);
    if (err_class(rc) != ref_cls) {
        /* a collective that failed on some ranks leaves the others waiting
         * in it: end the job now rather than at the launcher's timeout */
        gt_fail(c->rank, "%s: error class %d, on host buffers %d; ending the job", what, err_class(rc), ref_cls);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rc != MPI_SUCCESS || !am_root)
        return 0;
    from_any(c->got, out, bytes);
    long i = differs(t, c->got, c->ref, n);
    if (i >= 0)
        return gt_fail(c->rank, "%s: element %ld differs from the result on host buffers", what, i);
    return 0;
}

/* The host reference, then every placement. */
static void one_case(ctx_t *c, const type_t *t, MPI_Op op, const char *opname, size_t n, int root)
{
    operand(t, c->data, n, c->rank);
    memcpy(c->hin, c->data, n * t->size);
    memset(c->ref, GT_POISON, n * t->size);
    int rc = root < 0 ? MPI_Allreduce(c->hin, c->ref, (int)n, t->dt, op, MPI_COMM_WORLD)
                      : MPI_Reduce(c->hin, c->ref, (int)n, t->dt, op, root, MPI_COMM_WORLD);
    int cls = err_class(rc);
    for (int p = 0; p < NPLACES; p++)
        c->errs += device_run(c, t, op, opname, n, root, (enum place)p, cls);
}

/* The non-commutative user op's result, folded here in rank order. */
static void check_compose_ref(ctx_t *c, size_t n)
{
    const type_t *t;
    for (t = types; t->dt != MPI_2INT; t++)
        ;
    unsigned char *tmp = gt_malloc(n * t->size);
    unsigned *want = gt_malloc(n * 2 * sizeof *want);
    for (int r = 0; r < c->size; r++) {
        operand(t, tmp, n, r);
        const unsigned *f = (const unsigned *)tmp;
        for (size_t i = 0; i < n; i++) {
            if (r == 0) {
                want[2 * i] = f[2 * i];
                want[2 * i + 1] = f[2 * i + 1];
                continue;
            }
            /* want = want o f_r: rank 0's map outermost */
            unsigned ga = f[2 * i], gb = f[2 * i + 1], fa = want[2 * i], fb = want[2 * i + 1];
            want[2 * i] = fa * ga;
            want[2 * i + 1] = fa * gb + fb;
        }
    }
    if (memcmp(want, c->ref, n * 2 * sizeof *want) != 0)
        c->errs += gt_fail(c->rank, "Allreduce 2INT compose n=%zu: the host result is not the rank-order fold", n);
    free(tmp);
    free(want);
}

static void bcasts(ctx_t *c)
{
    static const char *const kinds[] = {"device", "managed", "device on even ranks, host on odd ones"};
    const size_t sizes[] = {1, 8, 100, 8192, 8193, 65536};
    int root = c->size - 1;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (int p = 0; p < 3; p++) { /* device, managed, mixed */
            void *buf = p == 1 ? c->mout : p == 2 && c->rank % 2 ? (void *)c->hout : c->dout;
            uint64_t seed = gt_seed(7, (uint64_t)root, n, (uint64_t)p);
            if (c->rank == root) {
                gt_pattern(c->data, n, seed);
                to_dev(buf, c->data, n);
            } else if (buf == c->hout) {
                memset(buf, GT_POISON, n);
            } else {
                poison_dev(buf, n);
            }
            c->errs += GT_MPI(c->rank, "Bcast", MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
            from_any(c->got, buf, n);
            int g = 0, w = 0;
            long off = gt_pattern_diff(c->got, n, seed, &g, &w);
            if (off >= 0)
                c->errs += gt_fail(c->rank, "Bcast %zu B (%s): byte %ld is %d, expected %d", n, kinds[p], off, g,
                                   w);
        }
    }
}

/* Either side of the default limit for host copies (1 KiB) and of the
 * limit it had before (64 KiB), and above them the ops without a device
 * kernel (a user op, long double), which run on host copies of the device
 * operands there. */
static void limit_edges(ctx_t *c, MPI_Op usum)
{
    const type_t *t, *tld;
    for (t = types; t->dt != MPI_INT; t++)
        ;
    for (tld = types; tld->dt != MPI_LONG_DOUBLE; tld++)
        ;
    static const size_t counts[] = {256, 257, 16384, 16385}; /* MPI_INT: 1 KiB and 64 KiB, and 4 bytes more */
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        size_t n = counts[k];
        one_case(c, t, MPI_SUM, "SUM", n, -1);
        one_case(c, t, MPI_SUM, "SUM", n, 0);
        one_case(c, t, usum, "user sum", n, -1);
        one_case(c, t, usum, "user sum", n, c->size - 1);
    }
    size_t nld = 65536 / sizeof(long double) + 1;
    one_case(c, tld, MPI_SUM, "SUM", nld, -1);
    one_case(c, tld, MPI_MAX, "MAX", nld, c->size / 2);
}

int main(int argc, char **argv)
{
    ctx_t c = {0};
    gt_init(&argc, &argv, &c.rank, &c.size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    c.cap = 65536 + 64;
    c.ref = gt_malloc(c.cap);
    c.got = gt_malloc(c.cap);
    c.data = gt_malloc(c.cap);
    c.hin = gt_malloc(c.cap);
    c.hout = gt_malloc(c.cap);
    GT_CUDA(cudaMalloc(&c.din, c.cap));
    GT_CUDA(cudaMalloc(&c.dout, c.cap));
    GT_CUDA(cudaMallocManaged(&c.min, c.cap, cudaMemAttachGlobal));
    GT_CUDA(cudaMallocManaged(&c.mout, c.cap, cudaMemAttachGlobal));
    GT_CUDA(cudaStreamCreate(&c.stream));
    GT_CUDA(cudaMallocAsync(&c.pin, c.cap, c.stream));
    GT_CUDA(cudaStreamSynchronize(c.stream));

    const size_t counts[] = {1, 5, 37};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        for (int ti = 0; ti < NTYPES; ti++)
            for (int o = 0; o < NPRE; o++) {
                one_case(&c, &types[ti], pre_ops[o], pre_names[o], counts[k], -1);
                one_case(&c, &types[ti], pre_ops[o], pre_names[o], counts[k], c.size - 1);
            }

    MPI_Op usum, ucompose;
    MPI_Op_create(user_sum, 1, &usum);
    MPI_Op_create(user_compose, 0, &ucompose);
    const type_t *tint = types, *t2int = types;
    while (tint->dt != MPI_INT) tint++;
    while (t2int->dt != MPI_2INT) t2int++;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        one_case(&c, tint, usum, "user sum", counts[k], -1);
        one_case(&c, tint, usum, "user sum", counts[k], 0);
        one_case(&c, t2int, ucompose, "user compose", counts[k], -1);
        check_compose_ref(&c, counts[k]);
        one_case(&c, t2int, ucompose, "user compose", counts[k], c.size / 2);
    }
    limit_edges(&c, usum);
    bcasts(&c);
    MPI_Op_free(&usum);
    MPI_Op_free(&ucompose);

    GT_CUDA(cudaFreeAsync(c.pin, c.stream));
    GT_CUDA(cudaStreamSynchronize(c.stream));
    GT_CUDA(cudaStreamDestroy(c.stream));
    GT_CUDA(cudaFree(c.din));
    GT_CUDA(cudaFree(c.dout));
    GT_CUDA(cudaFree(c.min));
    GT_CUDA(cudaFree(c.mout));
    free(c.ref); free(c.got); free(c.data); free(c.hin); free(c.hout);
    return gt_finish(c.rank, c.errs, "gpu_smallred");
}
