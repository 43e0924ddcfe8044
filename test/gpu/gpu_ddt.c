/* gpu_ddt.c - derived datatypes on device buffers, point to point.
 *
 * Types: vectors of single doubles (a column: many 8-byte blocks) and of
 * 64-double rows (512-byte blocks at one stride: the copy engine's 2D
 * case), the three faces of a 3D grid as MPI_Type_create_subarray (x: one
 * double per row, y: rows of nx doubles, z: contiguous), an hindexed type
 * of uneven blocks, a struct of an int and three doubles with gaps,
 * resized, sent 3 at a time, a vector with a negative stride, a sub-box of
 * a 3D grid sent 2 at a time and a thick face (two rows a plane): the copy
 * engine's 3D case at n=64.
 *
 * Each rank sends to the rank `shift` places on and receives from the rank
 * `shift` places back (shift 1 and size/2: ranks of the same process and of
 * another), in four placements: device type -> device type, device type ->
 * host contiguous bytes, host bytes -> device type, and device type -> host
 * type; then MPI_Sendrecv_replace on a device buffer, a persistent receive
 * started twice, and a receive posted for more elements than are sent
 * (only the sent prefix of the type map may change).  The whole receive
 * buffer is compared with what the host datatype engine (MPI_Pack and
 * MPI_Unpack of host copies) says it must hold: data where the type map
 * is, the poison everywhere else.
 */
#include "gputest.h"

enum { T_COLUMN, T_ROWS, T_FACE_X, T_FACE_Y, T_FACE_Z, T_HINDEXED, T_STRUCT, T_NEGVEC, T_BOX, T_THICK, T_COUNT };
static const char *const type_name[T_COUNT] = {"vector of doubles", "vector of 512 B rows", "subarray x-face",
                                               "subarray y-face", "subarray z-face", "hindexed uneven",
                                               "struct int+3 doubles (resized)", "vector, negative stride",
                                               "subarray sub-box, 2 at a time", "subarray thick y-face"};

typedef struct {
    MPI_Datatype t;
    int count;     /* elements per message */
    size_t span;   /* bytes of buffer the message covers, from buf */
    ptrdiff_t at;  /* offset of buf in the allocation (negative strides need room before) */
} ttype;

typedef struct {
    int rank, size;
    unsigned char *stage;
    size_t stage_cap;
} ctx_t;

static ttype make_type(int which, int n)
{
    ttype x = {MPI_DATATYPE_NULL, 1, 0, 0};
    MPI_Aint lb, extent;
    switch (which) {
    case T_COLUMN: /* n*n doubles, one per row of n */
        MPI_Type_vector(n * n, 1, n, MPI_DOUBLE, &x.t);
        break;
    case T_ROWS: /* 32n rows of 64 doubles, 128 doubles apart (1 MiB at n=64: the IPC route pushes) */
        MPI_Type_vector(32 * n, 64, 128, MPI_DOUBLE, &x.t);
        break;
    case T_FACE_X:
    case T_FACE_Y:
    case T_FACE_Z: {
        int sizes[3] = {n, n, n}, sub[3] = {n, n, n}, start[3] = {0, 0, 0};
        int d = which - T_FACE_X; /* fixed index along dimension 2 - d (C order: x is the last) */
        sub[2 - d] = 1;
        start[2 - d] = n / 2;
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &x.t);
        break;
    }
    case T_HINDEXED: {
        int lens[5] = {3, 100, 1, 700, 17};
        MPI_Aint displs[5] = {5, 64, 1000, 2049, 9000};
        MPI_Type_create_hindexed(5, lens, displs, MPI_BYTE, &x.t);
        x.count = 2;
        break;
    }
    case T_STRUCT: {
        int lens[2] = {1, 3};
        MPI_Aint displs[2] = {0, 16};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, s;
        MPI_Type_create_struct(2, lens, displs, types, &s);
        MPI_Type_create_resized(s, 0, 48, &x.t);
        MPI_Type_free(&s);
        x.count = 3;
        break;
    }
    case T_NEGVEC:
        MPI_Type_vector(n, 2, -4, MPI_DOUBLE, &x.t);
        break;
    case T_BOX: { /* [n/2][n/2][n/2 + 1] at (1, 2, 3): planes of rows (at n=64, 264 B: the 3D copy) */
        int sizes[3] = {n, n, n}, sub[3] = {n / 2, n / 2, n / 2 + 1}, start[3] = {1, 2, 3};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &x.t);
        x.count = 2; /* the second element one grid further: one copy each */
        break;
    }
    case T_THICK: { /* [n][2][n-2] at (0, n/2, 1): two rows a plane */
        int sizes[3] = {n, n, n}, sub[3] = {n, 2, n - 2}, start[3] = {0, n / 2, 1};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &x.t);
        break;
    }
    }
    MPI_Type_commit(&x.t);
    MPI_Type_get_extent(x.t, &lb, &extent);
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(x.t, &tlb, &text);
    /* bytes from the lowest to the highest byte any element touches */
    ptrdiff_t lo = tlb, hi = tlb + text + (ptrdiff_t)(x.count - 1) * extent;
    if (extent < 0)
        lo += (ptrdiff_t)(x.count - 1) * extent;
    x.at = lo < 0 ? -lo : 0;
    x.span = (size_t)(hi - (lo < 0 ? lo : 0));
    return x;
}

/* The host image of a send buffer: every byte a pattern of (src, dst, case). */
static void send_image(unsigned char *img, size_t n, int src, int dst, int cs)
{
    gt_pattern(img, n, gt_seed((uint64_t)src, (uint64_t)dst, (uint64_t)cs, 77));
}

static void to_dev(void *d, const void *h, size_t n)
{
    GT_CUDA(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    gt_sync();
}

static void from_dev(void *h, const void *d, size_t n)
{
    GT_CUDA(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
}

enum { P_DD, P_DH, P_HD, P_DT_HT, P_REPLACE, P_PERSIST, P_SHORT, P_COUNT };
static const char *const pl_name[P_COUNT] = {"device type -> device type", "device type -> host bytes",
                                             "host bytes -> device type", "device type -> host type",
                                             "Sendrecv_replace on device", "persistent receive, twice",
                                             "receive longer than the message"};

static int compare(ctx_t *c, const char *what, const unsigned char *got, const unsigned char *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            return gt_fail(c->rank, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, got[i], want[i]);
    return 0;
}

static int one_case(ctx_t *c, int which, int n, int pl, int shift, int cs)
{
    int dst = (c->rank + shift) % c->size, src = (c->rank - shift + c->size) % c->size;
    ttype x = make_type(which, n);
    int tsize;
    MPI_Type_size(x.t, &tsize);
    size_t packed = (size_t)tsize * (size_t)x.count, alloc = x.at + x.span + GT_GUARD;
    char what[200];
    snprintf(what, sizeof what, "%s, n=%d, %s, shift %d (rank %d -> %d)", type_name[which], n, pl_name[pl], shift,
             src, c->rank);
    int errs = 0;
    unsigned char *simg = gt_malloc(alloc), *rimg = gt_malloc(alloc), *want = gt_malloc(alloc);
    unsigned char *pk = gt_malloc(packed + 1), *got = gt_malloc(alloc > packed ? alloc : packed + 1);
    unsigned char *sdev, *rdev;
    GT_CUDA(cudaMalloc((void **)&sdev, alloc));
    GT_CUDA(cudaMalloc((void **)&rdev, alloc));

    /* what we send, and what our source sends us */
    send_image(simg, alloc, c->rank, dst, cs);
    to_dev(sdev, simg, alloc);
    send_image(rimg, alloc, src, c->rank, cs);
    int pos = 0;
    MPI_Pack(rimg + x.at, x.count, x.t, pk, (int)packed + 1, &pos, MPI_COMM_SELF);
    memset(want, GT_POISON, alloc);
    GT_CUDA(cudaMemset(rdev, GT_POISON, alloc));
    gt_sync();
    unsigned char *rhost = gt_malloc(alloc);
    memset(rhost, GT_POISON, alloc);
    MPI_Status st;
    int tag = 100 + cs % 1000;
    switch (pl) {
    case P_DD:
    case P_DT_HT:
    case P_SHORT: {
        int rcount = pl == P_SHORT ? x.count + 1 : x.count;
        if (pl == P_SHORT) { /* room for one more element */
            MPI_Aint lb, ext;
            MPI_Type_get_extent(x.t, &lb, &ext);
            GT_CUDA(cudaFree(rdev));
            size_t more = alloc + (size_t)(ext < 0 ? -ext : ext);
            GT_CUDA(cudaMalloc((void **)&rdev, more));
            GT_CUDA(cudaMemset(rdev, GT_POISON, more));
            gt_sync();
        }
        void *rb = pl == P_DT_HT ? (void *)(rhost + x.at) : (void *)(rdev + x.at);
        errs += GT_MPI(c->rank, what,
                       MPI_Sendrecv(sdev + x.at, x.count, x.t, dst, tag, rb, rcount, x.t, src, tag, MPI_COMM_WORLD,
                                    &st));
        errs += gt_check_status(c->rank, what, &st, x.t, src, tag, x.count);
        pos = 0;
        MPI_Unpack(pk, (int)packed, &pos, want + x.at, x.count, x.t, MPI_COMM_SELF);
        if (pl == P_DT_HT)
            memcpy(got, rhost, alloc);
        else
            from_dev(got, rdev, alloc);
        errs += compare(c, what, got, want, alloc);
        break;
    }
    case P_DH: { /* received as bytes on the host: the packed stream itself */
        errs += GT_MPI(c->rank, what,
                       MPI_Sendrecv(sdev + x.at, x.count, x.t, dst, tag, got, (int)packed, MPI_BYTE, src, tag,
                                    MPI_COMM_WORLD, &st));
        errs += gt_check_status(c->rank, what, &st, MPI_BYTE, src, tag, (int)packed);
        errs += compare(c, what, got, pk, packed);
        break;
    }
    case P_HD: { /* bytes from the host, scattered into our device type */
        unsigned char *spk = gt_malloc(packed + 1);
        pos = 0;
        MPI_Pack(simg + x.at, x.count, x.t, spk, (int)packed + 1, &pos, MPI_COMM_SELF);
        errs += GT_MPI(c->rank, what,
                       MPI_Sendrecv(spk, (int)packed, MPI_BYTE, dst, tag, rdev + x.at, x.count, x.t, src, tag,
                                    MPI_COMM_WORLD, &st));
        free(spk);
        pos = 0;
        MPI_Unpack(pk, (int)packed, &pos, want + x.at, x.count, x.t, MPI_COMM_SELF);
        from_dev(got, rdev, alloc);
        errs += compare(c, what, got, want, alloc);
        break;
    }
    case P_REPLACE: { /* our buffer goes out and our source's comes in, in place */
        errs += GT_MPI(c->rank, what,
                       MPI_Sendrecv_replace(sdev + x.at, x.count, x.t, dst, tag, src, tag, MPI_COMM_WORLD, &st));
        memcpy(want, simg, alloc); /* the gaps keep our own bytes */
        pos = 0;
        MPI_Unpack(pk, (int)packed, &pos, want + x.at, x.count, x.t, MPI_COMM_SELF);
        from_dev(got, sdev, alloc);
        errs += compare(c, what, got, want, alloc);
        break;
    }
    case P_PERSIST: {
        MPI_Request rq[2];
        errs += GT_MPI(c->rank, what, MPI_Recv_init(rdev + x.at, x.count, x.t, src, tag, MPI_COMM_WORLD, &rq[0]));
        errs += GT_MPI(c->rank, what, MPI_Send_init(sdev + x.at, x.count, x.t, dst, tag, MPI_COMM_WORLD, &rq[1]));
        pos = 0;
        MPI_Unpack(pk, (int)packed, &pos, want + x.at, x.count, x.t, MPI_COMM_SELF);
        for (int round = 0; round < 2; round++) {
            GT_CUDA(cudaMemset(rdev, GT_POISON, alloc));
            gt_sync();
            errs += GT_MPI(c->rank, what, MPI_Startall(2, rq));
            errs += GT_MPI(c->rank, what, MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            from_dev(got, rdev, alloc);
            errs += compare(c, what, got, want, alloc);
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        break;
    }
    }
    GT_CUDA(cudaFree(sdev));
    GT_CUDA(cudaFree(rdev));
    free(simg);
    free(rimg);
    free(want);
    free(pk);
    free(got);
    free(rhost);
    MPI_Type_free(&x.t);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    gt_init(&argc, &argv, &rank, &size);
    ctx_t c = {rank, size, NULL, 0};
    int shifts[2] = {size > 1 ? 1 : 0, size / 2}, nshifts = size / 2 > 1 ? 2 : 1;
    const int ns[] = {8, 64};
    int cs = 0, cases = 0;
    for (int ni = 0; ni < 2; ni++)
        for (int which = 0; which < T_COUNT; which++)
            for (int pl = 0; pl < P_COUNT; pl++)
                for (int h = 0; h < nshifts; h++) {
                    errs += one_case(&c, which, ns[ni], pl, shifts[h], cs++);
                    cases++;
                }
    if (rank == 0)
        gt_note("gpu_ddt: %d cases per rank", cases);
    return gt_finish(rank, errs, "gpu_ddt");
}
