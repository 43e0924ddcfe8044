/* dtype_external.c - MPI_Pack_external in "external32" (big-endian, fixed
 * sizes: MPI_LONG in 4 bytes, booleans as 0/1, a struct without padding)
 * and back; MPI_Type_create_darray: every rank's piece of a global array
 * under block, cyclic and cyclic(2) distributions in C and Fortran order,
 * checked element by element against the index arithmetic of MPI 3.1
 * 4.1.4, and the pieces of all ranks together cover the array once. */
#include "mpitest.h"

#include <stdbool.h>

static int test_external(int rank)
{
    int errs = 0;
    int ints[2] = { 1, -2 };
    long longs[2] = { 1, -2 };
    double d = 1.0;
    bool b[2] = { true, false };
    unsigned char buf[64], want_int[8] = { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe };
    unsigned char want_d[8] = { 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 };
    MPI_Aint size = -1, pos = 0;
    MPI_Pack_external_size("external32", 2, MPI_LONG, &size);
    if (size != 8)
        errs += mt_fail(rank, "external32 size of 2 MPI_LONG: %ld, expected 8", (long)size);
    MPI_Pack_external("external32", ints, 2, MPI_INT, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", longs, 2, MPI_LONG, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", b, 2, MPI_C_BOOL, buf, sizeof buf, &pos);
    if (pos != 8 + 8 + 8 + 2 || memcmp(buf, want_int, 8) || memcmp(buf + 8, want_int, 8) ||
        memcmp(buf + 16, want_d, 8) || buf[24] != 1 || buf[25] != 0)
        errs += mt_fail(rank, "external32 bytes wrong (position %ld)", (long)pos);
    long back[2] = { 0, 0 };
    pos = 8;
    MPI_Unpack_external("external32", buf, sizeof buf, &pos, back, 2, MPI_LONG);
    if (back[0] != 1 || back[1] != -2 || pos != 16)
        errs += mt_fail(rank, "external32 MPI_LONG back: %ld %ld", back[0], back[1]);

    /* a struct {char; double} (padding in memory, none in external32) */
    struct {
        char c;
        double v;
    } s = { 'x', -0.5 }, t = { 0, 0 };
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { 0, (MPI_Aint)((char *)&s.v - (char *)&s) };
    MPI_Datatype types[2] = { MPI_CHAR, MPI_DOUBLE }, st;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_commit(&st);
    MPI_Pack_external_size("external32", 1, st, &size);
    pos = 0;
    MPI_Pack_external("external32", &s, 1, st, buf, sizeof buf, &pos);
    MPI_Aint upos = 0;
    MPI_Unpack_external("external32", buf, pos, &upos, &t, 1, st);
    if (size != 9 || pos != 9 || upos != 9 || buf[0] != 'x' || buf[1] != 0xbf || t.c != 'x' || t.v != -0.5)
        errs += mt_fail(rank, "external32 struct: size %ld, first bytes %02x %02x, back '%c' %g", (long)size,
                        buf[0], buf[1], t.c, t.v);
    MPI_Type_free(&st);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1, err = MPI_Pack_external_size("native", 1, MPI_INT, &size);
    MPI_Error_class(err, &cls);
    if (cls != MPI_ERR_ARG)
        errs += mt_fail(rank, "MPI_Pack_external_size(\"native\"): class %d, expected MPI_ERR_ARG", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

/* Owner (process coordinate) of global index i of a dimension of n under
 * a distribution, and whether the process at coordinate p holds it. */
static int owner(int i, int n, int np, int dist, int darg)
{
    if (dist == MPI_DISTRIBUTE_NONE)
        return 0;
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int bs = darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + np - 1) / np : darg;
        return i / bs;
    }
    int bs = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (i / bs) % np;
}

/* One 2-D case: the global array holds its own linear index; each piece
 * must be exactly the owned elements, in memory order. */
static int darray_case(int rank, int size, int order, int d0, int d1, int darg1, int *covered)
{
    int gs[2] = { 7, 10 }, ps[2], dist[2] = { d0, d1 }, darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, darg1 };
    ps[0] = d0 == MPI_DISTRIBUTE_NONE ? 1 : size;
    ps[1] = d0 == MPI_DISTRIBUTE_NONE ? size : 1;
    int errs = 0, n = gs[0] * gs[1];
    int global[70];
    for (int i = 0; i < n; i++)
        global[i] = i;
    for (int r = 0; r < size; r++) {
        MPI_Datatype t;
        MPI_Type_create_darray(size, r, 2, gs, dist, darg, ps, order, MPI_INT, &t);
        MPI_Type_commit(&t);
        int tsize = -1, piece[70], np = 0, pos = 0;
        MPI_Aint lb, ext;
        MPI_Type_size(t, &tsize);
        MPI_Type_get_extent(t, &lb, &ext);
        MPI_Pack(global, 1, t, piece, sizeof piece, &pos, MPI_COMM_SELF);
        int c0 = ps[0] == 1 ? 0 : r, c1 = ps[0] == 1 ? r : 0; /* row-major process grid */
        for (int m = 0; m < n; m++) { /* memory order */
            int i0 = order == MPI_ORDER_C ? m / gs[1] : m % gs[0];
            int i1 = order == MPI_ORDER_C ? m % gs[1] : m / gs[0];
            if (owner(i0, gs[0], ps[0], d0, darg[0]) != c0 || owner(i1, gs[1], ps[1], d1, darg[1]) != c1)
                continue;
            int idx = order == MPI_ORDER_C ? i0 * gs[1] + i1 : i0 + i1 * gs[0];
            if (np >= pos / (int)sizeof(int) || piece[np] != idx) {
                errs += mt_fail(rank, "darray order %d dist %d/%d rank %d: element %d is %d, expected %d", order,
                                d0, d1, r, np, np < pos / (int)sizeof(int) ? piece[np] : -1, idx);
                break;
            }
            covered[idx]++;
            np++;
        }
        if (np * (int)sizeof(int) != tsize || lb != 0 || ext != (MPI_Aint)(n * sizeof(int)))
            errs += mt_fail(rank, "darray order %d dist %d/%d rank %d: size %d for %d elements, extent %ld", order,
                            d0, d1, r, tsize, np, (long)ext);
        int ni = -1, na = -1, nt = -1, comb = -1;
        MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
        if (comb != MPI_COMBINER_DARRAY || ni != 4 * 2 + 4 || nt != 1)
            errs += mt_fail(rank, "darray envelope: combiner %d, %d ints, %d types", comb, ni, nt);
        MPI_Type_free(&t);
    }
    return errs;
}

static int test_darray(int rank, int size)
{
    int errs = 0;
    int orders[2] = { MPI_ORDER_C, MPI_ORDER_FORTRAN };
    struct {
        int d0, d1, darg1;
    } cases[] = {
        { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG },
        { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG },
        { MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC, 2 },
        { MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG },
    };
    for (int o = 0; o < 2; o++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            int covered[70] = { 0 };
            errs += darray_case(rank, size, orders[o], cases[k].d0, cases[k].d1, cases[k].darg1, covered);
            for (int i = 0; i < 70; i++)
                if (covered[i] != 1) {
                    errs += mt_fail(rank, "darray order %d case %zu: element %d held %d times", orders[o], k, i,
                                    covered[i]);
                    break;
                }
        }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += test_external(rank);
    errs += test_darray(rank, size);
    mt_finish(errs, "dtype_external OK");
    MPI_Finalize();
    return 0;
}
