/* Error classes, their strings, and the error handlers. */
#define AMPI_BUILDING_LIBRARY 1
#include "core/core_err.h"
#include "core/core_rank.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const err_text[MPI_ERR_LASTCODE + 1][2] = {
    [MPI_SUCCESS] = { "MPI_SUCCESS", "no error" },
    [MPI_ERR_BUFFER] = { "MPI_ERR_BUFFER", "invalid buffer pointer, or no room in the attached buffer" },
    [MPI_ERR_COUNT] = { "MPI_ERR_COUNT", "invalid count argument" },
    [MPI_ERR_TYPE] = { "MPI_ERR_TYPE", "invalid datatype" },
    [MPI_ERR_TAG] = { "MPI_ERR_TAG", "invalid tag" },
    [MPI_ERR_COMM] = { "MPI_ERR_COMM", "invalid communicator" },
    [MPI_ERR_RANK] = { "MPI_ERR_RANK", "invalid rank" },
    [MPI_ERR_REQUEST] = { "MPI_ERR_REQUEST", "invalid request" },
    [MPI_ERR_ROOT] = { "MPI_ERR_ROOT", "invalid root" },
    [MPI_ERR_GROUP] = { "MPI_ERR_GROUP", "invalid group" },
    [MPI_ERR_OP] = { "MPI_ERR_OP", "invalid reduction operation" },
    [MPI_ERR_TOPOLOGY] = { "MPI_ERR_TOPOLOGY", "invalid topology" },
    [MPI_ERR_DIMS] = { "MPI_ERR_DIMS", "invalid dimension argument" },
    [MPI_ERR_ARG] = { "MPI_ERR_ARG", "invalid argument" },
    [MPI_ERR_UNKNOWN] = { "MPI_ERR_UNKNOWN", "unknown error" },
    [MPI_ERR_TRUNCATE] = { "MPI_ERR_TRUNCATE", "message truncated: receive buffer too small" },
    [MPI_ERR_OTHER] = { "MPI_ERR_OTHER", "other error" },
    [MPI_ERR_INTERN] = { "MPI_ERR_INTERN", "internal error" },
    [MPI_ERR_IN_STATUS] = { "MPI_ERR_IN_STATUS", "error code is in status" },
    [MPI_ERR_PENDING] = { "MPI_ERR_PENDING", "pending request" },
    [MPI_ERR_KEYVAL] = { "MPI_ERR_KEYVAL", "invalid keyval" },
    [MPI_ERR_NO_MEM] = { "MPI_ERR_NO_MEM", "out of memory" },
    [MPI_ERR_BASE] = { "MPI_ERR_BASE", "invalid base address" },
    [MPI_ERR_INFO_KEY] = { "MPI_ERR_INFO_KEY", "info key too long" },
    [MPI_ERR_INFO_VALUE] = { "MPI_ERR_INFO_VALUE", "info value too long" },
    [MPI_ERR_INFO_NOKEY] = { "MPI_ERR_INFO_NOKEY", "no such info key" },
    [MPI_ERR_SPAWN] = { "MPI_ERR_SPAWN", "spawn error" },
    [MPI_ERR_PORT] = { "MPI_ERR_PORT", "invalid port" },
    [MPI_ERR_SERVICE] = { "MPI_ERR_SERVICE", "invalid service" },
    [MPI_ERR_NAME] = { "MPI_ERR_NAME", "invalid name" },
    [MPI_ERR_WIN] = { "MPI_ERR_WIN", "invalid window" },
    [MPI_ERR_SIZE] = { "MPI_ERR_SIZE", "invalid size" },
    [MPI_ERR_DISP] = { "MPI_ERR_DISP", "invalid displacement" },
    [MPI_ERR_INFO] = { "MPI_ERR_INFO", "invalid info object" },
    [MPI_ERR_LOCKTYPE] = { "MPI_ERR_LOCKTYPE", "invalid lock type" },
    [MPI_ERR_ASSERT] = { "MPI_ERR_ASSERT", "invalid assert" },
    [MPI_ERR_RMA_CONFLICT] = { "MPI_ERR_RMA_CONFLICT", "conflicting RMA accesses" },
    [MPI_ERR_RMA_SYNC] = { "MPI_ERR_RMA_SYNC", "wrong RMA synchronization" },
    [MPI_ERR_RMA_RANGE] = { "MPI_ERR_RMA_RANGE", "RMA target out of range" },
    [MPI_ERR_RMA_ATTACH] = { "MPI_ERR_RMA_ATTACH", "memory cannot be attached" },
    [MPI_ERR_RMA_SHARED] = { "MPI_ERR_RMA_SHARED", "memory cannot be shared" },
    [MPI_ERR_RMA_FLAVOR] = { "MPI_ERR_RMA_FLAVOR", "wrong window flavor" },
    [MPI_ERR_FILE] = { "MPI_ERR_FILE", "invalid file handle" },
    [MPI_ERR_NOT_SAME] = { "MPI_ERR_NOT_SAME", "arguments differ between processes" },
    [MPI_ERR_AMODE] = { "MPI_ERR_AMODE", "invalid access mode" },
    [MPI_ERR_UNSUPPORTED_DATAREP] = { "MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation" },
    [MPI_ERR_UNSUPPORTED_OPERATION] = { "MPI_ERR_UNSUPPORTED_OPERATION",
                                        "operation not supported by AMPI-UCX yet (see README.md)" },
    [MPI_ERR_NO_SUCH_FILE] = { "MPI_ERR_NO_SUCH_FILE", "no such file" },
    [MPI_ERR_FILE_EXISTS] = { "MPI_ERR_FILE_EXISTS", "file exists" },
    [MPI_ERR_BAD_FILE] = { "MPI_ERR_BAD_FILE", "invalid file name" },
    [MPI_ERR_ACCESS] = { "MPI_ERR_ACCESS", "permission denied" },
    [MPI_ERR_NO_SPACE] = { "MPI_ERR_NO_SPACE", "no space left" },
    [MPI_ERR_QUOTA] = { "MPI_ERR_QUOTA", "quota exceeded" },
    [MPI_ERR_READ_ONLY] = { "MPI_ERR_READ_ONLY", "read-only file or file system" },
    [MPI_ERR_FILE_IN_USE] = { "MPI_ERR_FILE_IN_USE", "file in use" },
    [MPI_ERR_DUP_DATAREP] = { "MPI_ERR_DUP_DATAREP", "data representation already defined" },
    [MPI_ERR_CONVERSION] = { "MPI_ERR_CONVERSION", "data conversion error" },
    [MPI_ERR_IO] = { "MPI_ERR_IO", "I/O error" },
};

/* The program's own classes, codes and handlers (core_err.h). */
static core_err_user_hooks_t user_hooks;

void core_err_set_user_hooks(const core_err_user_hooks_t *hooks) { user_hooks = *hooks; }

static int user_class_of(int code) { return user_hooks.class_of ? user_hooks.class_of(code) : -1; }

const char *core_error_name(int c)
{
    int user = user_class_of(c);
    if (user >= 0)
        return c == user ? "user error class" : "user error code";
    return c >= 0 && c <= MPI_ERR_LASTCODE && err_text[c][0] ? err_text[c][0] : "MPI_ERR_UNKNOWN";
}

static const char *error_text(int c)
{
    const char *user = user_hooks.string ? user_hooks.string(c) : NULL;
    if (user)
        return user;
    return c >= 0 && c <= MPI_ERR_LASTCODE && err_text[c][1] ? err_text[c][1] : "unknown error code";
}

static void (*abort_fn)(int status, const char *msg);

void core_set_abort(void (*abort_job)(int status, const char *msg)) { abort_fn = abort_job; }

void core_abort_job(int status, const char *msg)
{
    if (abort_fn)
        abort_fn(status, msg);
    fprintf(stderr, "ampi: %s\n", msg);
    exit(status ? status : 1);
}

int core_error_msg(core_comm_t *c, int errclass, const char *func, const char *detail)
{
    core_rank_t *r = core_self();
    MPI_Errhandler eh = c ? c->errh : r ? r->comms.world.errh : MPI_ERRORS_ARE_FATAL;
    MPI_Comm handle = c ? c->handle : MPI_COMM_WORLD; /* errors of no communicator: MPI_COMM_WORLD's */
    return core_error_apply(eh, &handle, errclass, func, detail);
}

int core_error_apply(MPI_Errhandler eh, void *object, int errclass, const char *func, const char *detail)
{
    if (eh == MPI_ERRORS_RETURN)
        return errclass;
    if (eh != MPI_ERRORS_ARE_FATAL && user_hooks.invoke && user_hooks.invoke(eh, object, errclass))
        return errclass;
    core_rank_t *r = core_self();
    char msg[512];
    snprintf(msg, sizeof msg, "rank %d: %s: %s: %s%s%s (MPI_ERRORS_ARE_FATAL: ending the job)",
             r ? r->world : -1, func, core_error_name(errclass), error_text(errclass), detail ? ": " : "",
             detail ? detail : "");
    core_abort_job(errclass, msg);
}

int core_error(core_comm_t *c, int errclass, const char *func) { return core_error_msg(c, errclass, func, NULL); }

int core_not_initialized(const char *func)
{
    core_rank_t *r = core_self();
    char msg[256];
    if (!r)
        snprintf(msg, sizeof msg, "%s called outside an MPI rank: in a program linked by ampicc, MPI calls come "
                 "from the thread that runs the rank's main (MPI_THREAD_FUNNELED)", func);
    else
        snprintf(msg, sizeof msg, "rank %d: %s called %s", r->world, func,
                 r->finalized ? "after MPI_Finalize" : "before MPI_Init");
    core_abort_job(MPI_ERR_OTHER, msg);
}

#pragma weak MPI_Error_string = PMPI_Error_string
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return MPI_ERR_ARG;
    const char *user = user_hooks.string ? user_hooks.string(errorcode) : NULL;
    int n = user ? snprintf(string, MPI_MAX_ERROR_STRING, "%s", user) /* the string the user gave, alone */
                 : snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", core_error_name(errorcode), error_text(errorcode));
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Error_class = PMPI_Error_class
int PMPI_Error_class(int errorcode, int *errorclass)
{
    int user = user_class_of(errorcode);
    if (user >= 0 && errorclass) {
        *errorclass = user;
        return MPI_SUCCESS;
    }
    if (!errorclass || errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Error_class");
    *errorclass = errorcode; /* every code the library returns is its own class */
    return MPI_SUCCESS;
}
