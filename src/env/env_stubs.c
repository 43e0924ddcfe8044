/* Functions of MPI 3.1 that AMPI-UCX does not implement yet but that codes
 * reference (OSU micro-benchmarks 7.4 among them), so that such codes link
 * unchanged.  Calling one raises MPI_ERR_UNSUPPORTED_OPERATION on the
 * communicator involved (windows: on MPI_COMM_WORLD): with the default
 * MPI_ERRORS_ARE_FATAL the job ends with a message naming the function.
 * docs/unsupported.md lists them; remove a line here when implementing one. */
#include "pt2pt/p2p_api.h"

/* The parameters exist only to give each stub its exact C prototype (mpi.h
 * checks it); a stub reads none of them. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static int unsupported(MPI_Comm comm, const char *fn)
{
    p2p_rank_t *r = p2p_self();
    if (!r || !r->initialized || r->finalized)
        return env_not_initialized(fn);
    comm_t *c = comm == MPI_COMM_NULL ? NULL : p2p_comm(r, comm);
    return env_error(c, MPI_ERR_UNSUPPORTED_OPERATION, fn);
}

#define STUB_PRAGMA(x) _Pragma(#x)
/* MPI_name is a weak alias of PMPI_name, like every entry point. */
#define STUB(name, params, comm)                              \
    STUB_PRAGMA(weak MPI_##name = PMPI_##name)                \
    int PMPI_##name params { return unsupported(comm, "MPI_" #name); }

/* one-sided communication (RMA) */
STUB(Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win), comm)
STUB(Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win), comm)
STUB(Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
                           comm)
STUB(Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win), comm)
STUB(Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr), MPI_COMM_NULL)
STUB(Win_attach, (MPI_Win win, void *base, MPI_Aint size), MPI_COMM_NULL)
STUB(Win_detach, (MPI_Win win, const void *base), MPI_COMM_NULL)
STUB(Win_free, (MPI_Win *win), MPI_COMM_NULL)
STUB(Win_get_group, (MPI_Win win, MPI_Group *group), MPI_COMM_NULL)
STUB(Win_fence, (int assert, MPI_Win win), MPI_COMM_NULL)
STUB(Win_start, (MPI_Group group, int assert, MPI_Win win), MPI_COMM_NULL)
STUB(Win_complete, (MPI_Win win), MPI_COMM_NULL)
STUB(Win_post, (MPI_Group group, int assert, MPI_Win win), MPI_COMM_NULL)
STUB(Win_wait, (MPI_Win win), MPI_COMM_NULL)
STUB(Win_test, (MPI_Win win, int *flag), MPI_COMM_NULL)
STUB(Win_lock, (int lock_type, int rank, int assert, MPI_Win win), MPI_COMM_NULL)
STUB(Win_unlock, (int rank, MPI_Win win), MPI_COMM_NULL)
STUB(Win_lock_all, (int assert, MPI_Win win), MPI_COMM_NULL)
STUB(Win_unlock_all, (MPI_Win win), MPI_COMM_NULL)
STUB(Win_flush, (int rank, MPI_Win win), MPI_COMM_NULL)
STUB(Win_flush_local, (int rank, MPI_Win win), MPI_COMM_NULL)
STUB(Win_flush_all, (MPI_Win win), MPI_COMM_NULL)
STUB(Win_flush_local_all, (MPI_Win win), MPI_COMM_NULL)
STUB(Win_sync, (MPI_Win win), MPI_COMM_NULL)
STUB(Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win), MPI_COMM_NULL)
STUB(Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
           int target_count, MPI_Datatype target_datatype, MPI_Win win), MPI_COMM_NULL)
STUB(Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                  MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
                  MPI_COMM_NULL)
STUB(Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                      int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                      int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), MPI_COMM_NULL)
STUB(Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                    MPI_Aint target_disp, MPI_Op op, MPI_Win win), MPI_COMM_NULL)
STUB(Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
                        int target_rank, MPI_Aint target_disp, MPI_Win win), MPI_COMM_NULL)
STUB(Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request),
            MPI_COMM_NULL)
STUB(Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request), MPI_COMM_NULL)
STUB(Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                   MPI_Request *request), MPI_COMM_NULL)
STUB(Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request),
                       MPI_COMM_NULL)

/* windows: error handlers, caching, names and info (MPI 3.1 6.7, 8.3) */
STUB(Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler),
      MPI_COMM_NULL)
STUB(Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler), MPI_COMM_NULL)
STUB(Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler), MPI_COMM_NULL)
STUB(Win_call_errhandler, (MPI_Win win, int errorcode), MPI_COMM_NULL)
STUB(Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn,
      MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state), MPI_COMM_NULL)
STUB(Win_free_keyval, (int *win_keyval), MPI_COMM_NULL)
STUB(Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val), MPI_COMM_NULL)
STUB(Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag), MPI_COMM_NULL)
STUB(Win_delete_attr, (MPI_Win win, int win_keyval), MPI_COMM_NULL)
STUB(Win_set_name, (MPI_Win win, const char *win_name), MPI_COMM_NULL)
STUB(Win_get_name, (MPI_Win win, char *win_name, int *resultlen), MPI_COMM_NULL)
STUB(Win_set_info, (MPI_Win win, MPI_Info info), MPI_COMM_NULL)
STUB(Win_get_info, (MPI_Win win, MPI_Info *info_used), MPI_COMM_NULL)
