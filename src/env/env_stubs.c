/* Functions of MPI 3.1 that AMPI-UCX does not implement yet but that codes
 * reference (OSU micro-benchmarks 7.4 among them), so that such codes link
 * unchanged.  Calling one raises MPI_ERR_UNSUPPORTED_OPERATION on the
 * communicator involved: with the default
 * MPI_ERRORS_ARE_FATAL the job ends with a message naming the function.
 * docs/unsupported.md lists them; remove a line here when implementing one. */
#include "pt2pt/p2p_api.h"

/* The parameters exist only to give each stub its exact C prototype (mpi.h
 * checks it); a stub reads none of them. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static __attribute__((unused)) int unsupported(MPI_Comm comm, const char *fn)
{
    p2p_rank_t *r = p2p_self();
    if (!r || !r->core.initialized || r->core.finalized)
        return core_not_initialized(fn);
    core_comm_t *c = comm == MPI_COMM_NULL ? NULL : p2p_comm(r, comm);
    return core_error(c, MPI_ERR_UNSUPPORTED_OPERATION, fn);
}

#define STUB_PRAGMA(x) _Pragma(#x)
/* MPI_name is a weak alias of PMPI_name, like every entry point. */
#define STUB(name, params, comm)                              \
    STUB_PRAGMA(weak MPI_##name = PMPI_##name)                \
    int PMPI_##name params { return unsupported(comm, "MPI_" #name); }
