/* unsupported.c - the MPI_ERR_UNSUPPORTED_OPERATION paths under
 * MPI_ERRORS_RETURN: each call below must return an error whose class
 * (MPI_Error_class) is MPI_ERR_UNSUPPORTED_OPERATION, leave its output
 * arguments alone, and the program must go on working: a checked Allreduce
 * and a ring exchange follow every failed call.
 *
 * Two kinds of calls:
 * - functions that exist only as stubs (docs/unsupported.md lists them;
 *   implementing one means dropping its line from STUB_CALLS below, as from
 *   src/env/env_stubs.c);
 * - collectives on a derived datatype with gaps, which the collectives do not
 *   take (README: "Collectives take predefined datatypes and contiguous
 *   derived ones without gaps"). */
#include "mpitest.h"

enum { N = 8, TAG_RING = 400 };

/* The job still works: an Allreduce and a ring exchange, both checked. */
static int still_works(int rank, int size, int step)
{
    int errs = 0, sum = -1, want = size * (size - 1) / 2 + size * step;
    int mine = rank + step;
    if (MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || sum != want)
        errs += mt_fail(rank, "step %d: Allreduce gave %d, expected %d", step, sum, want);
    int out[N], in[N], left = (rank + size - 1) % size, right = (rank + 1) % size;
    mt_fill_int(out, N, rank, right, (uint32_t)step);
    MPI_Sendrecv(out, N, MPI_INT, right, TAG_RING, in, N, MPI_INT, left, TAG_RING, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (mt_check_int(in, N, left, rank, (uint32_t)step) >= 0)
        errs += mt_fail(rank, "step %d: ring exchange delivered wrong data", step);
    return errs;
}

static int expect_unsupported(int rank, const char *what, int rc)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        return mt_fail(rank, "%s returned MPI_SUCCESS, expected MPI_ERR_UNSUPPORTED_OPERATION", what);
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        return mt_fail(rank, "%s: MPI_Error_class(%d) failed", what, rc);
    if (cls != MPI_ERR_UNSUPPORTED_OPERATION) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        return mt_fail(rank, "%s: error class %d (%s), expected MPI_ERR_UNSUPPORTED_OPERATION (%d)", what, cls, text,
                       MPI_ERR_UNSUPPORTED_OPERATION);
    }
    return 0;
}

/* Stubs: one call each, with the output arguments set to sentinels that the
 * call must leave alone. */
static int stub_calls(int rank)
{
    int errs = 0, errcode = 12345;
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_File fh = MPI_FILE_NULL;
    char *argv[] = { NULL };

#define STUB_CALL(call, untouched)                                              \
    do {                                                                        \
        errs += expect_unsupported(rank, #call, call);                          \
        if (!(untouched))                                                       \
            errs += mt_fail(rank, "%s wrote an output argument", #call);        \
    } while (0)

    /* STUB_CALLS: functions docs/unsupported.md lists (dynamic processes,
     * MPI-IO, the rest) */
    STUB_CALL(MPI_Comm_spawn("none", argv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, &errcode),
              inter == MPI_COMM_NULL && errcode == 12345);
    STUB_CALL(MPI_Comm_accept("port", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), inter == MPI_COMM_NULL);
    STUB_CALL(MPI_File_open(MPI_COMM_WORLD, "/nonexistent/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
              fh == MPI_FILE_NULL);
#undef STUB_CALL
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errs += still_works(rank, size, 0);
    errs += stub_calls(rank);
    errs += still_works(rank, size, 1);
    errs += still_works(rank, size, 2);
    char ok[80];
    snprintf(ok, sizeof ok, "unsupported: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
