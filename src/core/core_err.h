/* Error dispatch: every MPI entry point reports failures through
 * core_error(), which applies the communicator's error handler
 * (MPI_ERRORS_ARE_FATAL by default: message + job abort). */
#ifndef AMPI_CORE_ERR_H
#define AMPI_CORE_ERR_H

#include "mpi.h"
#include "core/core_comm.h"

/* c may be NULL: errors not tied to a communicator use MPI_COMM_WORLD's handler. */
int core_error(core_comm_t *c, int errclass, const char *func);
int core_error_msg(core_comm_t *c, int errclass, const char *func, const char *detail);
/* Called by entry points used outside MPI_Init..MPI_Finalize. */
int core_not_initialized(const char *func);
const char *core_error_name(int errclass);
/* The fatal path: ends every process of the job with status and msg.  The
 * process start-up registers how (through the launcher, src/env); before
 * that the message goes to stderr and this process exits. */
_Noreturn void core_abort_job(int status, const char *msg);
void core_set_abort(void (*abort_job)(int status, const char *msg));

#endif
