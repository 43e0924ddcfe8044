/* Functions of MPI that the library defines but does not support yet: each
 * raises MPI_ERR_UNSUPPORTED_OPERATION through the error handler that the
 * call's object selects, so that codes which only reference them link and
 * codes which call them get a clear error (docs/unsupported.md lists them). */
#ifndef AMPI_ENV_UNSUPPORTED_H
#define AMPI_ENV_UNSUPPORTED_H

#include "mpi.h"

/* On comm's error handler (MPI_COMM_WORLD's when comm is MPI_COMM_NULL or
 * not a communicator); "not initialized" outside MPI_Init..MPI_Finalize. */
int env_unsupported(MPI_Comm comm, const char *func);
/* Files: through the error handler of MPI_FILE_NULL, which is
 * MPI_ERRORS_RETURN unless the program set another (MPI 3.1 13.7): by
 * default the class is returned without ending the job. */
int env_unsupported_file(const char *func);

#define ENV_STUB_PRAGMA(x) _Pragma(#x)
/* MPI_name is a weak alias of PMPI_name, like every entry point; the
 * parameters exist only to give the stub its exact prototype. */
#define ENV_STUB(name, params, comm)                             \
    ENV_STUB_PRAGMA(weak MPI_##name = PMPI_##name)               \
    int PMPI_##name params { return env_unsupported(comm, "MPI_" #name); }
#define ENV_STUB_FILE(name, params)                              \
    ENV_STUB_PRAGMA(weak MPI_##name = PMPI_##name)               \
    int PMPI_##name params { return env_unsupported_file("MPI_" #name); }

#endif
