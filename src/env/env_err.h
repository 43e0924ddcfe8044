/* Error handling: every MPI entry point reports failures through
 * env_error(), which applies the communicator's error handler
 * (MPI_ERRORS_ARE_FATAL by default: message + job abort). */
#ifndef AMPI_ENV_ERR_H
#define AMPI_ENV_ERR_H

#include "mpi.h"
#include "comm/comm.h"

/* c may be NULL: errors not tied to a communicator use MPI_COMM_WORLD's handler. */
int env_error(comm_t *c, int errclass, const char *func);
int env_error_msg(comm_t *c, int errclass, const char *func, const char *detail);
/* Called by entry points used outside MPI_Init..MPI_Finalize. */
int env_not_initialized(const char *func);
const char *env_error_name(int errclass);
_Noreturn void env_abort_job(int status, const char *msg);

#endif
