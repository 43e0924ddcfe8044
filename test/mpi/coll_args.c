/* coll_args.c - argument errors of the collectives, under
 * MPI_ERRORS_RETURN: invalid (op, type) pairs give MPI_ERR_OP; bad roots,
 * counts, types and communicators their classes.  Every call fails before
 * any communication, so all ranks make them all; a final Allreduce checks
 * that the library still works afterwards. */
#include "mpitest.h"

static int expect_class(int rank, int rc, int want, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls == want ? 0 : mt_fail(rank, "%s: error class %d, expected %d", what, cls, want);
}

static int check_args(int rank, int size)
{
    struct { MPI_Op op; MPI_Datatype dt; const char *what; } bad[] = {
        {MPI_SUM, MPI_C_BOOL, "SUM on C_BOOL"},       {MPI_BAND, MPI_DOUBLE, "BAND on DOUBLE"},
        {MPI_MAXLOC, MPI_INT, "MAXLOC on INT"},       {MPI_MAX, MPI_C_DOUBLE_COMPLEX, "MAX on C_DOUBLE_COMPLEX"},
        {MPI_LAND, MPI_FLOAT, "LAND on FLOAT"},       {MPI_SUM, MPI_2INT, "SUM on 2INT"},
        {MPI_MINLOC, MPI_DOUBLE, "MINLOC on DOUBLE"}, {MPI_BXOR, MPI_FLOAT, "BXOR on FLOAT"},
        {MPI_OP_NULL, MPI_INT, "OP_NULL on INT"},     {MPI_LOR, MPI_C_FLOAT_COMPLEX, "LOR on C_FLOAT_COMPLEX"},
#ifndef OPEN_MPI /* Open MPI 4.1 accepts MAX/MIN on MPI_BYTE */
        {MPI_MAX, MPI_BYTE, "MAX on BYTE"},
#endif
    };
    int errs = 0;
    long long x[8] = {0}, y[8];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        errs += expect_class(rank, MPI_Allreduce(x, y, 1, bad[k].dt, bad[k].op, MPI_COMM_WORLD), MPI_ERR_OP,
                             bad[k].what);
    errs += expect_class(rank, MPI_Bcast(x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT, "Bcast root = size");
    errs += expect_class(rank, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT,
                         "Reduce root = -1");
    errs += expect_class(rank, MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT,
                         "Gather root = size + 3");
    errs += expect_class(rank, MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
                         "Allreduce count -1");
    errs += expect_class(rank, MPI_Bcast(x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
                         "Bcast MPI_DATATYPE_NULL");
    errs += expect_class(rank, MPI_Bcast(x, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM, "Bcast MPI_COMM_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size();
    int errs = check_args(rank, size), one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total != size)
        errs += mt_fail(rank, "Allreduce after the errors: %d, expected %d", total, size);
    char ok[64];
    snprintf(ok, sizeof ok, "coll_args: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
