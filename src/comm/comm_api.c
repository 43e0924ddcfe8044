/* Communicator queries, names and error handlers (attributes:
 * comm_attr.c). */
#include "pt2pt/p2p_api.h"

#include <string.h>

static core_comm_t *lookup(MPI_Comm comm, const char *func, p2p_rank_t **rp)
{
    p2p_rank_t *r = p2p_self();
    if (!r || !r->core.initialized || r->core.finalized) {
        core_not_initialized(func);
        return NULL;
    }
    *rp = r;
    core_comm_t *c = p2p_comm(r, comm);
    if (!c)
        core_error(NULL, MPI_ERR_COMM, func);
    return c;
}

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_rank", &r);
    if (!c)
        return MPI_ERR_COMM;
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_size", &r);
    if (!c)
        return MPI_ERR_COMM;
    *size = c->remote ? c->group->size : c->size; /* an intercommunicator's local group */
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_call_errhandler", &r);
    if (!c)
        return MPI_ERR_COMM;
    core_error(c, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_set_name", &r);
    if (!c)
        return MPI_ERR_COMM;
    if (!comm_name)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_set_name");
    /* longer names are cut, as the standard allows */
    size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(c->name, comm_name, n);
    c->name[n] = '\0';
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_get_name", &r);
    if (!c)
        return MPI_ERR_COMM;
    if (!comm_name || !resultlen)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_get_name");
    size_t n = strlen(c->name);
    memcpy(comm_name, c->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

/* Hints (MPI 3.1 6.4.4): no communicator hint changes what the library
 * does, so none is kept and none is reported as used. */
#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_set_info", &r);
    if (!c)
        return MPI_ERR_COMM;
    int nkeys;
    if (info != MPI_INFO_NULL && PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return core_error(c, MPI_ERR_INFO, "MPI_Comm_set_info");
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    p2p_rank_t *r;
    core_comm_t *c = lookup(comm, "MPI_Comm_get_info", &r);
    if (!c)
        return MPI_ERR_COMM;
    if (!info_used)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_get_info");
    int err = PMPI_Info_create(info_used);
    return err ? core_error(c, err, "MPI_Comm_get_info") : MPI_SUCCESS;
}
