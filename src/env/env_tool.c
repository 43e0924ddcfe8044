/* The MPI tool information interface (MPI 3.1 14.3): the library exposes no
 * control or performance variables and no categories yet, so every query
 * finds none.  The interface itself works: it may be initialized (also
 * before MPI_Init) and finalized as often as MPI says, sessions can be
 * created and freed, and each call returns the class MPI 3.1 names for its
 * case (MPI_T functions return codes; they never call error handlers). */
#define AMPI_BUILDING_LIBRARY 1
#include "mpi.h"

#include <stdatomic.h>
#include <stdlib.h>

/* MPI_T_init_thread calls minus MPI_T_finalize calls. */
static atomic_int t_inits;

static int t_ready(void) { return atomic_load(&t_inits) > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED; }

/* Sessions hold nothing, but each is a distinct handle that must be freed. */
struct AMPI_T_pvar_session_s {
    int unused;
};

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
int PMPI_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    /* as MPI_Init_thread: ranks are user-level threads found through their OS thread */
    *provided = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
    atomic_fetch_add(&t_inits, 1);
    return MPI_SUCCESS;
}

#pragma weak MPI_T_finalize = PMPI_T_finalize
int PMPI_T_finalize(void)
{
    int n = atomic_load(&t_inits);
    while (n > 0 && !atomic_compare_exchange_weak(&t_inits, &n, n - 1))
        ;
    return n > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
}

/* "How many": none. */
#define T_NONE(name)                                   \
    int PMPI_T_##name(int *num)                        \
    {                                                  \
        int err = t_ready();                           \
        if (err)                                       \
            return err;                                \
        if (!num)                                      \
            return MPI_T_ERR_INVALID;                  \
        *num = 0;                                      \
        return MPI_SUCCESS;                            \
    }

#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
T_NONE(cvar_get_num)
#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
T_NONE(pvar_get_num)
#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
T_NONE(category_get_num)

/* The variable/category set never changes. */
#pragma weak MPI_T_category_changed = PMPI_T_category_changed
T_NONE(category_changed)

#pragma GCC diagnostic ignored "-Wunused-parameter"

/* No index is valid: there is nothing to index. */
#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                         int *readonly, int *continuous, int *atomic)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_INDEX;
}

#define T_LIST(name)                                                           \
    int PMPI_T_category_get_##name(int cat_index, int len, int indices[])      \
    {                                                                          \
        int err = t_ready();                                                   \
        return err ? err : MPI_T_ERR_INVALID_INDEX;                            \
    }
#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
T_LIST(cvars)
#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
T_LIST(pvars)
#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
T_LIST(categories)

/* No name is known. */
#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_NAME;
}

#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_NAME;
}

#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_NAME;
}

/* No enumeration exists, so no enumeration handle is valid. */
#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_HANDLE;
}

/* Handles: none can be allocated, so none can be used or freed. */
#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_INDEX;
}

#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    int err = t_ready();
    return err ? err : MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    int err = t_ready();
    if (err)
        return err;
    if (!session)
        return MPI_T_ERR_INVALID;
    *session = calloc(1, sizeof **session);
    return *session ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
}

#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    int err = t_ready();
    if (err)
        return err;
    if (!session || *session == MPI_T_PVAR_SESSION_NULL)
        return MPI_T_ERR_INVALID_SESSION;
    free(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    int err = t_ready();
    if (err)
        return err;
    return session == MPI_T_PVAR_SESSION_NULL ? MPI_T_ERR_INVALID_SESSION : MPI_T_ERR_INVALID_INDEX;
}

/* Every call on a pvar handle: the session is checked first, then the
 * handle, which cannot be valid. */
static int pvar_call(MPI_T_pvar_session session)
{
    int err = t_ready();
    if (err)
        return err;
    return session == MPI_T_PVAR_SESSION_NULL ? MPI_T_ERR_INVALID_SESSION : MPI_T_ERR_INVALID_HANDLE;
}

#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle) { return pvar_call(session); }
#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) { return pvar_call(session); }
#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) { return pvar_call(session); }
#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) { return pvar_call(session); }
#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return pvar_call(session);
}
#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) { return pvar_call(session); }
#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_call(session);
}
