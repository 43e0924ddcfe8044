/* Functions of MPI 3.1 outside one-sided communication, MPI-IO and dynamic
 * processes that are not supported yet: each raises
 * MPI_ERR_UNSUPPORTED_OPERATION on the communicator passed, or on
 * MPI_COMM_WORLD (docs/unsupported.md lists them). */
#include "env/env_unsupported.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

ENV_STUB(Pack_external, (const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
          MPI_Aint outsize, MPI_Aint *position), MPI_COMM_NULL)
ENV_STUB(Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size),
          MPI_COMM_NULL)
ENV_STUB(Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
          void *outbuf, int outcount, MPI_Datatype datatype), MPI_COMM_NULL)
ENV_STUB(Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[],
          const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order,
          MPI_Datatype oldtype, MPI_Datatype *newtype), MPI_COMM_NULL)
ENV_STUB(Grequest_start, (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
          MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request), MPI_COMM_NULL)
ENV_STUB(Grequest_complete, (MPI_Request request), MPI_COMM_NULL)
