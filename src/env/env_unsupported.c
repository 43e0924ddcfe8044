/* The error path of the functions that are defined but not supported yet. */
#include "env/env_unsupported.h"
#include "pt2pt/p2p_api.h"

int env_unsupported(MPI_Comm comm, const char *func)
{
    p2p_rank_t *r = p2p_self();
    if (!r || !r->core.initialized || r->core.finalized)
        return core_not_initialized(func);
    core_comm_t *c = comm == MPI_COMM_NULL ? NULL : p2p_comm(r, comm);
    return core_error(c, MPI_ERR_UNSUPPORTED_OPERATION, func);
}

int env_unsupported_file(const char *func)
{
    p2p_rank_t *r = p2p_self();
    if (!r || !r->core.initialized || r->core.finalized)
        return core_not_initialized(func);
    util_debug("%s: MPI_ERR_UNSUPPORTED_OPERATION (files: MPI_ERRORS_RETURN)", func);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
