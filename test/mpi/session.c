/* session.c - a program that starts MPI with MPI_Session_init instead of
 * MPI_Init (MPI 4.0 sessions, as OSU 7.4 does with --session): the process
 * sets, a communicator from the world set's group, traffic on it, and
 * MPI_Session_finalize ending MPI. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4 || defined(AMPI_UCX)
int main(void)
{
    MPI_Session s = MPI_SESSION_NULL;
    int errs = 0, n = -1, len = 0;
    char name[MPI_MAX_PSET_NAME_LEN];
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS || s == MPI_SESSION_NULL) {
        printf("FAIL MPI_Session_init\n");
        return 1;
    }
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    int found = 0;
    for (int i = 0; i < n; i++) {
        len = sizeof name;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        found += strcmp(name, "mpi://WORLD") == 0;
    }
    if (n < 2 || found != 1)
        errs++, printf("FAIL %d process sets, mpi://WORLD found %d times\n", n, found);
    MPI_Group world;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &world);
    MPI_Comm_create_from_group(world, "session-test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&world);
    int rank = -1, size = -1, sum = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != size * (size - 1) / 2)
        errs++, printf("FAIL rank %d: rank sum %d over %d ranks\n", rank, sum, size);
    MPI_Info info;
    char val[32];
    int flag = 0;
    MPI_Session_get_pset_info(s, "mpi://WORLD", &info);
    MPI_Info_get(info, "mpi_size", sizeof val - 1, val, &flag);
    if (!flag || atoi(val) != size)
        errs++, printf("FAIL rank %d: mpi_size '%s'\n", rank, flag ? val : "");
    MPI_Info_free(&info);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, comm);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&s);
    if (rank == 0 && total == 0)
        printf("session: OK\n");
    return total != 0;
}
#else
int main(void)
{
    printf("session: OK (skipped: MPI %d has no sessions)\n", MPI_VERSION);
    return 0;
}
#endif
