/* topo_graph.c - graph and distributed graph topologies.
 *
 *  - Dist_graph_create_adjacent, weighted: rank r sends to r+1 and r+3 and
 *    receives from r-1 and r-3 (mod size), weights made from both ends;
 *    neighbours, weights and counts checked in order, then a message along
 *    every edge whose contents name the sender.  Unweighted: the flag is 0.
 *  - Dist_graph_create with every edge named by a rank other than its ends
 *    (rank r names the edges of rank r+1): neighbour lists compared as
 *    multisets, with weights.
 *  - Dist_graph_create with rank 0 naming every edge and the other ranks,
 *    which have none to name, passing NULL for every array (weights too):
 *    the same neighbours; and with no edges at all and NULL weights, a
 *    weighted graph (MPI_UNWEIGHTED is not NULL).
 *  - Graph_create over a ring with chords on all but the last rank:
 *    Graphdims_get, Graph_get, Graph_neighbors(_count), Topo_test. */
#include "mpitest.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }
static int weight(int from, int to) { return 10 * from + to + 1; }

/* Out-edges of rank r: r -> r+1, r -> r+3. */
static void out_edges(int r, int n, int *d) { d[0] = mod(r + 1, n), d[1] = mod(r + 3, n); }
static void in_edges(int r, int n, int *s) { s[0] = mod(r - 1, n), s[1] = mod(r - 3, n); }

static int test_adjacent(int me, int n)
{
    int errs = 0, src[2], dst[2], sw[2], dw[2];
    in_edges(me, n, src);
    out_edges(me, n, dst);
    for (int i = 0; i < 2; i++) {
        sw[i] = weight(src[i], me);
        dw[i] = weight(me, dst[i]);
    }
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &g);
    int status = -1, indeg = -1, outdeg = -1, weighted = -1;
    MPI_Topo_test(g, &status);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    if (status != MPI_DIST_GRAPH || indeg != 2 || outdeg != 2 || !weighted)
        return mt_fail(me, "adjacent: topo %d in %d out %d weighted %d", status, indeg, outdeg, weighted);
    int gs[2] = { -1, -1 }, gsw[2] = { -1, -1 }, gd[2] = { -1, -1 }, gdw[2] = { -1, -1 };
    MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw);
    for (int i = 0; i < 2; i++)
        if (gs[i] != src[i] || gsw[i] != sw[i] || gd[i] != dst[i] || gdw[i] != dw[i])
            errs += mt_fail(me, "adjacent neighbour %d: in %d (w %d) out %d (w %d), expected %d (%d) %d (%d)", i,
                            gs[i], gsw[i], gd[i], gdw[i], src[i], sw[i], dst[i], dw[i]);
    /* a message along every edge */
    int got[2] = { -1, -1 }, sent[2];
    MPI_Request rq[4];
    for (int i = 0; i < 2; i++) {
        MPI_Irecv(&got[i], 1, MPI_INT, gs[i], 40 + i, g, &rq[i]);
        sent[i] = weight(me, gd[i]);
        MPI_Isend(&sent[i], 1, MPI_INT, gd[i], 40 + i, g, &rq[2 + i]);
    }
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 2; i++)
        if (got[i] != weight(src[i], me))
            errs += mt_fail(me, "edge message %d from %d: %d, expected %d", i, src[i], got[i], weight(src[i], me));
    MPI_Comm_free(&g);

    MPI_Comm u;
    /* gcc 12 takes MPI_UNWEIGHTED, a constant address, for an empty array
     * where a library declares the weights as arrays (Open MPI does) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                   0, &u);
#pragma GCC diagnostic pop
    MPI_Dist_graph_neighbors_count(u, &indeg, &outdeg, &weighted);
    if (indeg != 2 || outdeg != 2 || weighted)
        errs += mt_fail(me, "unweighted: in %d out %d weighted %d", indeg, outdeg, weighted);
    MPI_Comm_free(&u);
    return errs;
}

/* Each element of want[] must be matched by one of got[] (pairs). */
static int same_multiset(const int *got, const int *gotw, const int *want, const int *wantw, int n)
{
    int used[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < n && !found; j++)
            if (!used[j] && got[j] == want[i] && gotw[j] == wantw[i])
                used[j] = found = 1;
        if (!found)
            return 0;
    }
    return 1;
}

static int test_general(int me, int n)
{
    int errs = 0;
    /* rank me names the two out-edges of rank me+1 */
    int owner = mod(me + 1, n), src[1] = { owner }, deg[1] = { 2 }, dst[2], w[2];
    out_edges(owner, n, dst);
    for (int i = 0; i < 2; i++)
        w[i] = weight(owner, dst[i]);
    MPI_Comm g;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, w, MPI_INFO_NULL, 0, &g);
    int indeg = -1, outdeg = -1, weighted = -1;
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    if (indeg != 2 || outdeg != 2 || !weighted)
        return mt_fail(me, "general: in %d out %d weighted %d", indeg, outdeg, weighted);
    int gs[2], gsw[2], gd[2], gdw[2], ws[2], wsw[2], wd[2], wdw[2];
    MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw);
    in_edges(me, n, ws);
    out_edges(me, n, wd);
    for (int i = 0; i < 2; i++) {
        wsw[i] = weight(ws[i], me);
        wdw[i] = weight(me, wd[i]);
    }
    if (!same_multiset(gs, gsw, ws, wsw, 2))
        errs += mt_fail(me, "general: in-neighbours %d(%d) %d(%d), expected %d(%d) %d(%d)", gs[0], gsw[0], gs[1],
                        gsw[1], ws[0], wsw[0], ws[1], wsw[1]);
    if (!same_multiset(gd, gdw, wd, wdw, 2))
        errs += mt_fail(me, "general: out-neighbours %d(%d) %d(%d), expected %d(%d) %d(%d)", gd[0], gdw[0], gd[1],
                        gdw[1], wd[0], wdw[0], wd[1], wdw[1]);
    MPI_Comm_free(&g);
    return errs;
}

/* Rank 0 names every rank's two out-edges; the others name nothing. */
static int test_root_names_all(int me, int n)
{
    int errs = 0;
    int *src = mt_malloc((size_t)n * sizeof(int)), *deg = mt_malloc((size_t)n * sizeof(int));
    int *dst = mt_malloc((size_t)n * 2 * sizeof(int)), *w = mt_malloc((size_t)n * 2 * sizeof(int));
    for (int r = 0; r < n; r++) {
        src[r] = r;
        deg[r] = 2;
        out_edges(r, n, dst + 2 * r);
        for (int i = 0; i < 2; i++)
            w[2 * r + i] = weight(r, dst[2 * r + i]);
    }
    MPI_Comm g;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = me == 0 ? MPI_Dist_graph_create(MPI_COMM_WORLD, n, src, deg, dst, w, MPI_INFO_NULL, 0, &g)
                     : MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, NULL, MPI_INFO_NULL, 0, &g);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(src), free(deg), free(dst), free(w);
    if (rc != MPI_SUCCESS) /* the others would wait for this rank's part: end the job */
        return mt_fail(me, "Dist_graph_create with NULL arrays on the ranks naming no edges: error %d", rc);
    int indeg = -1, outdeg = -1, weighted = -1;
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    if (indeg != 2 || outdeg != 2 || !weighted)
        errs += mt_fail(me, "root names all: in %d out %d weighted %d", indeg, outdeg, weighted);
    int gs[2], gsw[2], gd[2], gdw[2], ws[2], wsw[2], wd[2], wdw[2];
    MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw);
    in_edges(me, n, ws);
    out_edges(me, n, wd);
    for (int i = 0; i < 2; i++) {
        wsw[i] = weight(ws[i], me);
        wdw[i] = weight(me, wd[i]);
    }
    if (!same_multiset(gs, gsw, ws, wsw, 2) || !same_multiset(gd, gdw, wd, wdw, 2))
        errs += mt_fail(me, "root names all: neighbours differ from the edges rank 0 named");
    MPI_Comm_free(&g);
    MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, NULL, MPI_INFO_NULL, 0, &g);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted);
    if (indeg != 0 || outdeg != 0 || !weighted)
        errs += mt_fail(me, "no edges, NULL weights: in %d out %d weighted %d", indeg, outdeg, weighted);
    MPI_Comm_free(&g);
    return errs;
}

/* Graph over nodes = size - 1 ranks (all of them with one rank): node i
 * is joined to i-1 and i+1 (a ring) and node 0 also to every even node. */
static int graph_edges(int nodes, int *index, int *edges)
{
    int e = 0;
    for (int i = 0; i < nodes; i++) {
        if (nodes > 1) {
            edges[e++] = mod(i - 1, nodes);
            edges[e++] = mod(i + 1, nodes);
        }
        for (int j = 2; i == 0 && j < nodes; j += 2)
            edges[e++] = j;
        index[i] = e;
    }
    return e;
}

static int test_graph(int me, int size)
{
    int errs = 0, nodes = size > 1 ? size - 1 : 1;
    int *index = mt_malloc((size_t)nodes * sizeof *index), *edges = mt_malloc((size_t)(3 * nodes + 2) * sizeof *edges);
    int nedges = graph_edges(nodes, index, edges);
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, nodes, index, edges, 0, &g);
    if (me >= nodes) {
        errs += g == MPI_COMM_NULL ? 0 : mt_fail(me, "rank outside the graph got a communicator");
    } else {
        int status = -1, nn = -1, ne = -1;
        MPI_Topo_test(g, &status);
        MPI_Graphdims_get(g, &nn, &ne);
        if (status != MPI_GRAPH || nn != nodes || ne != nedges)
            errs += mt_fail(me, "graph: topo %d nodes %d edges %d, expected %d %d", status, nn, ne, nodes, nedges);
        int *gi = mt_malloc((size_t)nodes * sizeof *gi), *ge = mt_malloc((size_t)(nedges + 1) * sizeof *ge);
        MPI_Graph_get(g, nodes, nedges, gi, ge);
        for (int i = 0; i < nodes; i++)
            if (gi[i] != index[i])
                errs += mt_fail(me, "Graph_get index[%d] = %d, expected %d", i, gi[i], index[i]);
        for (int i = 0; i < nedges; i++)
            if (ge[i] != edges[i])
                errs += mt_fail(me, "Graph_get edges[%d] = %d, expected %d", i, ge[i], edges[i]);
        for (int r = 0; r < nodes; r++) {
            int cnt = -1, lo = r ? index[r - 1] : 0;
            MPI_Graph_neighbors_count(g, r, &cnt);
            MPI_Graph_neighbors(g, r, nedges, ge);
            if (cnt != index[r] - lo)
                errs += mt_fail(me, "node %d: %d neighbours, expected %d", r, cnt, index[r] - lo);
            for (int k = 0; k < cnt && k < index[r] - lo; k++)
                if (ge[k] != edges[lo + k])
                    errs += mt_fail(me, "node %d neighbour %d: %d, expected %d", r, k, ge[k], edges[lo + k]);
        }
        free(gi);
        free(ge);
        MPI_Comm_free(&g);
    }
    free(index);
    free(edges);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), size = mt_size(), errs = 0;
    errs += test_adjacent(me, size);
    errs += test_general(me, size);
    errs += test_root_names_all(me, size);
    errs += test_graph(me, size);
    mt_finish(errs, "topo_graph OK");
    MPI_Finalize();
    return 0;
}
