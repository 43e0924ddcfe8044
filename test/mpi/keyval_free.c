/* keyval_free.c - freeing a keyval that attributes still use, more than
 * once: from the attribute's delete callback (which gets the keyval by
 * value), through the handle and through a copy of it.  Erroneous by the
 * letter of MPI 3.1, but common, and MPICH accepts it: the later frees
 * change nothing, and the attributes' delete callbacks still run when their
 * objects go.  Windows and communicators. */
#include "mpitest.h"

typedef struct {
    int deletes; /* delete callbacks run */
    int errs;    /* their frees that failed */
} counts_t;

static int win_delete(MPI_Win win, int keyval, void *attr, void *extra)
{
    (void)win, (void)attr;
    counts_t *c = extra;
    c->deletes++;
    c->errs += MPI_Win_free_keyval(&keyval) != MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)attr;
    counts_t *c = extra;
    c->deletes++;
    c->errs += MPI_Comm_free_keyval(&keyval) != MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int test_win(int rank)
{
    counts_t c = { 0, 0 };
    int data[2][1];
    MPI_Win w[2];
    for (int i = 0; i < 2; i++)
        MPI_Win_create(data[i], sizeof data[i], 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w[i]);
    int keyval, copy;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &keyval, &c);
    copy = keyval;
    MPI_Win_set_attr(w[0], keyval, NULL);
    MPI_Win_set_attr(w[1], keyval, NULL);
    MPI_Win_set_errhandler(w[0], MPI_ERRORS_RETURN);
    int errs = 0;
    MPI_Win_free(&w[0]); /* the callback frees it */
    int e1 = MPI_Win_free_keyval(&keyval), e2 = MPI_Win_free_keyval(&copy);
    if (e1 || e2)
        errs += mt_fail(rank, "Win_free_keyval after the callback's: errors %d, %d", e1, e2);
    if (keyval != MPI_KEYVAL_INVALID || copy != MPI_KEYVAL_INVALID)
        errs += mt_fail(rank, "Win_free_keyval left the handles %d, %d", keyval, copy);
    MPI_Win_free(&w[1]); /* its attribute's callback still runs */
    if (c.deletes != 2 || c.errs)
        errs += mt_fail(rank, "window delete callbacks: %d ran, %d frees failed (expected 2, 0)", c.deletes, c.errs);
    return errs;
}

static int test_comm(int rank)
{
    counts_t c = { 0, 0 };
    MPI_Comm d[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &d[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &d[1]);
    int keyval, copy;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &keyval, &c);
    copy = keyval;
    MPI_Comm_set_attr(d[0], keyval, NULL);
    MPI_Comm_set_attr(d[1], keyval, NULL);
    MPI_Comm_free(&d[0]);
    int errs = 0, e1 = MPI_Comm_free_keyval(&keyval), e2 = MPI_Comm_free_keyval(&copy);
    if (e1 || e2)
        errs += mt_fail(rank, "Comm_free_keyval after the callback's: errors %d, %d", e1, e2);
    MPI_Comm_free(&d[1]);
    if (c.deletes != 2 || c.errs)
        errs += mt_fail(rank, "communicator delete callbacks: %d ran, %d frees failed (expected 2, 0)", c.deletes,
                        c.errs);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* keyval errors go to MPI_COMM_WORLD */
    int errs = test_win(rank) + test_comm(rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mt_finish(errs, "keyval_free OK");
    MPI_Finalize();
    return 0;
}
