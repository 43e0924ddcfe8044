/* Error dispatch: every MPI entry point reports failures through
 * core_error(), which applies the communicator's error handler
 * (MPI_ERRORS_ARE_FATAL by default: message + job abort). */
#ifndef AMPI_CORE_ERR_H
#define AMPI_CORE_ERR_H

#include <stdbool.h>
#include "mpi.h"
#include "core/core_comm.h"

/* c may be NULL: errors not tied to a communicator use MPI_COMM_WORLD's handler. */
int core_error(core_comm_t *c, int errclass, const char *func);
int core_error_msg(core_comm_t *c, int errclass, const char *func, const char *detail);
/* The same for an object of another kind (a session): applies its handler
 * eh, object pointing to the object's handle, which a user handler gets. */
int core_error_apply(MPI_Errhandler eh, void *object, int errclass, const char *func, const char *detail);
/* Called by entry points used outside MPI_Init..MPI_Finalize. */
int core_not_initialized(const char *func);
const char *core_error_name(int errclass);
/* The fatal path: ends every process of the job with status and msg.  The
 * process start-up registers how (through the launcher, src/env); before
 * that the message goes to stderr and this process exits. */
_Noreturn void core_abort_job(int status, const char *msg);
void core_set_abort(void (*abort_job)(int status, const char *msg));

/* The program's own error classes, codes and handlers (MPI_Add_error_class,
 * MPI_Comm_create_errhandler & co.) live in src/env, above this layer: env
 * registers these so that the dispatch and MPI_Error_class/_string find
 * them.  Until then (and for a NULL member) there are none. */
typedef struct core_err_user_hooks {
    int (*class_of)(int code);       /* class of a user code (itself for a class); -1: not one */
    const char *(*string)(int code); /* its string ("" if none given); NULL: not a user code */
    /* Calls user handler eh on *object (the MPI_Comm of the failing call)
     * with errorcode; false, calling nothing, if eh is not a user handler. */
    bool (*invoke)(MPI_Errhandler eh, void *object, int errorcode);
} core_err_user_hooks_t;
void core_err_set_user_hooks(const core_err_user_hooks_t *hooks);

#endif
