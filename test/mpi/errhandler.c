/* errhandler.c - user error handlers and user error codes: a handler made
 * with MPI_Comm_create_errhandler is called with the communicator and the
 * error code of a failing call, is taken over by MPI_Comm_dup, and is what
 * MPI_Comm_call_errhandler calls; MPI_Add_error_class/code/string and what
 * MPI_Error_class, MPI_Error_string and the MPI_LASTUSEDCODE attribute say
 * of them; the error handler of files (on MPI_FILE_NULL) called by an
 * MPI-IO call; MPI_Errhandler_free of MPI_ERRHANDLER_NULL is an error. */
#include "mpitest.h"

/* What the handlers saw.  Handlers get no state of their own, so each rank
 * has a slot indexed by its world rank: ranks that share a process (and
 * its globals) never touch each other's slot. */
#define MAX_RANKS 1024
static struct {
    int calls, code;
    MPI_Comm comm;
} seen[MAX_RANKS];

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    seen[me].calls++;
    seen[me].code = *code;
    seen[me].comm = *comm;
}

static void file_handler(MPI_File *file, int *code, ...)
{
    (void)file;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    seen[me].calls++;
    seen[me].code = *code;
}

static int class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    if (size > MAX_RANKS) {
        mt_note("errhandler: OK (skipped: more than %d ranks)", MAX_RANKS);
        MPI_Finalize();
        return 0;
    }

    /* a user handler on a duplicate, called for an invalid rank */
    MPI_Errhandler eh;
    MPI_Comm dup, dup2;
    MPI_Comm_create_errhandler(comm_handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, eh);
    int x = 0, rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, dup);
    if (seen[rank].calls != 1 || seen[rank].comm != dup || class_of(seen[rank].code) != MPI_ERR_RANK ||
        class_of(rc) != MPI_ERR_RANK)
        errs += mt_fail(rank, "handler after a bad rank: %d calls, class %d, returned class %d", seen[rank].calls,
                        class_of(seen[rank].code), class_of(rc));

    /* taken over by a duplicate of the duplicate; MPI_Comm_get_errhandler
     * hands out a reference of its own, and freeing both keeps the handler
     * working on the communicators */
    MPI_Comm_dup(dup, &dup2);
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(dup2, &got);
    if (got != eh)
        errs += mt_fail(rank, "MPI_Comm_dup did not take over the error handler");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    if (eh != MPI_ERRHANDLER_NULL)
        errs += mt_fail(rank, "MPI_Errhandler_free did not null the handle");

    /* user error class, code and string, called through the handler */
    int cls, code, len = 0, last = 0, flag = 0;
    int *lastp = NULL;
    char str[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(code, "the test's own error");
    MPI_Error_string(code, str, &len);
    if (class_of(code) != cls || strcmp(str, "the test's own error") != 0 || len != (int)strlen(str))
        errs += mt_fail(rank, "user code: class %d (want %d), string '%s' length %d", class_of(code), cls, str, len);
#ifdef AMPI_UCX /* Open MPI 4 answers something else for a class */
    if (class_of(cls) != cls)
        errs += mt_fail(rank, "the class of user class %d is %d", cls, class_of(cls));
#endif
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag);
    last = flag ? *lastp : -1;
    if (last < code)
        errs += mt_fail(rank, "MPI_LASTUSEDCODE %d below the new code %d", last, code);
    MPI_Comm_call_errhandler(dup2, code);
    if (seen[rank].calls != 2 || seen[rank].code != code || seen[rank].comm != dup2)
        errs += mt_fail(rank, "MPI_Comm_call_errhandler: %d calls, code %d (want %d)", seen[rank].calls,
                        seen[rank].code, code);
    int dyn = 0;
    MPI_Add_error_code(MPI_ERR_ARG, &dyn); /* a user code of a predefined class */
    if (class_of(dyn) != MPI_ERR_ARG)
        errs += mt_fail(rank, "user code of MPI_ERR_ARG has class %d", class_of(dyn));

    /* MPI_ERRHANDLER_NULL is no handler to free */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler none = MPI_ERRHANDLER_NULL;
    if (class_of(MPI_Errhandler_free(&none)) != MPI_ERR_ARG)
        errs += mt_fail(rank, "MPI_Errhandler_free(MPI_ERRHANDLER_NULL) is not MPI_ERR_ARG");

#if defined(AMPI_UCX) /* MPI-IO works elsewhere: only this library answers the open with an error */
    /* the files' handler gets the error of an MPI-IO call */
    MPI_Errhandler feh;
    MPI_File f;
    MPI_File_create_errhandler(file_handler, &feh);
    MPI_File_set_errhandler(MPI_FILE_NULL, feh);
    rc = MPI_File_open(MPI_COMM_SELF, "no-such-file", MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (rc == MPI_SUCCESS || seen[rank].calls != 3 || seen[rank].code != rc)
        errs += mt_fail(rank, "MPI_File_open: rc %d, the files' handler called %d times", rc, seen[rank].calls);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&feh);
#else
    (void)file_handler;
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    mt_finish(errs, "errhandler: OK");
    MPI_Finalize();
    return 0;
}
