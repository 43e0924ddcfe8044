/* topo_cart.c - Cartesian topologies.
 *
 *  - Dims_create for n = 1..64 and some larger n (up to 10^9, with up to 240
 *    divisors), ndims 1..4, with and without fixed dimensions: product, fixed entries kept, free entries
 *    non-increasing; under AMPI also "as close to each other as possible"
 *    (the smallest max - min spread), against a brute-force search here.
 *    A non-divisible fixed dimension must fail with MPI_ERR_DIMS.
 *  - A 2-D grid (periodic in dimension 0 only) over all ranks: coords,
 *    rank, shift by +-1 and +-2 (MPI_PROC_NULL at the open edges), get,
 *    Topo_test, and a halo exchange whose received values identify the
 *    neighbour.  A Comm_dup keeps the topology.
 *  - A grid with one rank fewer than the job: the last rank is left out.
 *  - A 3-D periodic grid and Cart_sub keeping dimensions {0, 2} and none. */
#include "mpitest.h"

/* ---- Dims_create ---- */

#ifdef AMPI_UCX
/* Smallest spread (max - min) of k factors >= 1 whose product is m, and
 * the smallest maximum among those: exhaustive over non-increasing
 * sequences of divisors of the original count (divs[], ascending). */
static void best_spread(const int *divs, int ndivs, int m, int k, int maxf, int first, int last, int *best,
                        int *bestmax)
{
    if (k == 0) {
        if (m == 1 && (*best < 0 || first - last < *best)) {
            *best = first - last;
            *bestmax = first;
        }
        return;
    }
    for (int i = ndivs - 1; i >= 0; i--) {
        int f = divs[i];
        if (f <= maxf && m % f == 0)
            best_spread(divs, ndivs, m / f, k - 1, f, first ? first : f, f, best, bestmax);
    }
}

static int divisors(int m, int *divs)
{
    int n = 0;
    for (int d = 1; d <= m; d++)
        if (m % d == 0)
            divs[n++] = d;
    return n;
}
#endif

static int check_dims(int me, int n, int ndims, const int *fixed)
{
    int errs = 0, dims[8], before[8];
    for (int i = 0; i < ndims; i++)
        dims[i] = before[i] = fixed[i];
    int rc = MPI_Dims_create(n, ndims, dims);
    if (rc != MPI_SUCCESS)
        return mt_fail(me, "Dims_create(%d, %d) failed with %d", n, ndims, rc);
    long prod = 1;
    int nfree = 0, prev = -1, fmax = 0, fmin = 0, fixed_prod = 1;
    for (int i = 0; i < ndims; i++) {
        prod *= dims[i];
        if (before[i]) {
            fixed_prod *= before[i];
            if (dims[i] != before[i])
                errs += mt_fail(me, "Dims_create(%d, %d): fixed dims[%d] %d became %d", n, ndims, i, before[i],
                                dims[i]);
            continue;
        }
        if (dims[i] < 1 || (prev >= 0 && dims[i] > prev))
            errs += mt_fail(me, "Dims_create(%d, %d): free dims not non-increasing at %d (%d after %d)", n, ndims,
                            i, dims[i], prev);
        if (!nfree++)
            fmax = dims[i];
        fmin = dims[i];
        prev = dims[i];
    }
    if (prod != n)
        errs += mt_fail(me, "Dims_create(%d, %d): product %ld", n, ndims, prod);
#ifdef AMPI_UCX /* Open MPI's greedy choice is not always the closest */
    if (nfree > 0 && !errs) {
        int best = -1, bestmax = 0, m = n / fixed_prod;
        int *divs = mt_malloc((size_t)m * sizeof *divs), ndivs = divisors(m, divs);
        best_spread(divs, ndivs, m, nfree, m, 0, 0, &best, &bestmax);
        free(divs);
        if (fmax - fmin != best)
            errs += mt_fail(me, "Dims_create(%d, %d): spread %d max %d, the best is spread %d max %d", n, ndims,
                            fmax - fmin, fmax, best, bestmax);
    }
#else
    (void)fmax, (void)fmin, (void)fixed_prod;
#endif
    return errs;
}

static int test_dims(int me)
{
    int errs = 0, zero[8] = { 0 };
    for (int n = 1; n <= 64; n++)
        for (int nd = 1; nd <= 4; nd++)
            errs += check_dims(me, n, nd, zero);
    int big[] = { 72, 96, 97, 100, 360, 720, 1000, 1024, 2310, 4096, 30030, 65536, 1000000 };
    for (size_t i = 0; i < sizeof big / sizeof *big; i++)
        for (int nd = 1; nd <= 6; nd++)
            errs += check_dims(me, big[i], nd, zero);
    /* counts with more divisors than a small table holds: 720720 has 240,
     * 10^9 has 100 (product and order only: the reference search above
     * would need a table of n entries) */
    int many[] = { 720720, 1000000000 };
    for (size_t i = 0; i < sizeof many / sizeof *many; i++)
        for (int nd = 2; nd <= 4; nd++) {
            int d[4] = { 0, 0, 0, 0 };
            long prod = 1;
            MPI_Dims_create(many[i], nd, d);
            for (int k = 0; k < nd; k++) {
                prod *= d[k];
                if (d[k] < 1 || (k > 0 && d[k] > d[k - 1]))
                    errs += mt_fail(me, "Dims_create(%d, %d): dims[%d] = %d", many[i], nd, k, d[k]);
            }
            if (prod != many[i])
                errs += mt_fail(me, "Dims_create(%d, %d): product %ld", many[i], nd, prod);
        }
#ifdef AMPI_UCX
    /* among splits of equal spread, the one whose smaller factors are
     * larger, as MPICH answers */
    const struct {
        int n, nd, want[4];
    } ties[] = { { 5040, 3, { 21, 16, 15 } }, { 34776, 3, { 46, 28, 27 } }, { 5616, 4, { 13, 9, 8, 6 } } };
    for (size_t i = 0; i < sizeof ties / sizeof *ties; i++) {
        int d[4] = { 0, 0, 0, 0 };
        MPI_Dims_create(ties[i].n, ties[i].nd, d);
        if (memcmp(d, ties[i].want, (size_t)ties[i].nd * sizeof(int)) != 0)
            errs += mt_fail(me, "Dims_create(%d, %d): %d x %d x %d x %d, expected %d x %d x %d x %d", ties[i].n,
                            ties[i].nd, d[0], d[1], d[2], d[3], ties[i].want[0], ties[i].want[1], ties[i].want[2],
                            ties[i].want[3]);
    }
#endif
    int f1[3] = { 0, 3, 0 }, f2[4] = { 2, 0, 0, 5 }, f3[2] = { 4, 0 }, f4[3] = { 2, 3, 4 };
    errs += check_dims(me, 36, 3, f1);
    errs += check_dims(me, 360, 4, f2);
    errs += check_dims(me, 48, 2, f3);
    errs += check_dims(me, 24, 3, f4);
    int bad[2] = { 0, 3 }, cls = -1;
    int rc = MPI_Dims_create(7, 2, bad);
    MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || cls != MPI_ERR_DIMS)
        errs += mt_fail(me, "Dims_create(7, {0, 3}): class %d, expected MPI_ERR_DIMS", cls);
    return errs;
}

/* ---- a 2-D grid ---- */

/* Expected neighbour at coords (c0 + d0, c1 + d1) with dimension 0
 * periodic and dimension 1 open. */
static int grid_rank(const int *dims, int c0, int c1)
{
    c0 = ((c0 % dims[0]) + dims[0]) % dims[0];
    if (c1 < 0 || c1 >= dims[1])
        return MPI_PROC_NULL;
    return c0 * dims[1] + c1;
}

static int test_grid(int me, int size)
{
    int errs = 0, dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int rank = -1, status = -1, nd = -1;
    MPI_Comm_rank(cart, &rank);
    MPI_Topo_test(cart, &status);
    MPI_Cartdim_get(cart, &nd);
    if (rank != me || status != MPI_CART || nd != 2)
        return mt_fail(me, "2-D grid: rank %d topo %d ndims %d", rank, status, nd);
    MPI_Topo_test(MPI_COMM_WORLD, &status);
    if (status != MPI_UNDEFINED)
        errs += mt_fail(me, "MPI_COMM_WORLD has topology %d", status);
    for (int r = 0; r < size; r++) {
        int c[2] = { -1, -1 }, back = -1;
        MPI_Cart_coords(cart, r, 2, c);
        if (c[0] != r / dims[1] || c[1] != r % dims[1])
            errs += mt_fail(me, "coords of %d: (%d, %d), expected (%d, %d)", r, c[0], c[1], r / dims[1],
                            r % dims[1]);
        MPI_Cart_rank(cart, c, &back);
        if (back != r)
            errs += mt_fail(me, "Cart_rank(coords of %d) = %d", r, back);
        int wrapped[2] = { c[0] - 2 * dims[0], c[1] }; /* periodic dimension wraps */
        MPI_Cart_rank(cart, wrapped, &back);
        if (back != r)
            errs += mt_fail(me, "Cart_rank of wrapped coords of %d = %d", r, back);
    }
    int gd[2], gp[2], gc[2];
    MPI_Cart_get(cart, 2, gd, gp, gc);
    if (gd[0] != dims[0] || gd[1] != dims[1] || gp[0] != 1 || gp[1] != 0 || gc[0] != me / dims[1] ||
        gc[1] != me % dims[1])
        errs += mt_fail(me, "Cart_get: dims %dx%d periods %d%d coords (%d, %d)", gd[0], gd[1], gp[0], gp[1], gc[0],
                        gc[1]);
    int c0 = me / dims[1], c1 = me % dims[1];
    for (int dir = 0; dir < 2; dir++)
        for (int disp = -2; disp <= 2; disp++) {
            int src = -7, dst = -7;
            MPI_Cart_shift(cart, dir, disp, &src, &dst);
            int wd = dir == 0 ? grid_rank(dims, c0 + disp, c1) : grid_rank(dims, c0, c1 + disp);
            int ws = dir == 0 ? grid_rank(dims, c0 - disp, c1) : grid_rank(dims, c0, c1 - disp);
            if (src != ws || dst != wd)
                errs += mt_fail(me, "shift dir %d disp %d: (%d, %d), expected (%d, %d)", dir, disp, src, dst, ws,
                                wd);
        }

    /* halo exchange: send my id both ways along each dimension */
    int halo[4] = { -5, -5, -5, -5 }, want[4];
    for (int dir = 0; dir < 2; dir++) {
        int lo, hi;
        MPI_Cart_shift(cart, dir, 1, &lo, &hi);
        int mine = 1000 + me;
        /* to hi, from lo; then to lo, from hi */
        MPI_Sendrecv(&mine, 1, MPI_INT, hi, 20 + dir, &halo[2 * dir], 1, MPI_INT, lo, 20 + dir, cart,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&mine, 1, MPI_INT, lo, 30 + dir, &halo[2 * dir + 1], 1, MPI_INT, hi, 30 + dir, cart,
                     MPI_STATUS_IGNORE);
        want[2 * dir] = lo == MPI_PROC_NULL ? -5 : 1000 + lo;
        want[2 * dir + 1] = hi == MPI_PROC_NULL ? -5 : 1000 + hi;
    }
    for (int i = 0; i < 4; i++)
        if (halo[i] != want[i])
            errs += mt_fail(me, "halo %d: %d, expected %d", i, halo[i], want[i]);

    MPI_Comm copy;
    MPI_Comm_dup(cart, &copy);
    MPI_Topo_test(copy, &status);
    int cd[2] = { 0, 0 }, cp[2], cc[2];
    MPI_Cart_get(copy, 2, cd, cp, cc);
    if (status != MPI_CART || cd[0] != dims[0] || cd[1] != dims[1])
        errs += mt_fail(me, "dup of a grid: topo %d dims %dx%d", status, cd[0], cd[1]);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&cart);
    return errs;
}

/* One rank fewer than the job: the last one gets MPI_COMM_NULL. */
static int test_short_grid(int me, int size)
{
    if (size < 2)
        return 0;
    int errs = 0, dims[1] = { size - 1 }, periods[1] = { 0 };
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    if (me == size - 1)
        return cart == MPI_COMM_NULL ? 0 : mt_fail(me, "the rank outside the grid got a communicator");
    int n = -1, src, dst;
    MPI_Comm_size(cart, &n);
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    if (n != size - 1 || src != (me ? me - 1 : MPI_PROC_NULL) || dst != (me + 1 < size - 1 ? me + 1 : MPI_PROC_NULL))
        errs += mt_fail(me, "short grid: size %d shift (%d, %d)", n, src, dst);
    MPI_Comm_free(&cart);
    return errs;
}

/* 3-D periodic grid, then sub-grids. */
static int test_sub(int me, int size)
{
    int errs = 0, dims[3] = { 0, 0, 0 }, periods[3] = { 1, 1, 1 };
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart, sub, point;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &cart);
    int rank;
    MPI_Comm_rank(cart, &rank); /* reorder may renumber: use the new rank */
    int c[3];
    MPI_Cart_coords(cart, rank, 3, c);
    int keep[3] = { 1, 0, 1 };
    MPI_Cart_sub(cart, keep, &sub);
    int srank = -1, ssize = -1, nd = -1, sc[2] = { -1, -1 }, sd[2], sp[2];
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    MPI_Cartdim_get(sub, &nd);
    MPI_Cart_get(sub, 2, sd, sp, sc);
    if (ssize != dims[0] * dims[2] || nd != 2 || sd[0] != dims[0] || sd[1] != dims[2] || sc[0] != c[0] ||
        sc[1] != c[2] || srank != c[0] * dims[2] + c[2])
        errs += mt_fail(me, "Cart_sub {1,0,1}: size %d ndims %d dims %dx%d coords (%d, %d) rank %d", ssize, nd,
                        sd[0], sd[1], sc[0], sc[1], srank);
    /* members of the sub-grid share coordinate 1: sum of c[1] is c[1] * size */
    int sum = -1;
    MPI_Allreduce(&c[1], &sum, 1, MPI_INT, MPI_SUM, sub);
    if (sum != c[1] * ssize)
        errs += mt_fail(me, "Cart_sub {1,0,1}: members from other planes (sum %d)", sum);
    int none[3] = { 0, 0, 0 };
    MPI_Cart_sub(cart, none, &point);
    MPI_Comm_size(point, &ssize);
    MPI_Cartdim_get(point, &nd);
    if (ssize != 1 || nd != 0)
        errs += mt_fail(me, "Cart_sub keeping nothing: size %d ndims %d", ssize, nd);
    MPI_Comm_free(&point);
    MPI_Comm_free(&sub);
    MPI_Comm_free(&cart);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me = mt_rank(), size = mt_size(), errs = 0;
    errs += test_dims(me);
    errs += test_grid(me, size);
    errs += test_short_grid(me, size);
    errs += test_sub(me, size);
    mt_finish(errs, "topo_cart OK");
    MPI_Finalize();
    return 0;
}
