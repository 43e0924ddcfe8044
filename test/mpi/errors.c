/* errors.c - argument errors under MPI_ERRORS_RETURN give the right error
 * class: invalid rank -> MPI_ERR_RANK, invalid tag (negative, above
 * MPI_TAG_UB) -> MPI_ERR_TAG, count -1 -> MPI_ERR_COUNT, MPI_COMM_NULL ->
 * MPI_ERR_COMM, MPI_DATATYPE_NULL -> MPI_ERR_TYPE.  Also: the error handler
 * set is the one read back, Error_string is non-empty for every class,
 * Error_class maps each class to itself, and communication still works
 * after all the errors. */
#include "mpitest.h"
#include <limits.h>

enum { TAG = 3 };

static int expect_class(int rank, const char *what, int rc, int want,
                        const char *want_name)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        return mt_fail(rank, "%s: succeeded, expected %s", what, want_name);
    MPI_Error_class(rc, &cls);
    if (cls != want)
        return mt_fail(rank, "%s: error class %d, expected %s (%d)", what, cls,
                       want_name, want);
    return 0;
}

#define EXPECT(what, call, cls) expect_class(rank, what, (call), cls, #cls)

/* A negative tag that is not a wildcard value. */
static int bad_negative_tag(void)
{
    int t = -3;
    while (t == MPI_ANY_TAG)
        t--;
    return t;
}

static int bad_negative_rank(void)
{
    int r = -7;
    while (r == MPI_ANY_SOURCE || r == MPI_PROC_NULL)
        r--;
    return r;
}

static int argument_errors(int rank, int size)
{
    int errs = 0, buf[4] = {0}, flag = 0, *tag_ub = NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    int neg_tag = bad_negative_tag(), neg_rank = bad_negative_rank();

    errs += EXPECT("Send to rank size", MPI_Send(buf, 1, MPI_INT, size, TAG,
                   MPI_COMM_WORLD), MPI_ERR_RANK);
    errs += EXPECT("Send to negative rank", MPI_Send(buf, 1, MPI_INT, neg_rank,
                   TAG, MPI_COMM_WORLD), MPI_ERR_RANK);
    errs += EXPECT("Recv from rank size", MPI_Recv(buf, 1, MPI_INT, size, TAG,
                   MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    errs += EXPECT("Isend to rank size", MPI_Isend(buf, 1, MPI_INT, size, TAG,
                   MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    errs += EXPECT("Irecv from negative rank", MPI_Irecv(buf, 1, MPI_INT,
                   neg_rank, TAG, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    errs += EXPECT("Iprobe rank size", MPI_Iprobe(size, TAG, MPI_COMM_WORLD,
                   &flag, &st), MPI_ERR_RANK);

    errs += EXPECT("Send negative tag", MPI_Send(buf, 1, MPI_INT, rank,
                   neg_tag, MPI_COMM_WORLD), MPI_ERR_TAG);
    errs += EXPECT("Send tag MPI_ANY_TAG", MPI_Send(buf, 1, MPI_INT, rank,
                   MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    errs += EXPECT("Recv negative tag", MPI_Recv(buf, 1, MPI_INT, rank,
                   neg_tag, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    errs += EXPECT("Isend negative tag", MPI_Isend(buf, 1, MPI_INT, rank,
                   neg_tag, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (!flag || !tag_ub)
        errs += mt_fail(rank, "MPI_TAG_UB attribute missing");
    else if (*tag_ub < INT_MAX)
        errs += EXPECT("Send tag TAG_UB+1", MPI_Send(buf, 1, MPI_INT, rank,
                       *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    else if (rank == 0)
        mt_note("errors: MPI_TAG_UB is INT_MAX, no tag above it to try");

    errs += EXPECT("Send count -1", MPI_Send(buf, -1, MPI_INT, rank, TAG,
                   MPI_COMM_WORLD), MPI_ERR_COUNT);
    errs += EXPECT("Recv count -1", MPI_Recv(buf, -1, MPI_INT, rank, TAG,
                   MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    errs += EXPECT("Irecv count -1", MPI_Irecv(buf, -1, MPI_INT, rank, TAG,
                   MPI_COMM_WORLD, &req), MPI_ERR_COUNT);

    errs += EXPECT("Send on MPI_COMM_NULL", MPI_Send(buf, 1, MPI_INT, 0, TAG,
                   MPI_COMM_NULL), MPI_ERR_COMM);
    errs += EXPECT("Recv on MPI_COMM_NULL", MPI_Recv(buf, 1, MPI_INT, 0, TAG,
                   MPI_COMM_NULL, &st), MPI_ERR_COMM);
    errs += EXPECT("Isend on MPI_COMM_NULL", MPI_Isend(buf, 1, MPI_INT, 0, TAG,
                   MPI_COMM_NULL, &req), MPI_ERR_COMM);

    errs += EXPECT("Send MPI_DATATYPE_NULL", MPI_Send(buf, 1, MPI_DATATYPE_NULL,
                   rank, TAG, MPI_COMM_WORLD), MPI_ERR_TYPE);
    errs += EXPECT("Recv MPI_DATATYPE_NULL", MPI_Recv(buf, 1,
                   MPI_DATATYPE_NULL, rank, TAG, MPI_COMM_WORLD, &st),
                   MPI_ERR_TYPE);
    if (req != MPI_REQUEST_NULL)
        errs += mt_fail(rank, "a failed call returned a live request");
    return errs;
}

static int error_strings(int rank)
{
    const int classes[] = {
        MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE,
        MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_REQUEST,
        MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY,
        MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE,
        MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
    };
    int errs = 0;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char s[MPI_MAX_ERROR_STRING + 1];
        int len = -1, cls = -1;
        memset(s, 0, sizeof s);
        MPI_Error_string(classes[i], s, &len);
        if (len <= 0 || len > MPI_MAX_ERROR_STRING || s[0] == '\0' ||
            (int)strlen(s) != len)
            errs += mt_fail(rank, "Error_string(%d): length %d, text '%s'",
                            classes[i], len, s);
        MPI_Error_class(classes[i], &cls);
        if (cls != classes[i])
            errs += mt_fail(rank, "Error_class(%d) = %d", classes[i], cls);
        for (size_t j = 0; j < i; j++)
            if (classes[j] == classes[i])
                errs += mt_fail(rank, "error classes %zu and %zu share the "
                                "value %d", i, j, classes[i]);
    }
    if (MPI_ERR_LASTCODE < MPI_ERR_PENDING)
        errs += mt_fail(rank, "MPI_ERR_LASTCODE %d below the classes",
                        MPI_ERR_LASTCODE);
    return errs;
}

/* After all the failed calls, a real exchange with the neighbours. */
static int still_works(int rank, int size)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size, errs = 0;
    int out[8], in[8];
    MPI_Status st;
    mt_fill_int(out, 8, rank, to, 77);
    int rc = MPI_Sendrecv(out, 8, MPI_INT, to, TAG, in, 8, MPI_INT, from, TAG,
                          MPI_COMM_WORLD, &st);
    if (rc != MPI_SUCCESS)
        return mt_fail(rank, "Sendrecv after the errors failed: %d", rc);
    errs += mt_check_status(rank, "Sendrecv after errors", &st, MPI_INT, from,
                            TAG, 8);
    if (mt_check_int(in, 8, from, rank, 77) >= 0)
        errs += mt_fail(rank, "Sendrecv after errors: data wrong");
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;

    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    if (eh != MPI_ERRORS_ARE_FATAL)
        errs += mt_fail(rank, "default error handler is not "
                        "MPI_ERRORS_ARE_FATAL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    if (eh != MPI_ERRORS_RETURN)
        errs += mt_fail(rank, "Comm_get_errhandler does not give back "
                        "MPI_ERRORS_RETURN");

    errs += argument_errors(rank, size);
    errs += error_strings(rank);
    errs += still_works(rank, size);

    char ok[80];
    snprintf(ok, sizeof ok, "errors: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
