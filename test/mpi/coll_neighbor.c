/* coll_neighbor.c - neighbourhood collectives (MPI 3.1) on a 2-D Cartesian
 * grid (periodic, non-periodic, mixed), a graph (ring, MPI_Graph_create) and
 * a distributed graph (ring plus one skip edge 0 -> 2: unequal in- and
 * out-degrees, and multi-edges / self-loops on 1 or 2 ranks).  Every
 * function runs blocking (one at a time) and nonblocking (all five started,
 * then MPI_Waitall).
 *
 * Data of the alltoall family is keyed by the receiving rank and slot, so a
 * block delivered to the wrong slot does not compare equal: MPI pairs my
 * send slot s with the receiver's slot dst_slot[s] (Cartesian: s ^ 1, what
 * goes to the -1 neighbour arrives in its +1 slot; graphs: the k-th edge
 * a -> b with the k-th one at b).  Blocks of MPI_PROC_NULL neighbours and
 * the gaps between blocks must keep the sentinel.  The w variants mix
 * MPI_INT with a vector type (2 ints, stride 2) on the two sides. */
#include "mpitest.h"

#define MAXD 4  /* slots of any topology here */
#define REG 16  /* ints per slot region in the v/w layouts */
#define K 3     /* elements per block of the uniform variants */
#define SENT (-1)

enum { AG, AGV, A2A, A2AV, A2AW, NKINDS };
static const char *const kind_name[NKINDS] = { "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw" };

typedef struct {
    const char *name;
    MPI_Comm comm;
    int me, indeg, outdeg;
    int src[MAXD], dst[MAXD], dst_slot[MAXD];
} topo_t;

typedef struct {
    int kind;
    int sb[MAXD * REG], rb[MAXD * REG], want[MAXD * REG];
    int sc[MAXD], sd[MAXD], rc[MAXD], rd[MAXD];
    MPI_Aint sbd[MAXD], rbd[MAXD];
    MPI_Datatype st[MAXD], rt[MAXD];
} op_t;

static int gval(int s, int i, uint32_t key) { return (int)(mt_hash((uint32_t)s, 0xA11, (uint32_t)i, key) & 0x7fffffff); }
static int pval(int j, int slot, int i, uint32_t key) { return (int)(mt_hash((uint32_t)j, (uint32_t)slot, (uint32_t)i, key) & 0x7fffffff); }
static int cnt(int j, int slot) { return 1 + (3 * j + slot) % 4; }
static int gcnt(int s) { return 1 + s % 3; }
/* Int index of the t-th int of (count, type) data: MPI_INT, or vec2 elements of 3 ints with data at 0 and 2. */
static int place(int vec, int t) { return vec ? 3 * (t / 2) + 2 * (t % 2) : t; }

/* Graph edges (the same function on every rank): dist graph out-lists, or
 * the symmetric ring of MPI_Graph_create; in-lists list each source once
 * per edge, in (source, edge) order. */
static int out_edges(int dist, int r, int n, int *out)
{
    if (!dist) {
        out[0] = (r - 1 + n) % n, out[1] = (r + 1) % n;
        return 2;
    }
    out[0] = (r + 1) % n;
    if (r == 0)
        out[1] = 2 % n;
    return r == 0 ? 2 : 1;
}

static int in_edges(int dist, int j, int n, int *in)
{
    int k = 0, out[MAXD];
    for (int s = 0; s < n; s++) {
        int m = out_edges(dist, s, n, out);
        for (int e = 0; e < m; e++)
            if (out[e] == j)
                in[k++] = s;
    }
    return dist ? k : out_edges(0, j, n, in); /* MPI_Graph: the neighbour list itself */
}

static void graph_topo(topo_t *t, int dist, int me, int n)
{
    t->name = dist ? "dist graph" : "graph";
    t->outdeg = out_edges(dist, me, n, t->dst);
    t->indeg = in_edges(dist, me, n, t->src);
    for (int s = 0; s < t->outdeg; s++) { /* the k-th edge me -> J is the k-th time me shows in J's in-list */
        int J = t->dst[s], k = 0, in[MAXD], m = in_edges(dist, J, n, in);
        for (int e = 0; e < s; e++)
            k += t->dst[e] == J;
        for (int e = 0; e < m; e++)
            if (in[e] == me && k-- == 0)
                t->dst_slot[s] = e;
    }
    if (dist) {
        /* Open MPI's mpi.h declares the weights as arrays: gcc 12 takes
         * MPI_UNWEIGHTED, a constant address, for an empty one */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, t->indeg, t->src, MPI_UNWEIGHTED, t->outdeg, t->dst,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &t->comm);
#pragma GCC diagnostic pop
    } else {
        int *index = mt_malloc((size_t)n * sizeof *index), *edges = mt_malloc(2 * (size_t)n * sizeof *edges);
        for (int r = 0; r < n; r++) {
            index[r] = 2 * (r + 1);
            out_edges(0, r, n, &edges[2 * r]);
        }
        MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t->comm);
        free(index), free(edges);
    }
    t->me = me;
}

static void cart_topo(topo_t *t, const int periods[2], const char *name, int n)
{
    int dims[2] = { 0, 0 };
    MPI_Dims_create(n, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &t->comm);
    MPI_Comm_rank(t->comm, &t->me);
    t->name = name;
    t->indeg = t->outdeg = 4;
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(t->comm, d, 1, &t->src[2 * d], &t->src[2 * d + 1]);
    for (int s = 0; s < 4; s++) {
        t->dst[s] = t->src[s];
        t->dst_slot[s] = s ^ 1;
    }
}

/* Fills the send data, the arguments and the expected receive buffer. */
static void prepare(op_t *o, const topo_t *t, MPI_Datatype vec2, uint32_t key)
{
    int me = t->me;
    for (int i = 0; i < MAXD * REG; i++)
        o->sb[i] = 12345, o->rb[i] = o->want[i] = SENT;
    for (int i = 0; i < K && (o->kind == AG || o->kind == AGV); i++)
        o->sb[i] = gval(me, i, key); /* allgatherv sends gcnt(me) <= K of them */
    for (int s = 0; s < t->outdeg; s++) {
        int J = t->dst[s], js = t->dst_slot[s], real = J != MPI_PROC_NULL, m = real ? cnt(J, js) : 1;
        o->sc[s] = m, o->sd[s] = s * REG + 2 - s % 2;
        int vec = s % 2, ints = 2 * m; /* w: every other slot sends vec2 elements */
        o->st[s] = vec ? vec2 : MPI_INT;
        o->sbd[s] = (MPI_Aint)((s * REG + 1) * (int)sizeof(int));
        for (int i = 0; i < REG - 2; i++) {
            int v = real ? pval(J, js, i, key) : 12345;
            if (o->kind == A2A && i < K)
                o->sb[s * K + i] = v;
            else if (o->kind == A2AV && i < m)
                o->sb[o->sd[s] + i] = v;
            else if (o->kind == A2AW && i < ints)
                o->sb[s * REG + 1 + place(vec, i)] = v;
        }
        o->sc[s] = o->kind == A2AW ? (vec ? m : ints) : m;
    }
    for (int j = 0; j < t->indeg; j++) {
        int S = t->src[j], real = S != MPI_PROC_NULL, m = cnt(me, j), vec = (j + 1) % 2;
        o->rc[j] = o->kind == AGV ? (real ? gcnt(S) : 2) : o->kind == A2AW ? (vec ? m : 2 * m) : m;
        o->rd[j] = j * REG + 1 + j % 2;
        o->rt[j] = vec ? vec2 : MPI_INT;
        o->rbd[j] = (MPI_Aint)((j * REG + 2) * (int)sizeof(int));
        for (int i = 0; real && i < REG - 2; i++) {
            if (o->kind == AG && i < K)
                o->want[j * K + i] = gval(S, i, key);
            else if (o->kind == AGV && i < o->rc[j])
                o->want[o->rd[j] + i] = gval(S, i, key);
            else if (o->kind == A2A && i < K)
                o->want[j * K + i] = pval(me, j, i, key);
            else if (o->kind == A2AV && i < m)
                o->want[o->rd[j] + i] = pval(me, j, i, key);
            else if (o->kind == A2AW && i < 2 * m)
                o->want[j * REG + 2 + place(vec, i)] = pval(me, j, i, key);
        }
    }
}

static void start(op_t *o, const topo_t *t, int nb, MPI_Request *req)
{
    MPI_Comm c = t->comm;
    switch (o->kind) {
    case AG:
        nb ? MPI_Ineighbor_allgather(o->sb, K, MPI_INT, o->rb, K, MPI_INT, c, req)
           : MPI_Neighbor_allgather(o->sb, K, MPI_INT, o->rb, K, MPI_INT, c);
        break;
    case AGV:
        nb ? MPI_Ineighbor_allgatherv(o->sb, gcnt(t->me), MPI_INT, o->rb, o->rc, o->rd, MPI_INT, c, req)
           : MPI_Neighbor_allgatherv(o->sb, gcnt(t->me), MPI_INT, o->rb, o->rc, o->rd, MPI_INT, c);
        break;
    case A2A:
        nb ? MPI_Ineighbor_alltoall(o->sb, K, MPI_INT, o->rb, K, MPI_INT, c, req)
           : MPI_Neighbor_alltoall(o->sb, K, MPI_INT, o->rb, K, MPI_INT, c);
        break;
    case A2AV:
        nb ? MPI_Ineighbor_alltoallv(o->sb, o->sc, o->sd, MPI_INT, o->rb, o->rc, o->rd, MPI_INT, c, req)
           : MPI_Neighbor_alltoallv(o->sb, o->sc, o->sd, MPI_INT, o->rb, o->rc, o->rd, MPI_INT, c);
        break;
    case A2AW:
        nb ? MPI_Ineighbor_alltoallw(o->sb, o->sc, o->sbd, o->st, o->rb, o->rc, o->rbd, o->rt, c, req)
           : MPI_Neighbor_alltoallw(o->sb, o->sc, o->sbd, o->st, o->rb, o->rc, o->rbd, o->rt, c);
        break;
    }
}

static int check(const op_t *o, const topo_t *t, int nb, int wr)
{
    for (int i = 0; i < MAXD * REG; i++)
        if (o->rb[i] != o->want[i])
            return mt_fail(wr, "%s%s on %s: rb[%d] (slot %d) = %d, expected %d", nb ? "ineighbor_" : "neighbor_",
                           kind_name[o->kind], t->name, i, i / REG, o->rb[i], o->want[i]);
    return 0;
}

/* Open MPI up to 5.0 (libnbc, open-mpi/ompi#14430) pairs the blocks of the
 * nonblocking alltoall family wrongly where one rank is both Cartesian
 * neighbours of a dimension; its blocking forms are right.  So that
 * --ompi runs check the test and not that bug (whose mismatched v/w counts
 * even end the job with MPI_ERR_TRUNCATE), those calls are skipped there --
 * never with our library. */
static int known_foreign_bug(const topo_t *t, int kind)
{
#ifdef OPEN_MPI
    for (int s = 0; t->dst_slot[0] == 1 && s + 1 < t->indeg; s += 2)
        if (kind >= A2A && t->src[s] == t->src[s + 1] && t->src[s] != MPI_PROC_NULL)
            return 1;
#else
    (void)t, (void)kind;
#endif
    return 0;
}

static int run_topo(topo_t *t, int ti, MPI_Datatype vec2, int wr)
{
    int errs = 0;
    op_t *ops = mt_malloc(NKINDS * sizeof *ops);
    MPI_Request reqs[NKINDS];
    for (int nb = 0; nb < 2; nb++) {
        for (int k = 0; k < NKINDS; k++) {
            ops[k].kind = k;
            prepare(&ops[k], t, vec2, (uint32_t)(100 * ti + 10 * nb + k));
            if (!nb) {
                start(&ops[k], t, 0, NULL);
                errs += check(&ops[k], t, 0, wr);
            }
        }
        if (nb) {
            for (int k = 0; k < NKINDS; k++) {
                reqs[k] = MPI_REQUEST_NULL;
                if (!known_foreign_bug(t, k))
                    start(&ops[k], t, 1, &reqs[k]);
            }
            MPI_Waitall(NKINDS, reqs, MPI_STATUSES_IGNORE);
            for (int k = 0; k < NKINDS; k++) {
                if (known_foreign_bug(t, k))
                    mt_note("rank %d: ineighbor_%s on %s skipped (Open MPI bug)", wr, kind_name[k], t->name);
                else
                    errs += check(&ops[k], t, 1, wr);
            }
        }
    }
    free(ops);
    MPI_Comm_free(&t->comm);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), n = mt_size(), errs = 0;
    MPI_Datatype vec2;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec2);
    MPI_Type_commit(&vec2);
    static const int per[3][2] = { { 1, 1 }, { 0, 0 }, { 1, 0 } };
    static const char *const per_name[3] = { "periodic cart", "non-periodic cart", "mixed cart" };
    for (int i = 0; i < 5; i++) {
        topo_t t;
        if (i < 3)
            cart_topo(&t, per[i], per_name[i], n);
        else
            graph_topo(&t, i == 4, me, n);
        errs += run_topo(&t, i, vec2, me);
    }
    MPI_Type_free(&vec2);
    mt_finish(errs, "coll_neighbor OK");
    MPI_Finalize();
    return 0;
}
