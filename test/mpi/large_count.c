/* large_count.c - the large-count "_c" functions of MPI 4.0: ordinary
 * counts through point to point (every send mode, blocking, nonblocking and
 * persistent; Sendrecv, Get_count_c),
 * collectives (Bcast_c, Gatherv_c, Alltoallw_c, Allreduce_c with an op of
 * MPI_Op_create_c) and the datatype constructors; counts past INT_MAX where
 * no memory is needed: type sizes of MPI_Type_contiguous_c and
 * MPI_Type_create_hindexed_c, a message of 2^31 + 5 elements of an empty
 * type, and MPI_Reduce_local_c calling the op on pieces of at most INT_MAX;
 * a vector of 2^30 blocks (too many to list block by block): its size,
 * extents, true extents and element count, also resized, while sending it
 * is refused with MPI_ERR_TYPE; MPI_Status_set_elements counting basic
 * elements of a derived type, not whole ones. */
#include "mpitest.h"

#include <limits.h>

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Records the lengths it is called with (Reduce_local_c does not yield, so
 * ranks sharing the process do not interleave here). */
static MPI_Count calls[4];
static int ncalls;
static void count_calls(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)dt;
    if (ncalls < 4)
        calls[ncalls] = *len;
    ncalls++;
}

static int test_p2p(int rank, int size)
{
    int errs = 0, out[100], in[100];
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int i = 0; i < 100; i++)
        out[i] = rank * 1000 + i, in[i] = -1;
    MPI_Request q;
    MPI_Status st;
    MPI_Irecv_c(in, 100, MPI_INT, from, 1, MPI_COMM_WORLD, &q);
    MPI_Send_c(out, 100, MPI_INT, to, 1, MPI_COMM_WORLD);
    MPI_Wait(&q, &st);
    MPI_Count n = -1;
    MPI_Get_count_c(&st, MPI_INT, &n);
    for (int i = 0; i < 100; i++)
        if (in[i] != from * 1000 + i) {
            errs += mt_fail(rank, "Send_c/Irecv_c: element %d is %d", i, in[i]);
            break;
        }
    if (n != 100)
        errs += mt_fail(rank, "Get_count_c: %lld", (long long)n);

    /* 2^31 + 5 elements of an empty type: the path of counts past INT_MAX */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Count big = (MPI_Count)INT_MAX + 6;
    MPI_Sendrecv_c(out, big, empty, to, 2, in, big, empty, from, 2, MPI_COMM_WORLD, &st);
    MPI_Get_count_c(&st, empty, &n);
    if (n != 0 || st.MPI_SOURCE != from)
        errs += mt_fail(rank, "Sendrecv_c of 2^31+5 empty elements: count %lld, source %d", (long long)n,
                        st.MPI_SOURCE);
    MPI_Type_free(&empty);
    return errs;
}

static int test_coll(int rank, int size)
{
    int errs = 0;
    int b[10];
    for (int i = 0; i < 10; i++)
        b[i] = rank == 0 ? i : -1;
    MPI_Bcast_c(b, 10, MPI_INT, 0, MPI_COMM_WORLD);
    if (b[9] != 9)
        errs += mt_fail(rank, "Bcast_c: %d", b[9]);

    MPI_Op op;
    MPI_Op_create_c(sum_c, 1, &op);
    int v[3] = { rank, 1, 2 * rank }, r[3] = { 0, 0, 0 };
    MPI_Allreduce_c(v, r, 3, MPI_INT, op, MPI_COMM_WORLD);
    if (r[0] != size * (size - 1) / 2 || r[1] != size || r[2] != size * (size - 1))
        errs += mt_fail(rank, "Allreduce_c with an MPI_Op_create_c op: %d %d %d", r[0], r[1], r[2]);
    MPI_Request q;
    MPI_Iallreduce_c(v, r, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (r[1] != size)
        errs += mt_fail(rank, "Iallreduce_c: %d", r[1]);
    MPI_Op_free(&op);

    /* Gatherv_c: rank i sends i + 1 ints, placed in reverse order */
    MPI_Count *counts = mt_malloc((size_t)size * sizeof *counts);
    MPI_Aint *displs = mt_malloc((size_t)size * sizeof *displs);
    int total = size * (size + 1) / 2, *all = mt_malloc((size_t)total * sizeof(int)), mine[64];
    for (int i = 0, at = total; i < size; i++) {
        counts[i] = i + 1;
        at -= i + 1;
        displs[i] = at;
    }
    for (int i = 0; i <= rank; i++)
        mine[i] = rank * 100 + i;
    MPI_Gatherv_c(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < size; i++)
        for (int k = 0; k <= i; k++)
            if (all[displs[i] + k] != i * 100 + k) {
                errs += mt_fail(rank, "Gatherv_c: block %d element %d is %d", i, k, all[displs[i] + k]);
                i = size;
                break;
            }

    /* Alltoallw_c: one int to every rank, byte displacements */
    MPI_Datatype *types = mt_malloc((size_t)size * sizeof *types);
    int *sb = mt_malloc((size_t)size * sizeof(int)), *rb = mt_malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = (MPI_Aint)(i * sizeof(int));
        types[i] = MPI_INT;
        sb[i] = rank * size + i;
        rb[i] = -1;
    }
    MPI_Alltoallw_c(sb, counts, displs, types, rb, counts, displs, types, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        if (rb[i] != i * size + rank) {
            errs += mt_fail(rank, "Alltoallw_c: from %d got %d", i, rb[i]);
            break;
        }
    free(counts), free(displs), free(all), free(types), free(sb), free(rb);

    /* Reduce_local_c past INT_MAX: the op sees pieces of at most INT_MAX */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Op_create_c(count_calls, 1, &op);
    int dummy = 0;
    ncalls = 0;
    MPI_Reduce_local_c(&dummy, &dummy, (MPI_Count)INT_MAX + 10, empty, op);
    if (ncalls != 2 || calls[0] != INT_MAX || calls[1] != 10)
        errs += mt_fail(rank, "Reduce_local_c of 2^31+9: %d calls (%lld, %lld)", ncalls, (long long)calls[0],
                        (long long)calls[1]);
    MPI_Op_free(&op);
    MPI_Type_free(&empty);
    return errs;
}

static int test_types(int rank)
{
    int errs = 0;
    MPI_Datatype t;
    MPI_Count size = -1, lb = -1, ext = -1, n = (MPI_Count)3 << 30; /* 3 GiB: built, never used */
    MPI_Type_contiguous_c(n, MPI_CHAR, &t);
    MPI_Type_size_c(t, &size);
    MPI_Type_get_extent_c(t, &lb, &ext);
    if (size != n || lb != 0 || ext != n)
        errs += mt_fail(rank, "Type_contiguous_c(3 GiB): size %lld lb %lld extent %lld", (long long)size,
                        (long long)lb, (long long)ext);
    MPI_Type_free(&t);
    MPI_Count bls[3] = { 1, 2, n }, disps[3] = { 0, 1, 3 };
    MPI_Type_create_hindexed_c(3, bls, disps, MPI_CHAR, &t);
    MPI_Type_get_true_extent_c(t, &lb, &ext);
    MPI_Type_size_c(t, &size);
    if (size != n + 3 || lb != 0 || ext != n + 3)
        errs += mt_fail(rank, "Type_create_hindexed_c: size %lld true extent %lld", (long long)size,
                        (long long)ext);
    MPI_Type_free(&t);

    /* ordinary counts: the int constructor's type and envelope */
    MPI_Count ibl = 2, idisp[2] = { 0, 5 };
    MPI_Type_create_indexed_block_c(2, ibl, idisp, MPI_INT, &t);
    MPI_Type_commit(&t);
    int ni, na, nt, comb, src[7] = { 1, 2, 3, 4, 5, 6, 7 }, dst[4] = { 0, 0, 0, 0 };
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    MPI_Sendrecv(src, 1, t, 0, 3, dst, 4, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    if (comb != MPI_COMBINER_INDEXED_BLOCK || dst[0] != 1 || dst[1] != 2 || dst[2] != 6 || dst[3] != 7)
        errs += mt_fail(rank, "Type_create_indexed_block_c: combiner %d, data %d %d %d %d", comb, dst[0], dst[1],
                        dst[2], dst[3]);
    MPI_Type_free(&t);

    /* the rest of the indexed family, ordinary counts: combiner and data */
    MPI_Count bl2[2] = { 2, 1 }, edisp[2] = { 1, 4 }, bdisp[2] = { 4, 16 };
    MPI_Datatype ints[2] = { MPI_INT, MPI_INT };
    int src6[6] = { 10, 11, 12, 13, 14, 15 };
    const int want[3][3] = { { 11, 12, 14 }, { 11, 14, -1 }, { 11, 12, 14 } };
    const int combs[3] = { MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED_BLOCK, MPI_COMBINER_STRUCT };
    for (int k = 0; k < 3; k++) {
        if (k == 0)
            MPI_Type_indexed_c(2, bl2, edisp, MPI_INT, &t);
        else if (k == 1)
            MPI_Type_create_hindexed_block_c(2, 1, bdisp, MPI_INT, &t);
        else
            MPI_Type_create_struct_c(2, bl2, bdisp, ints, &t);
        MPI_Type_commit(&t);
        int got[3] = { -1, -1, -1 };
        MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
        MPI_Sendrecv(src6, 1, t, 0, 4, got, 3, MPI_INT, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        if (comb != combs[k] || got[0] != want[k][0] || got[1] != want[k][1] || got[2] != want[k][2])
            errs += mt_fail(rank, "indexed family constructor %d: combiner %d, data %d %d %d", k, comb, got[0],
                            got[1], got[2]);
        MPI_Type_free(&t);
    }

    /* argument errors, each with its class */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rcs[5] = {
        MPI_Type_create_struct_c(2, bl2, bdisp, NULL, &t),
        MPI_Type_indexed_c(2, bl2, NULL, MPI_INT, &t),
        MPI_Type_create_hindexed_c(2, NULL, bdisp, MPI_INT, &t),
        MPI_Type_create_indexed_block_c(-1, 1, edisp, MPI_INT, &t),
        MPI_Type_create_hindexed_block_c(2, 1, NULL, MPI_INT, &t),
    };
    const int want_cls[5] = { MPI_ERR_ARG, MPI_ERR_ARG, MPI_ERR_ARG, MPI_ERR_COUNT, MPI_ERR_ARG };
    for (int k = 0; k < 5; k++) {
        int cls = rcs[k];
        if (cls != MPI_SUCCESS)
            MPI_Error_class(rcs[k], &cls);
        if (cls != want_cls[k])
            errs += mt_fail(rank, "indexed family argument error %d: class %d, expected %d", k, cls, want_cls[k]);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

/* Every send mode's _c call (blocking, nonblocking, persistent) to
 * oneself, each with 3 ints (the int call) and with 2^31 + 1 elements of an
 * empty type (the path of counts past INT_MAX). */
static int test_send_modes(int rank)
{
    int errs = 0, out[3] = { rank, rank + 1, rank + 2 }, in[3];
    static char bbuf[4096];
    MPI_Buffer_attach(bbuf, sizeof bbuf);
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Comm self = MPI_COMM_SELF;
    for (int mode = 0; mode < 12; mode++)
        for (int large = 0; large < 2; large++) {
            MPI_Count n = large ? (MPI_Count)INT_MAX + 2 : 3, got = -1;
            MPI_Datatype t = large ? empty : MPI_INT;
            MPI_Request rq, sq = MPI_REQUEST_NULL;
            MPI_Status st;
            in[0] = in[1] = in[2] = -1;
            MPI_Irecv_c(in, n, t, 0, mode, self, &rq);
            switch (mode) {
            case 0: MPI_Send_c(out, n, t, 0, mode, self); break;
            case 1: MPI_Bsend_c(out, n, t, 0, mode, self); break;
            case 2: MPI_Ssend_c(out, n, t, 0, mode, self); break;
            case 3: MPI_Rsend_c(out, n, t, 0, mode, self); break;
            case 4: MPI_Isend_c(out, n, t, 0, mode, self, &sq); break;
            case 5: MPI_Ibsend_c(out, n, t, 0, mode, self, &sq); break;
            case 6: MPI_Issend_c(out, n, t, 0, mode, self, &sq); break;
            case 7: MPI_Irsend_c(out, n, t, 0, mode, self, &sq); break;
            case 8: MPI_Send_init_c(out, n, t, 0, mode, self, &sq); break;
            case 9: MPI_Bsend_init_c(out, n, t, 0, mode, self, &sq); break;
            case 10: MPI_Ssend_init_c(out, n, t, 0, mode, self, &sq); break;
            default: MPI_Rsend_init_c(out, n, t, 0, mode, self, &sq); break;
            }
            if (mode >= 8)
                MPI_Start(&sq);
            MPI_Wait(&rq, &st);
            MPI_Wait(&sq, MPI_STATUS_IGNORE);
            if (mode >= 8)
                MPI_Request_free(&sq);
            MPI_Get_count_c(&st, t, &got);
            int data_ok = large || (in[0] == rank && in[1] == rank + 1 && in[2] == rank + 2);
            if (got != (large ? 0 : 3) || st.MPI_TAG != mode || !data_ok)
                errs += mt_fail(rank, "send mode %d (%s counts): count %lld tag %d data %d %d %d", mode,
                                large ? "large" : "int", (long long)got, st.MPI_TAG, in[0], in[1], in[2]);
        }
    MPI_Type_free(&empty);
    void *b;
    MPI_Count bsize;
    MPI_Buffer_detach_c(&b, &bsize);
    return errs;
}

/* MPICH's datatype/large_count type: INT_MAX/2 blocks of 4 ints, stride 3. */
static int test_huge_vector(int rank)
{
    int errs = 0;
    MPI_Datatype four, vec, rsz;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Type_vector(INT_MAX / 2, 1, 3, four, &vec);
    if (rc != MPI_SUCCESS) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Type_free(&four);
        return mt_fail(rank, "Type_vector of INT_MAX/2 blocks: error %d", rc);
    }
    MPI_Type_commit(&vec);
    MPI_Type_create_resized(vec, INT_MAX, -1024, &rsz);
    MPI_Type_commit(&rsz);
    const MPI_Count n = INT_MAX / 2, size = 16 * n, extent = 48 * (n - 1) + 16;
    MPI_Count sz = -1, lb = -1, ext = -1, tlb = -1, text = -1;
    int isz = 0;
    MPI_Type_size_x(vec, &sz);
    MPI_Type_size(vec, &isz);
    MPI_Type_get_extent_x(vec, &lb, &ext);
    MPI_Type_get_true_extent_x(vec, &tlb, &text);
    if (sz != size || isz != MPI_UNDEFINED || lb != 0 || ext != extent || tlb != 0 || text != extent)
        errs += mt_fail(rank, "vector of 2^30 blocks: size %lld (int %d) extent %lld %lld true %lld %lld", sz, isz, lb,
                        ext, tlb, text);
    MPI_Type_get_extent_x(rsz, &lb, &ext);
    MPI_Type_get_true_extent_x(rsz, &tlb, &text);
    if (lb != INT_MAX || ext != -1024 || tlb != 0 || text != extent)
        errs += mt_fail(rank, "resized vector: extent %lld %lld true %lld %lld", lb, ext, tlb, text);
    MPI_Status st;
    MPI_Count elems = -1;
    int count = -1;
    MPI_Status_set_elements_x(&st, vec, 4 * n);
    MPI_Get_elements_x(&st, vec, &elems);
    MPI_Get_count(&st, vec, &count);
    if (elems != 4 * n || count != 1)
        errs += mt_fail(rank, "vector of 2^30 blocks: %lld elements, count %d (expected %lld, 1)", elems, count,
                        4 * n);
    int small = -1;
    MPI_Status_set_elements(&st, four, 6); /* six ints: one element of four and half of the next */
    MPI_Get_elements(&st, four, &small);
    MPI_Get_count(&st, four, &count);
    if (small != 6 || count != MPI_UNDEFINED)
        errs += mt_fail(rank, "Status_set_elements(6) of 4 ints: %d elements, count %d (expected 6, undefined)",
                        small, count);
    int cls = MPI_SUCCESS, e = MPI_Send(NULL, 1, vec, rank, 0, MPI_COMM_WORLD);
    if (e)
        MPI_Error_class(e, &cls);
    if (cls != MPI_ERR_TYPE)
        errs += mt_fail(rank, "sending the vector of 2^30 blocks: class %d, expected MPI_ERR_TYPE", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&rsz);
    MPI_Type_free(&vec);
    MPI_Type_free(&four);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += test_p2p(rank, size);
    errs += test_coll(rank, size);
    errs += test_types(rank);
    errs += test_send_modes(rank);
    errs += test_huge_vector(rank);
    mt_finish(errs, "large_count OK");
    MPI_Finalize();
    return 0;
}
