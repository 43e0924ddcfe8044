/* session.c - a program that starts MPI with MPI_Session_init instead of
 * MPI_Init (MPI 4.0 sessions, as OSU 7.4 does with --session): the process
 * sets, a communicator from the world set's group, traffic on it, and
 * MPI_Session_finalize ending MPI; each session call rejects bad arguments. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4 || defined(AMPI_UCX)
static int expect_arg(int rc, const char *call, int rank)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_ARG)
        return 0;
    printf("FAIL rank %d: %s returned class %d, expected MPI_ERR_ARG\n", rank, call, cls);
    return 1;
}

/* What our session handler saw, a slot per session: handlers get no state
 * of their own, and ranks that share a process share its globals, but each
 * rank has a session of its own. */
#define MAX_RANKS 1024
static struct {
    MPI_Session s;
    int calls;
} seen[MAX_RANKS];

static int *calls_of(MPI_Session s)
{
    for (int i = 0; i < MAX_RANKS; i++)
        if (seen[i].s == s || seen[i].s == MPI_SESSION_NULL) {
            seen[i].s = s; /* ranks switch only inside MPI calls: no other rank takes it meanwhile */
            return &seen[i].calls;
        }
    return NULL;
}

static void count_call(MPI_Session *s, int *code, ...)
{
    (void)code;
    int *n = calls_of(*s);
    if (n)
        ++*n;
}

/* Each session call rejects its own bad arguments with MPI_ERR_ARG through
 * the session's handler (MPI_ERRORS_RETURN here, while MPI_COMM_WORLD's
 * stays fatal), and takes good ones. */
static int check_arguments(MPI_Session s, int rank)
{
    int errs = 0, len = 4;
    char name[4];
    MPI_Info info;
    MPI_Group g;
    MPI_Request req;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    errs += expect_arg(MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL), "get_num_psets(NULL)", rank);
    errs += expect_arg(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, name), "get_nth_pset(99)", rank);
    errs += expect_arg(MPI_Session_get_info(s, NULL), "get_info(NULL)", rank);
    errs += expect_arg(MPI_Session_get_pset_info(s, "mpi://NONE", &info), "get_pset_info(mpi://NONE)", rank);
    errs += expect_arg(MPI_Group_from_session_pset(s, "mpi://NONE", &g), "Group_from_session_pset(mpi://NONE)",
                       rank);
    errs += expect_arg(MPI_Session_get_errhandler(s, NULL), "get_errhandler(NULL)", rank);
    errs += expect_arg(MPI_Session_set_errhandler(s, MPI_ERRHANDLER_NULL), "set_errhandler(NULL handler)", rank);
    errs += expect_arg(MPI_Session_detach_buffer(s, NULL, NULL), "detach_buffer(NULL)", rank);
    errs += expect_arg(MPI_Session_iflush_buffer(s, NULL), "iflush_buffer(NULL)", rank);
#ifdef AMPI_UCX
    /* an invalid session has no handler: this library raises it on MPI_COMM_WORLD's */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#endif
    errs += expect_arg(MPI_Session_flush_buffer(MPI_SESSION_NULL), "flush_buffer(MPI_SESSION_NULL)", rank);
#ifdef AMPI_UCX
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
    if (MPI_Session_get_errhandler(s, &eh) != MPI_SUCCESS || eh != MPI_ERRORS_RETURN)
        errs++, printf("FAIL rank %d: the session's handler is not MPI_ERRORS_RETURN\n", rank);
    if (MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        MPI_Session_call_errhandler(s, MPI_ERR_OTHER) != MPI_SUCCESS || MPI_Session_flush_buffer(s) != MPI_SUCCESS)
        errs++, printf("FAIL rank %d: set_errhandler, call_errhandler or flush_buffer failed\n", rank);
    if (MPI_Session_iflush_buffer(s, &req) != MPI_SUCCESS || MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        errs++, printf("FAIL rank %d: iflush_buffer failed\n", rank);
    /* a handler of the program's own gets the session and the code */
    MPI_Errhandler mine = MPI_ERRHANDLER_NULL;
    int *calls = calls_of(s);
    if (!calls || MPI_Session_create_errhandler(count_call, &mine) != MPI_SUCCESS ||
        MPI_Session_set_errhandler(s, mine) != MPI_SUCCESS)
        errs++, printf("FAIL rank %d: a session handler of our own could not be set\n", rank);
    else if (MPI_Session_get_info(s, NULL) == MPI_SUCCESS || *calls != 1)
        errs++, printf("FAIL rank %d: our session handler ran %d times for one bad call on its session\n", rank,
                       *calls);
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    if (mine != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&mine);
    return errs;
}

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
    errs += check_arguments(s, rank);
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
