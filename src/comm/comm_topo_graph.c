/* Graph and distributed graph topologies. */
#include "comm/comm_internal.h"

#include <stdlib.h>

#define TOPO_GET(C, T, S, h, want, fn)                               \
    COMM_GET(C, S, h, fn);                                           \
    comm_topo_t *T = C->topo;                                        \
    if (UTIL_UNLIKELY(!T || T->kind != (want)))                      \
        return core_error(C, MPI_ERR_TOPOLOGY, fn)

/* ---- graph (the whole graph is known to every rank) ---- */

static comm_topo_t *graph_new(int nnodes, const int *index, const int *edges)
{
    comm_topo_t *t = comm_topo_alloc(COMM_TOPO_GRAPH);
    if (!t)
        return NULL;
    t->nnodes = nnodes;
    t->index = comm_copy_ints(index, nnodes);
    t->edges = comm_copy_ints(edges, nnodes > 0 ? index[nnodes - 1] : 0);
    if (!t->index || !t->edges) {
        comm_topo_release(t);
        return NULL;
    }
    return t;
}

#pragma weak MPI_Graph_create = PMPI_Graph_create
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *comm_graph)
{
    (void)reorder;
    const char *fn = "MPI_Graph_create";
    COMM_ENTER(r, s, fn);
    COMM_GET(c, s, comm_old, fn);
    COMM_INTRA_ONLY(c, fn);
    if (nnodes < 0 || nnodes > c->size || (nnodes > 0 && (!index || !edges)) || !comm_graph)
        return core_error(c, MPI_ERR_ARG, fn);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return core_error_msg(c, MPI_ERR_ARG, fn, "index[] must not decrease");
    for (int e = 0; e < (nnodes > 0 ? index[nnodes - 1] : 0); e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return core_error_msg(c, MPI_ERR_ARG, fn, "edge to a node outside the graph");
    core_comm_t *nc;
    int err = comm_topo_split(r, c, nnodes, graph_new(nnodes, index, edges), &nc);
    if (err)
        return core_error(c, err, fn);
    *comm_graph = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    COMM_ENTER(r, s, "MPI_Graphdims_get");
    TOPO_GET(c, t, s, comm, COMM_TOPO_GRAPH, "MPI_Graphdims_get");
    if (!nnodes || !nedges)
        return core_error(c, MPI_ERR_ARG, "MPI_Graphdims_get");
    *nnodes = t->nnodes;
    *nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_get = PMPI_Graph_get
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    COMM_ENTER(r, s, "MPI_Graph_get");
    TOPO_GET(c, t, s, comm, COMM_TOPO_GRAPH, "MPI_Graph_get");
    int nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges))
        return core_error(c, MPI_ERR_ARG, "MPI_Graph_get");
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = t->index[i];
    for (int e = 0; e < nedges && e < maxedges; e++)
        edges[e] = t->edges[e];
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    COMM_ENTER(r, s, "MPI_Graph_neighbors_count");
    TOPO_GET(c, t, s, comm, COMM_TOPO_GRAPH, "MPI_Graph_neighbors_count");
    if (rank < 0 || rank >= t->nnodes)
        return core_error(c, MPI_ERR_RANK, "MPI_Graph_neighbors_count");
    if (!nneighbors)
        return core_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors_count");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    COMM_ENTER(r, s, "MPI_Graph_neighbors");
    TOPO_GET(c, t, s, comm, COMM_TOPO_GRAPH, "MPI_Graph_neighbors");
    if (rank < 0 || rank >= t->nnodes)
        return core_error(c, MPI_ERR_RANK, "MPI_Graph_neighbors");
    if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors))
        return core_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors");
    int lo = rank ? t->index[rank - 1] : 0, hi = t->index[rank];
    for (int e = lo, k = 0; e < hi && k < maxneighbors; e++, k++)
        neighbors[k] = t->edges[e];
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_map = PMPI_Graph_map
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    (void)index, (void)edges;
    COMM_ENTER(r, s, "MPI_Graph_map");
    COMM_GET(c, s, comm, "MPI_Graph_map");
    if (nnodes < 0 || nnodes > c->size || !newrank)
        return core_error(c, MPI_ERR_ARG, "MPI_Graph_map");
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- distributed graph (each rank knows its own neighbours) ---- */

static bool unweighted(const int *w) { return w == MPI_UNWEIGHTED; }

/* Checks n neighbour ranks of a communicator of `size` ranks. */
static bool valid_peers(const int *peers, int n, int size)
{
    for (int i = 0; i < n; i++)
        if (peers[i] < 0 || peers[i] >= size)
            return false;
    return true;
}

/* Weights are stored only when given (not MPI_UNWEIGHTED/WEIGHTS_EMPTY). */
static int *copy_weights(const int *w, int n)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY || n == 0 ? NULL : comm_copy_ints(w, n);
}

/* A distributed graph topology; sources/dests copied, weights if given. */
static comm_topo_t *dist_new(int indegree, const int *sources, const int *sw, int outdegree, const int *dests,
                             const int *dw, bool weighted)
{
    comm_topo_t *t = comm_topo_alloc(COMM_TOPO_DIST);
    if (!t)
        return NULL;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = comm_copy_ints(sources, indegree);
    t->dests = comm_copy_ints(dests, outdegree);
    if (weighted) {
        t->sourceweights = copy_weights(sw, indegree);
        t->destweights = copy_weights(dw, outdegree);
    }
    if (!t->sources || !t->dests || (weighted && ((indegree && !t->sourceweights) ||
                                                  (outdegree && !t->destweights)))) {
        comm_topo_release(t);
        return NULL;
    }
    return t;
}

/* Same group and order as the parent (reorder is not taken), topology t. */
static int dist_comm(p2p_rank_t *r, core_comm_t *c, comm_topo_t *t, MPI_Comm *out)
{
    core_comm_t *nc;
    int err = comm_dup_internal(r, c, &nc);
    if (!err && !t) {
        comm_drop_handle(comm_state(r), nc);
        err = MPI_ERR_NO_MEM;
    }
    if (err) {
        comm_topo_release(t);
        return err;
    }
    nc->topo = t;
    *out = nc->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int *sourceweights, int outdegree, const int destinations[],
                                    const int *destweights, MPI_Info info, int reorder,
                                    MPI_Comm *comm_dist_graph)
{
    (void)info, (void)reorder;
    const char *fn = "MPI_Dist_graph_create_adjacent";
    COMM_ENTER(r, s, fn);
    COMM_GET(c, s, comm_old, fn);
    COMM_INTRA_ONLY(c, fn);
    if (indegree < 0 || outdegree < 0 || (indegree > 0 && (!sources || !sourceweights)) ||
        (outdegree > 0 && (!destinations || !destweights)) || !comm_dist_graph)
        return core_error(c, MPI_ERR_ARG, fn);
    if (!valid_peers(sources, indegree, c->size) || !valid_peers(destinations, outdegree, c->size))
        return core_error(c, MPI_ERR_RANK, fn);
    bool weighted = !unweighted(sourceweights) && !unweighted(destweights);
    comm_topo_t *t = dist_new(indegree, sources, sourceweights, outdegree, destinations, destweights, weighted);
    int err = dist_comm(r, c, t, comm_dist_graph);
    return err ? core_error(c, err, fn) : MPI_SUCCESS;
}

/* One edge as it travels to one of its ends: to its source as an
 * out-edge, to its destination as an in-edge. */
typedef struct {
    int out; /* 1: (us -> peer), 0: (peer -> us) */
    int peer, weight;
} dist_edge_t;

/* Every rank names some edges (sources[i] -> destinations[...]); an
 * alltoall of counts and an alltoallv of the edges deliver each edge to
 * both of its ends.  Neighbours come in the order of the ranks that named
 * them, then in the order they were named. */
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int *weights, MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph)
{
    (void)info, (void)reorder;
    const char *fn = "MPI_Dist_graph_create";
    COMM_ENTER(r, s, fn);
    COMM_GET(c, s, comm_old, fn);
    COMM_INTRA_ONLY(c, fn);
    if (n < 0 || (n > 0 && (!sources || !degrees)) || !comm_dist_graph)
        return core_error(c, MPI_ERR_ARG, fn);
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return core_error(c, MPI_ERR_ARG, fn);
        nedges += degrees[i];
    }
    /* a rank with no edges may pass NULL for the arrays it has nothing in,
     * weights too (then it counts as weighted, as MPI_WEIGHTS_EMPTY) */
    if (nedges > 0 && (!destinations || !weights))
        return core_error(c, MPI_ERR_ARG, fn);
    if (!valid_peers(sources, n, c->size) || !valid_peers(destinations, (int)nedges, c->size))
        return core_error(c, MPI_ERR_RANK, fn);
    bool weighted = !unweighted(weights);
    int size = c->size;
    int *scount = calloc((size_t)size, sizeof *scount), *rcount = malloc((size_t)size * sizeof *rcount);
    int *sdisp = malloc((size_t)size * sizeof *sdisp), *rdisp = malloc((size_t)size * sizeof *rdisp);
    dist_edge_t *sbuf = malloc((size_t)(2 * nedges + 1) * sizeof *sbuf);
    dist_edge_t *rbuf = NULL;
    int err = scount && rcount && sdisp && rdisp && sbuf ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err) /* the others are in the alltoall already: nothing sane is left */
        core_abort_job(MPI_ERR_NO_MEM, "MPI_Dist_graph_create: out of memory");
    /* count, then place: edge e goes to sources[i] (out) and to its dest (in) */
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scount[sources[i]]++;
            scount[destinations[e]]++;
        }
    for (int p = 0, off = 0; p < size; p++) {
        sdisp[p] = off;
        off += scount[p];
        scount[p] = 0;
    }
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int w = weighted ? weights[e] : 1;
            sbuf[sdisp[sources[i]] + scount[sources[i]]++] = (dist_edge_t){ 1, destinations[e], w };
            sbuf[sdisp[destinations[e]] + scount[destinations[e]]++] = (dist_edge_t){ 0, sources[i], w };
        }
    /* counts and offsets in units of ints, as the alltoallv sees them */
    const int k = (int)(sizeof(dist_edge_t) / sizeof(int));
    for (int p = 0; p < size; p++)
        scount[p] *= k, sdisp[p] *= k;
    err = PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old);
    long total = 0;
    for (int p = 0; !err && p < size; p++) {
        rdisp[p] = (int)total;
        total += rcount[p];
    }
    if (!err && !(rbuf = malloc((size_t)(total / k + 1) * sizeof *rbuf)))
        core_abort_job(MPI_ERR_NO_MEM, "MPI_Dist_graph_create: out of memory");
    if (!err)
        err = PMPI_Alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT, comm_old);
    comm_topo_t *t = NULL;
    if (!err) {
        int nrecv = (int)(total / k), indeg = 0, outdeg = 0;
        for (int i = 0; i < nrecv; i++) {
            if (rbuf[i].out)
                outdeg++;
            else
                indeg++;
        }
        int *src = malloc((size_t)(indeg + 1) * sizeof *src), *sw = malloc((size_t)(indeg + 1) * sizeof *sw);
        int *dst = malloc((size_t)(outdeg + 1) * sizeof *dst), *dw = malloc((size_t)(outdeg + 1) * sizeof *dw);
        if (src && sw && dst && dw) {
            for (int i = 0, a = 0, b = 0; i < nrecv; i++) {
                if (rbuf[i].out) {
                    dst[b] = rbuf[i].peer;
                    dw[b++] = rbuf[i].weight;
                } else {
                    src[a] = rbuf[i].peer;
                    sw[a++] = rbuf[i].weight;
                }
            }
            t = dist_new(indeg, src, sw, outdeg, dst, dw, weighted);
        }
        free(src), free(sw), free(dst), free(dw);
        err = dist_comm(r, c, t, comm_dist_graph);
    }
    free(scount), free(rcount), free(sdisp), free(rdisp), free(sbuf), free(rbuf);
    return err ? core_error(c, err, fn) : MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    COMM_ENTER(r, s, "MPI_Dist_graph_neighbors_count");
    TOPO_GET(c, t, s, comm, COMM_TOPO_DIST, "MPI_Dist_graph_neighbors_count");
    if (!indegree || !outdegree || !weighted)
        return core_error(c, MPI_ERR_ARG, "MPI_Dist_graph_neighbors_count");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int *sourceweights,
                              int maxoutdegree, int destinations[], int *destweights)
{
    COMM_ENTER(r, s, "MPI_Dist_graph_neighbors");
    TOPO_GET(c, t, s, comm, COMM_TOPO_DIST, "MPI_Dist_graph_neighbors");
    if (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && !sources) ||
        (maxoutdegree > 0 && !destinations))
        return core_error(c, MPI_ERR_ARG, "MPI_Dist_graph_neighbors");
    bool sw = t->weighted && sourceweights && !unweighted(sourceweights) && sourceweights != MPI_WEIGHTS_EMPTY;
    bool dw = t->weighted && destweights && !unweighted(destweights) && destweights != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < t->indegree && i < maxindegree; i++) {
        sources[i] = t->sources[i];
        if (sw)
            sourceweights[i] = t->sourceweights[i];
    }
    for (int i = 0; i < t->outdegree && i < maxoutdegree; i++) {
        destinations[i] = t->dests[i];
        if (dw)
            destweights[i] = t->destweights[i];
    }
    return MPI_SUCCESS;
}
