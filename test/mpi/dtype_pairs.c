/* dtype_pairs.c - the (value, index) pair types: size is the data alone
 * (MPI_DOUBLE_INT 12 on x86_64), extent keeps the C struct's padding;
 * MPI_Get_elements counts two basic elements per pair; a struct of the same
 * parts matches a pair on the wire; pairs travel point to point between
 * ranks and through MAXLOC reductions; a single-completion call leaves the
 * status's MPI_ERROR alone (MPI 3.1 3.2.5), also for MPI_PROC_NULL. */
#include "mpitest.h"

#include <stddef.h>

typedef struct {
    double v;
    int i;
} dint_t;
typedef struct {
    short v;
    int i;
} sint_t;

static int test_sizes(int rank)
{
    struct {
        MPI_Datatype t;
        const char *name;
        int size;
        long extent;
    } cases[] = {
        { MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float) + sizeof(int), sizeof(struct { float a; int b; }) },
        { MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int), sizeof(dint_t) },
        { MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + sizeof(int), sizeof(struct { long a; int b; }) },
        { MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short) + sizeof(int), sizeof(sint_t) },
        { MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + sizeof(int),
          sizeof(struct { long double a; int b; }) },
        { MPI_2INT, "MPI_2INT", 2 * sizeof(int), 2 * sizeof(int) },
    };
    int errs = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int size;
        MPI_Aint lb, extent;
        MPI_Type_size(cases[k].t, &size);
        MPI_Type_get_extent(cases[k].t, &lb, &extent);
        if (size != cases[k].size || lb != 0 || extent != cases[k].extent)
            errs += mt_fail(rank, "%s: size %d lb %ld extent %ld, expected %d 0 %ld", cases[k].name, size, (long)lb,
                            (long)extent, cases[k].size, cases[k].extent);
    }
    return errs;
}

/* Three pairs to self: 6 basic elements; a struct {double, int, double,
 * int} (24 bytes of data) received as pairs: 2 pairs, 4 elements. */
static int test_elements(int rank)
{
    int errs = 0, n = -1;
    dint_t in[3] = { { 1.5, 1 }, { 2.5, 2 }, { 3.5, 3 } }, out[3];
    MPI_Status st;
    memset(out, 0, sizeof out);
    MPI_Sendrecv(in, 3, MPI_DOUBLE_INT, 0, 1, out, 3, MPI_DOUBLE_INT, 0, 1, MPI_COMM_SELF, &st);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    if (n != 6)
        errs += mt_fail(rank, "3 MPI_DOUBLE_INT: %d elements, expected 6", n);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    if (n != 3)
        errs += mt_fail(rank, "3 MPI_DOUBLE_INT: count %d", n);
    for (int k = 0; k < 3; k++)
        if (out[k].v != in[k].v || out[k].i != in[k].i)
            errs += mt_fail(rank, "pair %d arrived as (%g, %d)", k, out[k].v, out[k].i);

    struct {
        double a;
        int b;
        double c;
        int d;
    } s = { 7.25, 7, 8.25, 8 };
    int bl[4] = { 1, 1, 1, 1 };
    MPI_Aint disp[4] = { 0, offsetof(dint_t, i), sizeof(dint_t), sizeof(dint_t) + offsetof(dint_t, i) };
    MPI_Datatype types[4] = { MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_INT }, st4;
    MPI_Type_create_struct(4, bl, disp, types, &st4);
    MPI_Type_commit(&st4);
    MPI_Sendrecv(&s, 1, st4, 0, 2, out, 3, MPI_DOUBLE_INT, 0, 2, MPI_COMM_SELF, &st);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    if (n != 4)
        errs += mt_fail(rank, "struct of 2 pairs received as MPI_DOUBLE_INT: %d elements, expected 4", n);
    if (out[0].v != 7.25 || out[0].i != 7 || out[1].v != 8.25 || out[1].i != 8)
        errs += mt_fail(rank, "struct -> pairs: (%g, %d) (%g, %d)", out[0].v, out[0].i, out[1].v, out[1].i);
    MPI_Type_free(&st4);

    /* a value without its index: 1 element, no whole count */
    MPI_Sendrecv(in, 1, MPI_DOUBLE, 0, 3, out, 1, MPI_DOUBLE_INT, 0, 3, MPI_COMM_SELF, &st);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    if (n != 1)
        errs += mt_fail(rank, "a lone double received as MPI_DOUBLE_INT: %d elements, expected 1", n);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    if (n != MPI_UNDEFINED)
        errs += mt_fail(rank, "a lone double received as MPI_DOUBLE_INT: count %d, expected MPI_UNDEFINED", n);
    return errs;
}

/* A ring of MPI_SHORT_INT arrays (padding between the parts) and MAXLOC
 * over MPI_DOUBLE_INT and MPI_SHORT_INT. */
static int test_transfer(int rank, int size)
{
    enum { N = 1000 };
    int errs = 0;
    sint_t *out = mt_malloc(N * sizeof *out), *in = mt_malloc(N * sizeof *in);
    for (int k = 0; k < N; k++)
        out[k] = (sint_t){ (short)(rank * 7 + k), rank * 1000 + k };
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Sendrecv(out, N, MPI_SHORT_INT, to, 4, in, N, MPI_SHORT_INT, from, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < N; k++)
        if (in[k].v != (short)(from * 7 + k) || in[k].i != from * 1000 + k) {
            errs += mt_fail(rank, "MPI_SHORT_INT %d from %d: (%d, %d)", k, from, in[k].v, in[k].i);
            break;
        }
    free(out);
    free(in);

    dint_t d[2] = { { (double)((rank * 5) % size), rank }, { -(double)rank, rank } }, dr[2];
    MPI_Allreduce(d, dr, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    int best = 0; /* the rank with the largest (rank * 5) % size, the lowest on ties */
    for (int q = 1; q < size; q++)
        if ((q * 5) % size > (best * 5) % size)
            best = q;
    if (dr[0].v != (double)((best * 5) % size) || dr[0].i != best || dr[1].v != 0.0 || dr[1].i != 0)
        errs += mt_fail(rank, "MAXLOC MPI_DOUBLE_INT: (%g, %d) (%g, %d), expected (%d, %d) (0, 0)", dr[0].v, dr[0].i,
                        dr[1].v, dr[1].i, (best * 5) % size, best);
    sint_t s = { (short)(size - rank), rank }, sr;
    MPI_Allreduce(&s, &sr, 1, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (sr.v != 1 || sr.i != size - 1)
        errs += mt_fail(rank, "MINLOC MPI_SHORT_INT: (%d, %d), expected (1, %d)", sr.v, sr.i, size - 1);
    return errs;
}

static int test_status_error(int rank)
{
    int errs = 0, buf = 0;
    MPI_Status st;
    MPI_Message msg;
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st);
    if (st.MPI_ERROR != MPI_ERR_DIMS || st.MPI_SOURCE != MPI_PROC_NULL || msg != MPI_MESSAGE_NO_PROC)
        errs += mt_fail(rank, "MPI_Mprobe(MPI_PROC_NULL): error %d source %d", st.MPI_ERROR, st.MPI_SOURCE);
    st.MPI_ERROR = MPI_ERR_TOPOLOGY;
    MPI_Mrecv(&buf, 1, MPI_INT, &msg, &st);
    if (st.MPI_ERROR != MPI_ERR_TOPOLOGY || msg != MPI_MESSAGE_NULL)
        errs += mt_fail(rank, "MPI_Mrecv(MPI_MESSAGE_NO_PROC): error field %d", st.MPI_ERROR);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Sendrecv(&rank, 1, MPI_INT, 0, 6, &buf, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &st);
    if (st.MPI_ERROR != MPI_ERR_DIMS || buf != rank)
        errs += mt_fail(rank, "MPI_Sendrecv to self: error field %d", st.MPI_ERROR);
    MPI_Request q;
    MPI_Irecv(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &q);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Wait(&q, &st);
    if (st.MPI_ERROR != MPI_ERR_DIMS)
        errs += mt_fail(rank, "MPI_Wait: error field %d", st.MPI_ERROR);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += test_sizes(rank);
    errs += test_elements(rank);
    errs += test_transfer(rank, size);
    errs += test_status_error(rank);
    mt_finish(errs, "dtype_pairs OK");
    MPI_Finalize();
    return 0;
}
