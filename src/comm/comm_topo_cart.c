/* Cartesian topologies and MPI_Dims_create.  Ranks are laid out row-major
 * (the last dimension varies fastest), as the standard prescribes. */
#include "comm/comm_internal.h"

#include <stdlib.h>

/* Declares C and its Cartesian topology T, or returns the error. */
#define CART_GET(C, T, S, h, fn)                                     \
    COMM_GET(C, S, h, fn);                                           \
    comm_topo_t *T = C->topo;                                        \
    if (UTIL_UNLIKELY(!T || T->kind != COMM_TOPO_CART))              \
        return core_error(C, MPI_ERR_TOPOLOGY, fn)

static comm_topo_t *cart_new(int ndims, const int *dims, const int *periods)
{
    comm_topo_t *t = comm_topo_alloc(COMM_TOPO_CART);
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->dims = comm_copy_ints(dims, ndims);
    t->periods = comm_copy_ints(periods, ndims);
    if (!t->dims || !t->periods) {
        comm_topo_release(t);
        return NULL;
    }
    for (int i = 0; i < ndims; i++)
        t->periods[i] = t->periods[i] != 0;
    return t;
}

static void coords_of(const comm_topo_t *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Splits parent into the first `nodes` ranks (same order) and the rest,
 * who get NULL; the new communicator gets topology t (released on failure
 * or for the rest).  An error class. */
int comm_topo_split(p2p_rank_t *r, core_comm_t *parent, int nodes, comm_topo_t *t, core_comm_t **out)
{
    int err = comm_split_internal(r, parent, parent->rank < nodes ? 0 : MPI_UNDEFINED, parent->rank, out);
    if (!err && *out && !t) {
        comm_drop_handle(comm_state(r), *out);
        *out = NULL;
        err = MPI_ERR_NO_MEM;
    }
    if (!err && *out)
        (*out)->topo = t;
    else
        comm_topo_release(t);
    return err;
}

#pragma weak MPI_Cart_create = PMPI_Cart_create
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    (void)reorder;
    const char *fn = "MPI_Cart_create";
    COMM_ENTER(r, s, fn);
    COMM_GET(c, s, comm_old, fn);
    COMM_INTRA_ONLY(c, fn);
    if (ndims < 0 || (ndims > 0 && (!dims || !periods)) || !comm_cart)
        return core_error(c, MPI_ERR_ARG, fn);
    long nodes = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return core_error(c, MPI_ERR_DIMS, fn);
        nodes *= dims[i];
        if (nodes > c->size)
            return core_error_msg(c, MPI_ERR_TOPOLOGY, fn, "more grid points than ranks");
    }
    core_comm_t *nc;
    int err = comm_topo_split(r, c, (int)nodes, cart_new(ndims, dims, periods), &nc);
    if (err)
        return core_error(c, err, fn);
    *comm_cart = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    COMM_ENTER(r, s, "MPI_Cartdim_get");
    CART_GET(c, t, s, comm, "MPI_Cartdim_get");
    if (!ndims)
        return core_error(c, MPI_ERR_ARG, "MPI_Cartdim_get");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_get = PMPI_Cart_get
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    COMM_ENTER(r, s, "MPI_Cart_get");
    CART_GET(c, t, s, comm, "MPI_Cart_get");
    if (maxdims < t->ndims || (t->ndims > 0 && (!dims || !periods || !coords)))
        return core_error(c, MPI_ERR_ARG, "MPI_Cart_get");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    coords_of(t, c->rank, coords);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_coords = PMPI_Cart_coords
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    COMM_ENTER(r, s, "MPI_Cart_coords");
    CART_GET(c, t, s, comm, "MPI_Cart_coords");
    if (rank < 0 || rank >= c->size)
        return core_error(c, MPI_ERR_RANK, "MPI_Cart_coords");
    if (maxdims < t->ndims || (t->ndims > 0 && !coords))
        return core_error(c, MPI_ERR_ARG, "MPI_Cart_coords");
    coords_of(t, rank, coords);
    return MPI_SUCCESS;
}

/* Rank at coords (periodic dimensions wrap); MPI_PROC_NULL if a coordinate
 * of a non-periodic dimension is off the grid. */
static int rank_at(const comm_topo_t *t, const int *coords)
{
    int rank = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (t->periods[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            return MPI_PROC_NULL;
        rank = rank * d + x;
    }
    return rank;
}

#pragma weak MPI_Cart_rank = PMPI_Cart_rank
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    COMM_ENTER(r, s, "MPI_Cart_rank");
    CART_GET(c, t, s, comm, "MPI_Cart_rank");
    if (!rank || (t->ndims > 0 && !coords))
        return core_error(c, MPI_ERR_ARG, "MPI_Cart_rank");
    int x = rank_at(t, coords);
    if (x == MPI_PROC_NULL)
        return core_error_msg(c, MPI_ERR_ARG, "MPI_Cart_rank", "coordinate outside a non-periodic dimension");
    *rank = x;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_shift = PMPI_Cart_shift
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    COMM_ENTER(r, s, "MPI_Cart_shift");
    CART_GET(c, t, s, comm, "MPI_Cart_shift");
    if (direction < 0 || direction >= t->ndims)
        return core_error(c, MPI_ERR_DIMS, "MPI_Cart_shift");
    if (!rank_source || !rank_dest)
        return core_error(c, MPI_ERR_ARG, "MPI_Cart_shift");
    int *coords = malloc((size_t)t->ndims * sizeof *coords);
    if (!coords)
        return core_error(c, MPI_ERR_NO_MEM, "MPI_Cart_shift");
    coords_of(t, c->rank, coords);
    int mine = coords[direction];
    /* long: a huge disp must not wrap around int */
    long to = (long)mine + disp, from = (long)mine - disp, d = t->dims[direction];
    if (t->periods[direction]) {
        to = ((to % d) + d) % d;
        from = ((from % d) + d) % d;
    }
    coords[direction] = (int)(to >= 0 && to < d ? to : -1);
    *rank_dest = to >= 0 && to < d ? rank_at(t, coords) : MPI_PROC_NULL;
    coords[direction] = (int)(from >= 0 && from < d ? from : -1);
    *rank_source = from >= 0 && from < d ? rank_at(t, coords) : MPI_PROC_NULL;
    free(coords);
    return MPI_SUCCESS;
}

/* One new communicator per combination of the dropped coordinates, ranked
 * by the kept ones: a split with color = dropped index, key = kept index. */
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    COMM_ENTER(r, s, "MPI_Cart_sub");
    CART_GET(c, t, s, comm, "MPI_Cart_sub");
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return core_error(c, MPI_ERR_ARG, "MPI_Cart_sub");
    int n = t->ndims, kept = 0, color = 0, key = 0;
    int *coords = malloc((size_t)(n > 0 ? n : 1) * sizeof *coords);
    int *dims = malloc((size_t)(n > 0 ? n : 1) * sizeof *dims);
    int *periods = malloc((size_t)(n > 0 ? n : 1) * sizeof *periods);
    if (!coords || !dims || !periods) {
        free(coords), free(dims), free(periods);
        return core_error(c, MPI_ERR_NO_MEM, "MPI_Cart_sub");
    }
    coords_of(t, c->rank, coords);
    for (int i = 0; i < n; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + coords[i];
            dims[kept] = t->dims[i];
            periods[kept++] = t->periods[i];
        } else {
            color = color * t->dims[i] + coords[i];
        }
    }
    core_comm_t *nc;
    int err = comm_split_internal(r, c, color, key, &nc);
    if (!err) {
        nc->topo = cart_new(kept, dims, periods);
        if (!nc->topo) {
            comm_drop_handle(s, nc);
            err = MPI_ERR_NO_MEM;
        }
    }
    free(coords), free(dims), free(periods);
    if (err)
        return core_error(c, err, "MPI_Cart_sub");
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* Where the calling rank would sit in such a grid: we never reorder. */
#pragma weak MPI_Cart_map = PMPI_Cart_map
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    (void)periods;
    COMM_ENTER(r, s, "MPI_Cart_map");
    COMM_GET(c, s, comm, "MPI_Cart_map");
    if (ndims < 0 || (ndims > 0 && !dims) || !newrank)
        return core_error(c, MPI_ERR_ARG, "MPI_Cart_map");
    long nodes = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return core_error(c, MPI_ERR_DIMS, "MPI_Cart_map");
        nodes *= dims[i];
        if (nodes > c->size)
            return core_error(c, MPI_ERR_DIMS, "MPI_Cart_map");
    }
    *newrank = c->rank < nodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- MPI_Dims_create ----
 * The free dimensions get the factorization of the remaining node count
 * whose largest and smallest factors are closest ("as close to each other
 * as possible"; ties: more_even), in non-increasing order.
 * An exhaustive search over non-increasing divisor sequences: divisor
 * counts are small (at most 1600 below 2^31), and the search prunes every
 * branch whose spread already exceeds the best one. */

typedef struct {
    const int *divs; /* divisors of the count, ascending */
    int ndivs, k;
    int *cur, *best;
    long best_spread; /* -1: none found yet */
} dims_search_t;

/* Between factorizations of equal spread: the one whose smallest factors
 * are larger, compared from the smallest up -- what MPICH answers (its
 * test suite checks 75,000 cases), e.g. 21x16x15 for 5040 rather than
 * 20x18x14, and 13x9x8x6 for 5616 rather than 13x12x6x6. */
static bool more_even(const int *a, const int *b, int k)
{
    for (int i = k - 1; i >= 0; i--)
        if (a[i] != b[i])
            return a[i] > b[i];
    return false;
}

static void dims_search(dims_search_t *ds, int depth, long rest, long maxd)
{
    if (depth == ds->k - 1) { /* the last factor is what is left */
        if (rest > maxd)
            return;
        ds->cur[depth] = (int)rest;
        long spread = ds->cur[0] - rest;
        if (ds->best_spread < 0 || spread < ds->best_spread ||
            (spread == ds->best_spread && more_even(ds->cur, ds->best, ds->k))) {
            ds->best_spread = spread;
            for (int i = 0; i < ds->k; i++)
                ds->best[i] = ds->cur[i];
        }
        return;
    }
    for (int j = ds->ndivs - 1; j >= 0; j--) {
        long d = ds->divs[j];
        if (d > maxd || rest % d)
            continue;
        /* the remaining factors are <= d, so d^(factors left) >= rest */
        long p = 1;
        for (int i = depth; i < ds->k && p < rest; i++)
            p *= d;
        if (p < rest)
            break; /* smaller divisors fall short as well */
        if (depth > 0 && ds->best_spread >= 0 && ds->cur[0] - d > ds->best_spread)
            break; /* every later factor is smaller still */
        ds->cur[depth] = (int)d;
        dims_search(ds, depth + 1, rest / d, d);
    }
}

/* Fills out[k] with the best non-increasing factorization of m (m >= 1). */
static int balanced_factors(int m, int k, int *out)
{
    int ndivs = 0, cap = 64;
    int *divs = malloc((size_t)cap * sizeof *divs), *cur = malloc((size_t)k * sizeof *cur);
    if (!divs || !cur) {
        free(divs), free(cur);
        return MPI_ERR_NO_MEM;
    }
    int hi_start = 0;
    for (long d = 1; d * d <= m; d++) { /* small ones ascending, then their partners */
        if (m % d)
            continue;
        if (ndivs + 2 > cap) {
            cap *= 2;
            int *t = realloc(divs, (size_t)cap * sizeof *divs);
            if (!t) {
                free(divs), free(cur);
                return MPI_ERR_NO_MEM;
            }
            divs = t;
        }
        divs[ndivs++] = (int)d;
        hi_start = ndivs;
    }
    if (2 * hi_start > cap) { /* room for the partners too */
        int *t = realloc(divs, (size_t)(2 * hi_start) * sizeof *divs);
        if (!t) {
            free(divs), free(cur);
            return MPI_ERR_NO_MEM;
        }
        divs = t;
    }
    for (int i = hi_start - 1; i >= 0; i--)
        if ((long)divs[i] * divs[i] != m)
            divs[ndivs++] = m / divs[i];
    dims_search_t ds = { divs, ndivs, k, cur, out, -1 };
    dims_search(&ds, 0, m, m);
    free(divs), free(cur);
    return MPI_SUCCESS;
}

#pragma weak MPI_Dims_create = PMPI_Dims_create
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    P2P_ENTER(r, "MPI_Dims_create");
    if (nnodes <= 0 || ndims < 0 || (ndims > 0 && !dims))
        return core_error(NULL, MPI_ERR_ARG, "MPI_Dims_create");
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return core_error(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
        if (dims[i] == 0)
            nfree++;
        else if ((fixed *= dims[i]) > nnodes)
            return core_error_msg(NULL, MPI_ERR_DIMS, "MPI_Dims_create", "fixed dimensions exceed nnodes");
    }
    if (nnodes % fixed || (nfree == 0 && fixed != nnodes))
        return core_error_msg(NULL, MPI_ERR_DIMS, "MPI_Dims_create", "nnodes is not a multiple of the fixed dims");
    if (nfree == 0)
        return MPI_SUCCESS;
    int *f = malloc((size_t)nfree * sizeof *f);
    int err = f ? balanced_factors((int)(nnodes / fixed), nfree, f) : MPI_ERR_NO_MEM;
    if (err) {
        free(f);
        return core_error(NULL, err, "MPI_Dims_create");
    }
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[j++];
    free(f);
    return MPI_SUCCESS;
}
