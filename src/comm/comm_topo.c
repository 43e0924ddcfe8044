/* Topology objects and MPI_Topo_test.  A topology only describes how the
 * application sees its ranks: every constructor keeps the rank order
 * (reorder is a hint we do not take), so the Cartesian and graph maps are
 * the identity on the first nodes. */
#include "comm/comm_internal.h"

#include <stdlib.h>

comm_topo_t *comm_topo_alloc(comm_topo_kind_t kind)
{
    comm_topo_t *t = calloc(1, sizeof *t);
    if (t) {
        t->refs = 1;
        t->kind = kind;
    }
    return t;
}

void comm_topo_release(comm_topo_t *t)
{
    if (!t || --t->refs > 0)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sourceweights);
    free(t->dests);
    free(t->destweights);
    free(t);
}

#pragma weak MPI_Topo_test = PMPI_Topo_test
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    COMM_ENTER(r, s, "MPI_Topo_test");
    COMM_GET(c, s, comm, "MPI_Topo_test");
    if (!status)
        return core_error(c, MPI_ERR_ARG, "MPI_Topo_test");
    *status = c->topo ? (int)c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
