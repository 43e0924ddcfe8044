/* User error handlers, and user error classes, codes and strings.
 *
 * Handlers: MPI_ERRHANDLER_NULL, MPI_ERRORS_ARE_FATAL and MPI_ERRORS_RETURN
 * are 0..2; a created handler is an index from ENV_ERRH_FIRST into a
 * process-wide table (the ranks of a process run on one PE and switch only
 * inside MPI calls: no locks).  MPI_Errhandler_free only gives back one of
 * the program's handles (MPI_Comm_get_errhandler hands out one more):
 * objects that use the handler keep calling it (MPI 3.1 8.3.4), and an entry
 * is never reused.
 *
 * Codes: user classes and codes continue after MPI_ERR_LASTCODE, in one
 * process-wide numbering; each remembers its class and its string.  The
 * MPI_LASTUSEDCODE attribute follows the largest.
 *
 * The error dispatch (src/core, below this layer) reaches these tables
 * through the hooks registered by register_hooks(): they are registered
 * when the first handler or code is made, as nothing can name a user
 * handler or code before that. */
#include "env/env_errh.h"
#include "comm/comm.h"
#include "core/core_err.h"
#include "pt2pt/p2p_api.h"

#include <stdlib.h>
#include <string.h>

#define ENV_ERRH_FIRST 3
#define ENV_ERRH_SPAN 0x5000 /* handles the table may use; windows number theirs above */

typedef struct {
    env_errh_kind_t kind;
    void (*fn)(void); /* a Comm/Win/File errhandler function */
    int refs;         /* handles the program holds (creation, each get): MPI_Errhandler_free gives one back */
} errh_t;

static errh_t *handlers; /* by handle - ENV_ERRH_FIRST */
static int nhandlers, handler_cap;

typedef struct {
    int cls;
    char *string;
} user_code_t;

static user_code_t *codes; /* by code - (MPI_ERR_LASTCODE + 1) */
static int ncodes, code_cap;

static MPI_Errhandler file_default = MPI_ERRORS_RETURN;

static errh_t *handler_get(MPI_Errhandler eh)
{
    int i = eh - ENV_ERRH_FIRST;
    return i >= 0 && i < nhandlers ? &handlers[i] : NULL;
}

bool env_errh_usable(MPI_Errhandler eh, env_errh_kind_t kind)
{
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN)
        return true;
    errh_t *h = handler_get(eh);
    return h && h->refs > 0 && h->kind == kind;
}

bool env_errh_invoke(MPI_Errhandler eh, void *object, int errorcode)
{
    errh_t *h = handler_get(eh);
    if (!h)
        return false;
    int code = errorcode;
    switch (h->kind) { /* each kind's function type, as MPI declares it */
    case ENV_ERRH_COMM: ((MPI_Comm_errhandler_function *)(void *)h->fn)((MPI_Comm *)object, &code); break;
    case ENV_ERRH_WIN: ((MPI_Win_errhandler_function *)(void *)h->fn)((MPI_Win *)object, &code); break;
    case ENV_ERRH_FILE: ((MPI_File_errhandler_function *)(void *)h->fn)((MPI_File *)object, &code); break;
    case ENV_ERRH_SESSION: ((MPI_Session_errhandler_function *)(void *)h->fn)((MPI_Session *)object, &code); break;
    }
    return true;
}

static void register_hooks(void)
{
    static bool registered;
    if (!registered) {
        core_err_set_user_hooks(&(core_err_user_hooks_t){
            .class_of = env_errh_class_of, .string = env_errh_string, .invoke = env_errh_invoke });
        registered = true;
    }
}

MPI_Errhandler env_errh_get(MPI_Errhandler eh)
{
    errh_t *h = handler_get(eh);
    if (h)
        h->refs++;
    return eh;
}

int env_errh_create(env_errh_kind_t kind, void (*fn)(void), MPI_Errhandler *errhandler, const char *func)
{
    if (!p2p_self()) /* no MPI_Init needed: a session's handler comes before its MPI_Session_init */
        return core_not_initialized(func);
    if (!fn || !errhandler)
        return core_error(NULL, MPI_ERR_ARG, func);
    if (nhandlers == ENV_ERRH_SPAN)
        return core_error(NULL, MPI_ERR_NO_MEM, func);
    if (nhandlers == handler_cap) {
        int cap = handler_cap ? 2 * handler_cap : 8;
        errh_t *t = realloc(handlers, (size_t)cap * sizeof *t);
        if (!t)
            return core_error(NULL, MPI_ERR_NO_MEM, func);
        handlers = t;
        handler_cap = cap;
    }
    register_hooks();
    handlers[nhandlers] = (errh_t){ kind, fn, 1 };
    *errhandler = ENV_ERRH_FIRST + nhandlers++;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler)
{
    return env_errh_create(ENV_ERRH_COMM, (void (*)(void))comm_errhandler_fn, errhandler, "MPI_Comm_create_errhandler");
}

#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    return env_errh_create(ENV_ERRH_FILE, (void (*)(void))file_errhandler_fn, errhandler, "MPI_File_create_errhandler");
}

/* Predefined handlers are never really freed: the handle is nulled.
 * MPI_ERRHANDLER_NULL is no handler at all (MPI_ERR_ARG). */
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler || *errhandler == MPI_ERRHANDLER_NULL)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
    errh_t *h = handler_get(*errhandler);
    if (h) {
        if (h->refs <= 0)
            return core_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
        h->refs--;
    } else if (*errhandler > MPI_ERRORS_RETURN && *errhandler < ENV_ERRH_FIRST + ENV_ERRH_SPAN) {
        return core_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free"); /* none of ours */
    }
    /* handles past our range are the windows' own (src/rma/rma_attr.c),
     * which live as long as the process: only the handle is nulled */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* ---- files: only MPI_FILE_NULL exists, whose handler is the default ---- */

MPI_Errhandler env_errh_file_default(void) { return file_default; }

#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    P2P_ENTER(r, "MPI_File_set_errhandler");
    (void)r;
    if (file != MPI_FILE_NULL) /* no file can be open */
        return MPI_ERR_FILE;
    if (!env_errh_usable(errhandler, ENV_ERRH_FILE))
        return MPI_ERR_ARG;
    file_default = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    P2P_ENTER(r, "MPI_File_get_errhandler");
    (void)r;
    if (file != MPI_FILE_NULL)
        return MPI_ERR_FILE;
    if (!errhandler)
        return MPI_ERR_ARG;
    *errhandler = file_default;
    errh_t *h = handler_get(file_default);
    if (h)
        h->refs++;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    P2P_ENTER(r, "MPI_File_call_errhandler");
    (void)r;
    if (fh != MPI_FILE_NULL)
        return MPI_ERR_FILE;
    if (file_default == MPI_ERRORS_ARE_FATAL)
        return core_error_msg(NULL, errorcode, "MPI_File_call_errhandler", "the files' handler is MPI_ERRORS_ARE_FATAL");
    env_errh_invoke(file_default, &fh, errorcode);
    return MPI_SUCCESS;
}

/* ---- user error classes, codes and strings ---- */

int env_errh_class_of(int code)
{
    int i = code - (MPI_ERR_LASTCODE + 1);
    return i >= 0 && i < ncodes ? codes[i].cls : -1;
}

const char *env_errh_string(int code)
{
    int i = code - (MPI_ERR_LASTCODE + 1);
    if (i < 0 || i >= ncodes)
        return NULL;
    return codes[i].string ? codes[i].string : "";
}

/* A new code of class cls (-1: a new class, its own); its value or -1. */
static int new_code(int cls)
{
    if (ncodes == code_cap) {
        int cap = code_cap ? 2 * code_cap : 16;
        user_code_t *t = realloc(codes, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        codes = t;
        code_cap = cap;
    }
    register_hooks();
    int code = MPI_ERR_LASTCODE + 1 + ncodes;
    codes[ncodes++] = (user_code_t){ cls < 0 ? code : cls, NULL };
    comm_attr_lastusedcode = code;
    return code;
}

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
int PMPI_Add_error_class(int *errorclass)
{
    P2P_ENTER(r, "MPI_Add_error_class");
    (void)r;
    if (!errorclass)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Add_error_class");
    int code = new_code(-1);
    if (code < 0)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_class");
    *errorclass = code;
    return MPI_SUCCESS;
}

#pragma weak MPI_Add_error_code = PMPI_Add_error_code
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    P2P_ENTER(r, "MPI_Add_error_code");
    (void)r;
    /* a predefined class (MPI_SUCCESS is none) or a user class */
    bool is_class = (errorclass > MPI_SUCCESS && errorclass <= MPI_ERR_LASTCODE) ||
                    env_errh_class_of(errorclass) == errorclass;
    if (!errorcode || !is_class)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
    int code = new_code(errorclass);
    if (code < 0)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_code");
    *errorcode = code;
    return MPI_SUCCESS;
}

/* Only user classes and codes take strings (MPI 3.1 8.5). */
#pragma weak MPI_Add_error_string = PMPI_Add_error_string
int PMPI_Add_error_string(int errorcode, const char *string)
{
    P2P_ENTER(r, "MPI_Add_error_string");
    (void)r;
    int i = errorcode - (MPI_ERR_LASTCODE + 1);
    if (!string || i < 0 || i >= ncodes || strlen(string) >= MPI_MAX_ERROR_STRING)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
    char *copy = strdup(string);
    if (!copy)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string");
    free(codes[i].string);
    codes[i].string = copy;
    return MPI_SUCCESS;
}

/* ---- communicators ---- */

static core_comm_t *comm_of(MPI_Comm comm, const char *func)
{
    p2p_rank_t *r = p2p_self();
    core_comm_t *c = r ? p2p_comm(r, comm) : NULL;
    if (!c)
        core_error(NULL, MPI_ERR_COMM, func);
    return c;
}

/* Duplicates and other communicators made from this one take the handler
 * over (comm_create.c). */
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    P2P_ENTER(r, "MPI_Comm_set_errhandler");
    (void)r;
    core_comm_t *c = comm_of(comm, "MPI_Comm_set_errhandler");
    if (!c)
        return MPI_ERR_COMM;
    if (!env_errh_usable(errhandler, ENV_ERRH_COMM))
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler");
    c->errh = errhandler;
    return MPI_SUCCESS;
}

/* The MPI-1 name, removed in MPI 3.0 but still used. */
#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    P2P_ENTER(r, "MPI_Comm_get_errhandler");
    (void)r;
    core_comm_t *c = comm_of(comm, "MPI_Comm_get_errhandler");
    if (!c)
        return MPI_ERR_COMM;
    if (!errhandler)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_get_errhandler");
    *errhandler = c->errh;
    errh_t *h = handler_get(c->errh);
    if (h) /* a handle of the caller's own, to free */
        h->refs++;
    return MPI_SUCCESS;
}
