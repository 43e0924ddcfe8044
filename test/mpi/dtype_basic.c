/* dtype_basic.c - every type constructor in communication: each rank sends
 * to the next one (to itself with one rank)
 *   1. with the derived type, received as MPI_INT: the packed order;
 *   2. as MPI_INT, received with the derived type: data lands at the type
 *      map's positions and every gap keeps its sentinel;
 *   3. derived type on both sides;
 *   4. MPI_Pack / MPI_Unpack round trip, Pack_size, Get_count, Get_elements.
 * The expected positions (in ints) are computed here with plain loops, not
 * by the library. */
#include "mpitest.h"

#define SENTINEL (-777)
enum { MAXPOS = 64 };

typedef struct {
    const char *name;
    MPI_Datatype type;
    int n;           /* ints in one element */
    int pos[MAXPOS]; /* their positions in type-map order, element 0 */
    int extent;      /* ints between consecutive elements */
    int count;       /* elements per message */
} layout_t;

static void add(layout_t *L, int p) { L->pos[L->n++] = p; }

/* Builds case `which` (0..); returns 0 past the last one. */
static int make_case(int which, layout_t *L)
{
    memset(L, 0, sizeof *L);
    MPI_Datatype tmp;
    L->count = 2;
    switch (which) {
    case 0:
        L->name = "contiguous(5)";
        MPI_Type_contiguous(5, MPI_INT, &L->type);
        for (int i = 0; i < 5; i++)
            add(L, i);
        L->extent = 5, L->count = 3;
        break;
    case 1:
        L->name = "vector(3,2,4)";
        MPI_Type_vector(3, 2, 4, MPI_INT, &L->type);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++)
                add(L, 4 * i + j);
        L->extent = 10;
        break;
    case 2:
        L->name = "hvector(3,2,20B)";
        MPI_Type_create_hvector(3, 2, 5 * sizeof(int), MPI_INT, &L->type);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++)
                add(L, 5 * i + j);
        L->extent = 12;
        break;
    case 3: {
        L->name = "indexed";
        int bl[] = { 2, 1, 3 }, disp[] = { 5, 0, 9 };
        MPI_Type_indexed(3, bl, disp, MPI_INT, &L->type);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < bl[i]; j++)
                add(L, disp[i] + j);
        L->extent = 12;
        break;
    }
    case 4: {
        L->name = "create_hindexed";
        int bl[] = { 1, 2 };
        MPI_Aint disp[] = { 3 * sizeof(int), 7 * sizeof(int) };
        MPI_Type_create_hindexed(2, bl, disp, MPI_INT, &L->type);
        add(L, 3), add(L, 7), add(L, 8);
        L->extent = 6; /* lb 3 ints, ub 9 ints */
        break;
    }
    case 5: {
        L->name = "indexed_block";
        int disp[] = { 6, 0, 3 };
        MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &L->type);
        for (int i = 0; i < 3; i++)
            add(L, disp[i]), add(L, disp[i] + 1);
        L->extent = 8;
        break;
    }
    case 6: {
        L->name = "hindexed_block";
        MPI_Aint disp[] = { 0, 5 * sizeof(int) };
        MPI_Type_create_hindexed_block(2, 3, disp, MPI_INT, &L->type);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                add(L, 5 * i + j);
        L->extent = 8;
        break;
    }
    case 7: {
        L->name = "struct";
        int bl[] = { 2, 1 };
        MPI_Aint disp[] = { 0, 4 * sizeof(int) };
        MPI_Datatype types[] = { MPI_INT, MPI_INT };
        MPI_Type_create_struct(2, bl, disp, types, &L->type);
        add(L, 0), add(L, 1), add(L, 4);
        L->extent = 5, L->count = 3;
        break;
    }
    case 8:
        L->name = "resized(vector)";
        MPI_Type_vector(2, 1, 2, MPI_INT, &tmp);
        MPI_Type_create_resized(tmp, 0, 4 * sizeof(int), &L->type);
        MPI_Type_free(&tmp);
        add(L, 0), add(L, 2);
        L->extent = 4, L->count = 3;
        break;
    case 9: {
        L->name = "subarray C";
        int sizes[] = { 4, 5 }, sub[] = { 2, 3 }, starts[] = { 1, 1 };
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &L->type);
        for (int r = 1; r < 3; r++)
            for (int c = 1; c < 4; c++)
                add(L, 5 * r + c);
        L->extent = 20;
        break;
    }
    case 10: {
        L->name = "subarray Fortran";
        int sizes[] = { 4, 5 }, sub[] = { 2, 3 }, starts[] = { 1, 1 };
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &L->type);
        for (int j = 1; j < 4; j++) /* the first index varies fastest */
            for (int i = 1; i < 3; i++)
                add(L, i + 4 * j);
        L->extent = 20, L->count = 1;
        break;
    }
    case 11:
        L->name = "dup(vector)";
        MPI_Type_vector(2, 2, 3, MPI_INT, &tmp);
        MPI_Type_dup(tmp, &L->type);
        MPI_Type_free(&tmp);
        add(L, 0), add(L, 1), add(L, 3), add(L, 4);
        L->extent = 5;
        break;
    case 12: /* the inner type is freed before use: the outer keeps it */
        L->name = "contiguous(vector)";
        MPI_Type_vector(2, 1, 3, MPI_INT, &tmp);
        MPI_Type_contiguous(2, tmp, &L->type);
        MPI_Type_free(&tmp);
        add(L, 0), add(L, 3), add(L, 4), add(L, 7);
        L->extent = 8;
        break;
    case 13:
        L->name = "vector negative stride";
        MPI_Type_vector(3, 1, -2, MPI_INT, &L->type);
        add(L, 0), add(L, -2), add(L, -4);
        L->extent = 5; /* lb -4 ints, ub 1 int */
        break;
    default:
        return 0;
    }
    MPI_Type_commit(&L->type);
    return 1;
}

static int at(const layout_t *L, int k) { return L->pos[k % L->n] + (k / L->n) * L->extent; }

static int val(int rank, int i, int key)
{
    return (int)(mt_hash((uint32_t)rank, (uint32_t)(i + 1000), (uint32_t)key, 7) & 0x7fffffff);
}

/* Positions of the buffer that are not in the type map keep SENTINEL. */
static int check_gaps(int rank, const layout_t *L, const int *buf, int lo, int hi, const char *what)
{
    int errs = 0, total = L->n * L->count;
    for (int p = lo; p < hi && errs < 3; p++) {
        int used = 0;
        for (int k = 0; k < total && !used; k++)
            used = at(L, k) == p;
        if (!used && buf[p] != SENTINEL)
            errs += mt_fail(rank, "%s %s: gap %d overwritten (%d)", L->name, what, p, buf[p]);
    }
    return errs;
}

static int run_case(int rank, int size, const layout_t *L, int tag)
{
    int errs = 0, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int total = L->n * L->count, lo = 0, hi = 0;
    for (int k = 0; k < total; k++) {
        lo = at(L, k) < lo ? at(L, k) : lo;
        hi = at(L, k) + 1 > hi ? at(L, k) + 1 : hi;
    }
    int *smem = mt_malloc((size_t)(hi - lo) * sizeof(int)), *rmem = mt_malloc((size_t)(hi - lo) * sizeof(int));
    int *src = smem - lo, *dst = rmem - lo; /* buf pointers: position 0 of element 0 */
    int *packed = mt_malloc((size_t)total * sizeof(int)), *mine = mt_malloc((size_t)total * sizeof(int));
    MPI_Request rq[2];
    MPI_Status st[2];
    for (int p = lo; p < hi; p++)
        src[p] = val(rank, p, 1);

    /* 1. derived -> MPI_INT */
    MPI_Irecv(packed, total, MPI_INT, prev, tag, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(src, L->count, L->type, next, tag, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, st);
    for (int k = 0; k < total; k++)
        if (packed[k] != val(prev, at(L, k), 1)) {
            errs += mt_fail(rank, "%s -> MPI_INT: item %d is %d", L->name, k, packed[k]);
            break;
        }
    errs += mt_check_status(rank, L->name, &st[0], MPI_INT, prev, tag, total);

    /* 2. MPI_INT -> derived */
    for (int k = 0; k < total; k++)
        mine[k] = val(rank, k, 2);
    for (int p = lo; p < hi; p++)
        dst[p] = SENTINEL;
    MPI_Irecv(dst, L->count, L->type, prev, tag + 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(mine, total, MPI_INT, next, tag + 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, st);
    for (int k = 0; k < total; k++)
        if (dst[at(L, k)] != val(prev, k, 2)) {
            errs += mt_fail(rank, "MPI_INT -> %s: item %d is %d", L->name, k, dst[at(L, k)]);
            break;
        }
    errs += check_gaps(rank, L, dst, lo, hi, "MPI_INT -> derived");
    int n = -1;
    MPI_Get_count(&st[0], L->type, &n);
    if (n != L->count)
        errs += mt_fail(rank, "%s: Get_count %d, expected %d", L->name, n, L->count);
    MPI_Get_elements(&st[0], L->type, &n);
    if (n != total)
        errs += mt_fail(rank, "%s: Get_elements %d, expected %d", L->name, n, total);

    /* 3. derived -> derived */
    for (int p = lo; p < hi; p++)
        dst[p] = SENTINEL;
    MPI_Irecv(dst, L->count, L->type, prev, tag + 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(src, L->count, L->type, next, tag + 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < total; k++)
        if (dst[at(L, k)] != val(prev, at(L, k), 1)) {
            errs += mt_fail(rank, "%s -> %s: item %d is %d", L->name, L->name, k, dst[at(L, k)]);
            break;
        }
    errs += check_gaps(rank, L, dst, lo, hi, "derived -> derived");

    /* 4. Pack / Unpack */
    int psize = -1, position = 0, tsize = -1;
    MPI_Pack_size(L->count, L->type, MPI_COMM_WORLD, &psize);
    MPI_Type_size(L->type, &tsize);
    if (psize < total * (int)sizeof(int) || tsize != L->n * (int)sizeof(int))
        errs += mt_fail(rank, "%s: Pack_size %d, Type_size %d", L->name, psize, tsize);
    char *pbuf = mt_malloc((size_t)psize);
    MPI_Pack(src, L->count, L->type, pbuf, psize, &position, MPI_COMM_WORLD);
    if (position != total * (int)sizeof(int))
        errs += mt_fail(rank, "%s: Pack position %d", L->name, position);
    for (int k = 0; k < total; k++) {
        int v;
        memcpy(&v, pbuf + k * sizeof(int), sizeof v);
        if (v != val(rank, at(L, k), 1)) {
            errs += mt_fail(rank, "%s: packed item %d is %d", L->name, k, v);
            break;
        }
    }
    for (int p = lo; p < hi; p++)
        dst[p] = SENTINEL;
    position = 0;
    MPI_Unpack(pbuf, psize, &position, dst, L->count, L->type, MPI_COMM_WORLD);
    for (int k = 0; k < total; k++)
        if (dst[at(L, k)] != src[at(L, k)]) {
            errs += mt_fail(rank, "%s: unpacked item %d is %d", L->name, k, dst[at(L, k)]);
            break;
        }
    errs += check_gaps(rank, L, dst, lo, hi, "Unpack");
    MPI_Aint lb, extent;
    MPI_Type_get_extent(L->type, &lb, &extent);
    if (extent != L->extent * (MPI_Aint)sizeof(int))
        errs += mt_fail(rank, "%s: extent %ld, expected %ld", L->name, (long)extent,
                        (long)(L->extent * sizeof(int)));
    free(pbuf);
    free(smem);
    free(rmem);
    free(packed);
    free(mine);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    layout_t L;
    for (int c = 0; make_case(c, &L); c++) {
        errs += run_case(rank, size, &L, 10 * c);
        MPI_Type_free(&L.type);
        if (L.type != MPI_DATATYPE_NULL)
            errs += mt_fail(rank, "Type_free left the handle set");
    }
    mt_finish(errs, "dtype_basic OK");
    MPI_Finalize();
    return 0;
}
