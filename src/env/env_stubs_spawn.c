/* Process creation and management (MPI 3.1 chapter 10): not supported yet
 * (a job's processes are the ones ampirun starts).  MPI_Comm_get_parent
 * works: no process has a parent.  The others raise
 * MPI_ERR_UNSUPPORTED_OPERATION on the communicator passed
 * (docs/unsupported.md). */
#include "env/env_unsupported.h"
#include "pt2pt/p2p_api.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

ENV_STUB(Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
          MPI_Comm *intercomm, int array_of_errcodes[]), comm)
ENV_STUB(Comm_spawn_multiple, (int count, char *array_of_commands[], char **array_of_argv[],
          const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
          MPI_Comm *intercomm, int array_of_errcodes[]), comm)
ENV_STUB(Open_port, (MPI_Info info, char *port_name), MPI_COMM_NULL)
ENV_STUB(Close_port, (const char *port_name), MPI_COMM_NULL)
ENV_STUB(Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm), comm)
ENV_STUB(Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm), comm)

ENV_STUB(Comm_join, (int fd, MPI_Comm *intercomm), MPI_COMM_NULL)
ENV_STUB(Publish_name, (const char *service_name, MPI_Info info, const char *port_name), MPI_COMM_NULL)
ENV_STUB(Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name), MPI_COMM_NULL)
ENV_STUB(Lookup_name, (const char *service_name, MPI_Info info, char *port_name), MPI_COMM_NULL)

#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    P2P_ENTER(r, "MPI_Comm_get_parent");
    if (!parent)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent");
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Without dynamic processes every communicator comes from MPI_COMM_WORLD's
 * group: disconnecting one is freeing it once pending communication is
 * done, which the barrier makes sure of for a correct program. */
#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    P2P_ENTER(r, "MPI_Comm_disconnect");
    if (!comm || !p2p_comm(r, *comm))
        return core_error(NULL, MPI_ERR_COMM, "MPI_Comm_disconnect");
    int err = PMPI_Barrier(*comm);
    return err ? err : PMPI_Comm_free(comm);
}
