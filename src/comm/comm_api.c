/* Communicator queries, attributes and error handlers. */
#include "pt2pt/p2p_api.h"

/* Values of the predefined attributes; MPI hands out pointers to them. */
static const int attr_tag_ub = P2P_TAG_UB;
static const int attr_host = MPI_PROC_NULL;
static const int attr_io = MPI_ANY_SOURCE;
static const int attr_wtime_is_global = 0;
static const int attr_appnum = 0;

static comm_t *lookup(MPI_Comm comm, const char *func, p2p_rank_t **rp)
{
    p2p_rank_t *r = p2p_self();
    if (!r || !r->initialized || r->finalized) {
        env_not_initialized(func);
        return NULL;
    }
    *rp = r;
    comm_t *c = p2p_comm(r, comm);
    if (!c)
        env_error(NULL, MPI_ERR_COMM, func);
    return c;
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    p2p_rank_t *r;
    comm_t *c = lookup(comm, "MPI_Comm_rank", &r);
    if (!c)
        return MPI_ERR_COMM;
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    p2p_rank_t *r;
    comm_t *c = lookup(comm, "MPI_Comm_size", &r);
    if (!c)
        return MPI_ERR_COMM;
    *size = c->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    p2p_rank_t *r;
    comm_t *c = lookup(comm, "MPI_Comm_get_attr", &r);
    if (!c)
        return MPI_ERR_COMM;
    const int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &attr_tag_ub; break;
    case MPI_HOST: v = &attr_host; break;
    case MPI_IO: v = &attr_io; break;
    case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_is_global; break;
    case MPI_UNIVERSE_SIZE: v = &p2p_proc.nranks; break;
    case MPI_APPNUM: v = &attr_appnum; break;
    default:
        if (keyval == MPI_KEYVAL_INVALID)
            return env_error(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
        break;
    }
    *flag = v != NULL;
    if (v)
        *(const int **)attribute_val = v;
    return MPI_SUCCESS;
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    p2p_rank_t *r;
    comm_t *c = lookup(comm, "MPI_Comm_set_errhandler", &r);
    if (!c)
        return MPI_ERR_COMM;
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN)
        return env_error(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler");
    c->errh = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Errhandler_set = PMPI_Errhandler_set
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    p2p_rank_t *r;
    comm_t *c = lookup(comm, "MPI_Comm_get_errhandler", &r);
    if (!c)
        return MPI_ERR_COMM;
    *errhandler = c->errh;
    return MPI_SUCCESS;
}

/* The predefined handlers are never really freed; the handle is nulled. */
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler)
        return env_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    p2p_rank_t *r;
    comm_t *c = lookup(comm, "MPI_Comm_call_errhandler", &r);
    if (!c)
        return MPI_ERR_COMM;
    env_error(c, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}
