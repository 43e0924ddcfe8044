/* Unit test of datatype flattening (src/datatype): merged block lists,
 * bounds, contiguity, basic-element runs, pack/unpack, reference counts.
 * Calls the constructors directly: none of them needs MPI_Init. */
#include "datatype/dt.h"

#include <stdio.h>
#include <string.h>

#include "unit_check.h"

/* Compares t's block list with n (offset, length) pairs. */
static int blocks_are(MPI_Datatype t, int n, const long *pairs)
{
    const dt_type_t *d = dt_derived(t);
    if (!d || d->nblocks != (size_t)n)
        return 0;
    for (int i = 0; i < n; i++)
        if (d->blocks[i].off != pairs[2 * i] || d->blocks[i].len != (size_t)pairs[2 * i + 1])
            return 0;
    return 1;
}
#define BLOCKS(t, ...) \
    blocks_are(t, (int)(sizeof((long[]){ __VA_ARGS__ }) / sizeof(long) / 2), (long[]){ __VA_ARGS__ })

static void bounds(MPI_Datatype t, long lb, long extent, long true_lb, long true_extent)
{
    MPI_Aint a, b;
    CHECK(PMPI_Type_get_extent(t, &a, &b) == MPI_SUCCESS && a == lb && b == extent);
    CHECK(PMPI_Type_get_true_extent(t, &a, &b) == MPI_SUCCESS && a == true_lb && b == true_extent);
}

static void test_simple(void)
{
    MPI_Datatype c, v, dense, idx, out_of_order;
    CHECK(PMPI_Type_contiguous(4, MPI_INT, &c) == MPI_SUCCESS);
    CHECK(BLOCKS(c, 0, 16) && dt_derived(c)->contig && !dt_valid(c)); /* uncommitted */
    CHECK(PMPI_Type_commit(&c) == MPI_SUCCESS && dt_valid(c) && dt_size(c) == 16 && dt_extent(c) == 16);

    CHECK(PMPI_Type_vector(3, 2, 4, MPI_INT, &v) == MPI_SUCCESS && PMPI_Type_commit(&v) == MPI_SUCCESS);
    CHECK(BLOCKS(v, 0, 8, 16, 8, 32, 8) && !dt_is_contig(v) && dt_size(v) == 24);
    bounds(v, 0, 40, 0, 40);

    /* stride == blocklength: the blocks merge into one */
    CHECK(PMPI_Type_vector(3, 4, 4, MPI_INT, &dense) == MPI_SUCCESS && PMPI_Type_commit(&dense) == MPI_SUCCESS);
    CHECK(BLOCKS(dense, 0, 48) && dt_is_contig(dense) && dt_contig_offset(dense) == 0);

    int bl[] = { 1, 2, 1 }, disp[] = { 0, 1, 5 };
    CHECK(PMPI_Type_indexed(3, bl, disp, MPI_INT, &idx) == MPI_SUCCESS);
    CHECK(BLOCKS(idx, 0, 12, 20, 4));
    bounds(idx, 0, 24, 0, 24);

    /* type-map order is kept (no sorting); bounds are min/max */
    int bl2[] = { 1, 1 }, disp2[] = { 4, 1 };
    CHECK(PMPI_Type_indexed(2, bl2, disp2, MPI_INT, &out_of_order) == MPI_SUCCESS);
    CHECK(BLOCKS(out_of_order, 16, 4, 4, 4));
    bounds(out_of_order, 4, 16, 4, 16);

    /* a vector of a non-dense type: blocks of every copy */
    MPI_Datatype vv;
    CHECK(PMPI_Type_contiguous(2, v, &vv) == MPI_SUCCESS);
    CHECK(BLOCKS(vv, 0, 8, 16, 8, 32, 16, 56, 8, 72, 8)); /* 32+8 meets the copy at 40 */
    MPI_Datatype all[] = { c, v, dense, idx, out_of_order, vv };
    for (int i = 0; i < 6; i++)
        CHECK(PMPI_Type_free(&all[i]) == MPI_SUCCESS && all[i] == MPI_DATATYPE_NULL);
}

static void test_struct_and_elements(void)
{
    int bl[] = { 1, 1, 1 };
    MPI_Aint disp[] = { 0, 8, 16 };
    MPI_Datatype types[] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, s;
    CHECK(PMPI_Type_create_struct(3, bl, disp, types, &s) == MPI_SUCCESS && PMPI_Type_commit(&s) == MPI_SUCCESS);
    CHECK(BLOCKS(s, 0, 4, 8, 9)); /* double and char are adjacent */
    CHECK(dt_size(s) == 13);
    bounds(s, 0, 24, 0, 17); /* extent padded to the double's alignment */
    const dt_type_t *d = dt_derived(s);
    CHECK(d->nruns == 3 && d->nbasic == 3 && d->runs[1].basic == MPI_DOUBLE);
    CHECK(dt_elements(s, 13) == 3);
    CHECK(dt_elements(s, 2 * 13) == 6);
    CHECK(dt_elements(s, 13 + 4 + 8) == 5); /* one element, then an int and a double */
    CHECK(dt_elements(s, 13 + 6) == -1);    /* half a double */
    CHECK(dt_elements(MPI_INT, 12) == 3 && dt_elements(MPI_INT, 6) == -1);

    /* runs of one basic type merge across copies */
    MPI_Datatype v;
    CHECK(PMPI_Type_vector(5, 3, 7, MPI_DOUBLE, &v) == MPI_SUCCESS);
    CHECK(dt_derived(v)->nruns == 1 && dt_derived(v)->nbasic == 15);
    PMPI_Type_free(&v);
    /* padding also applies to byte displacements, not with an explicit ub */
    int one[] = { 1, 1 };
    MPI_Aint at[] = { 0, 4 };
    MPI_Datatype h, r, rs, pair[2];
    CHECK(PMPI_Type_create_hindexed(2, one, at, MPI_DOUBLE, &h) == MPI_SUCCESS);
    bounds(h, 0, 16, 0, 12);
    CHECK(PMPI_Type_create_resized(s, 0, 17, &r) == MPI_SUCCESS);
    pair[0] = r;
    pair[1] = MPI_CHAR;
    MPI_Aint at2[] = { 0, 17 };
    CHECK(PMPI_Type_create_struct(2, one, at2, pair, &rs) == MPI_SUCCESS);
    bounds(rs, 0, 17, 0, 18); /* the resized ub sticks: no padding, data past ub */
    PMPI_Type_free(&h);
    PMPI_Type_free(&r);
    PMPI_Type_free(&rs);
    PMPI_Type_free(&s);
}

static void test_resized_and_markers(void)
{
    MPI_Datatype r, two, dup;
    CHECK(PMPI_Type_create_resized(MPI_INT, -4, 16, &r) == MPI_SUCCESS);
    bounds(r, -4, 16, 0, 4);
    CHECK(PMPI_Type_contiguous(2, r, &two) == MPI_SUCCESS);
    CHECK(BLOCKS(two, 0, 4, 16, 4));
    bounds(two, -4, 32, 0, 20); /* the resized bounds stick */
    CHECK(PMPI_Type_dup(two, &dup) == MPI_SUCCESS);
    CHECK(BLOCKS(dup, 0, 4, 16, 4));
    bounds(dup, -4, 32, 0, 20);

    /* the MPI-1 markers */
    int bl[] = { 1, 1, 1 };
    MPI_Aint disp[] = { -8, 0, 12 };
    MPI_Datatype types[] = { MPI_LB, MPI_INT, MPI_UB }, m;
    CHECK(PMPI_Type_create_struct(3, bl, disp, types, &m) == MPI_SUCCESS);
    bounds(m, -8, 20, 0, 4);
    CHECK(BLOCKS(m, 0, 4) && !dt_derived(m)->contig);
    MPI_Datatype all[] = { r, two, dup, m };
    for (int i = 0; i < 4; i++)
        PMPI_Type_free(&all[i]);
}

static void test_subarray(void)
{
    int sizes[] = { 4, 5 }, sub[] = { 2, 3 }, starts[] = { 1, 1 };
    MPI_Datatype s, rows, f;
    CHECK(PMPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &s) == MPI_SUCCESS);
    CHECK(BLOCKS(s, 24, 12, 44, 12));
    bounds(s, 0, 80, 24, 32);
    int sub2[] = { 2, 5 }, starts2[] = { 1, 0 };
    CHECK(PMPI_Type_create_subarray(2, sizes, sub2, starts2, MPI_ORDER_C, MPI_INT, &rows) == MPI_SUCCESS);
    CHECK(BLOCKS(rows, 20, 40) && !dt_derived(rows)->contig); /* extent 80 != size 40 */
    /* Fortran order: the first dimension varies fastest */
    CHECK(PMPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &f) == MPI_SUCCESS);
    CHECK(BLOCKS(f, 20, 8, 36, 8, 52, 8));
    PMPI_Type_free(&s);
    PMPI_Type_free(&rows);
    PMPI_Type_free(&f);
}

static void test_pack(void)
{
    MPI_Datatype v;
    CHECK(PMPI_Type_vector(3, 2, 3, MPI_INT, &v) == MPI_SUCCESS && PMPI_Type_commit(&v) == MPI_SUCCESS);
    int src[16], packed[16], back[16];
    for (int i = 0; i < 16; i++)
        src[i] = 100 + i;
    /* two elements; the second starts one extent (8 ints) later */
    dt_pack(src, 2, v, packed);
    int want[] = { 100, 101, 103, 104, 106, 107, 108, 109, 111, 112, 114, 115 };
    CHECK(memcmp(packed, want, sizeof want) == 0);
    memset(back, 0xff, sizeof back);
    dt_unpack(packed, sizeof want, back, 2, v);
    for (int i = 0; i < 16; i++) {
        bool data = i % 8 != 2 && i % 8 != 5;
        CHECK(data ? back[i] == src[i] : back[i] == -1);
    }
    /* a short input fills a prefix of the type map only */
    memset(back, 0xff, sizeof back);
    dt_unpack(packed, 3 * sizeof(int), back, 2, v);
    CHECK(back[0] == 100 && back[1] == 101 && back[3] == 103 && back[4] == -1);
    PMPI_Type_free(&v);
}

static void test_refs_and_contents(void)
{
    MPI_Datatype inner, outer, got[1];
    int ints[4];
    MPI_Aint aints[1];
    CHECK(PMPI_Type_vector(2, 1, 2, MPI_DOUBLE, &inner) == MPI_SUCCESS);
    CHECK(PMPI_Type_contiguous(3, inner, &outer) == MPI_SUCCESS);
    MPI_Datatype inner_handle = inner;
    CHECK(PMPI_Type_free(&inner) == MPI_SUCCESS);
    CHECK(dt_derived(inner_handle) != NULL); /* outer's contents still hold it */
    int ni, na, nt, comb;
    CHECK(PMPI_Type_get_envelope(outer, &ni, &na, &nt, &comb) == MPI_SUCCESS);
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 1 && na == 0 && nt == 1);
    CHECK(PMPI_Type_get_contents(outer, 4, 1, 1, ints, aints, got) == MPI_SUCCESS);
    CHECK(ints[0] == 3 && got[0] == inner_handle);
    CHECK(PMPI_Type_get_envelope(got[0], &ni, &na, &nt, &comb) == MPI_SUCCESS && comb == MPI_COMBINER_VECTOR);
    PMPI_Type_free(&got[0]);
    PMPI_Type_free(&outer); /* the last references: both objects go */
    CHECK(dt_derived(inner_handle) == NULL);
    /* freed handles are reused */
    MPI_Datatype again;
    CHECK(PMPI_Type_contiguous(1, MPI_INT, &again) == MPI_SUCCESS);
    CHECK(again == inner_handle);
    PMPI_Type_free(&again);
    /* empty types */
    MPI_Datatype empty;
    CHECK(PMPI_Type_contiguous(0, MPI_INT, &empty) == MPI_SUCCESS && PMPI_Type_commit(&empty) == MPI_SUCCESS);
    CHECK(dt_size(empty) == 0 && dt_extent(empty) == 0 && dt_is_contig(empty) && dt_elements(empty, 0) == 0);
    PMPI_Type_free(&empty);
    /* predefined types through the same accessors */
    CHECK(dt_valid(MPI_DOUBLE) && dt_size(MPI_DOUBLE) == 8 && dt_is_contig(MPI_DOUBLE));
    CHECK(!dt_valid(MPI_DATATYPE_NULL) && !dt_valid(AMPI_DATATYPE_PREDEFINED_LAST + 1) && !dt_valid(-3));
}

int main(void)
{
    test_simple();
    test_struct_and_elements();
    test_resized_and_markers();
    test_subarray();
    test_pack();
    test_refs_and_contents();
    if (unit_check_summary("test_dtype"))
        return 1;
    printf("test_dtype: ok\n");
    return 0;
}
