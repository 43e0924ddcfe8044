/* The error path of the functions that are defined but not supported yet. */
#include "env/env_unsupported.h"
#include "env/env_errh.h"
#include "pt2pt/p2p_api.h"

#include <stdio.h>

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
    /* the handler of MPI_FILE_NULL, the only file there is */
    MPI_Errhandler eh = env_errh_file_default();
    if (eh == MPI_ERRORS_ARE_FATAL) {
        char msg[256];
        snprintf(msg, sizeof msg, "rank %d: %s: MPI_ERR_UNSUPPORTED_OPERATION: MPI-IO is not supported yet "
                 "(the files' error handler is MPI_ERRORS_ARE_FATAL: ending the job)", r->core.world, func);
        core_abort_job(MPI_ERR_UNSUPPORTED_OPERATION, msg);
    }
    MPI_File fh = MPI_FILE_NULL;
    env_errh_invoke(eh, &fh, MPI_ERR_UNSUPPORTED_OPERATION);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}
