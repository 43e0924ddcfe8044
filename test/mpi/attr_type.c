/* attr_type.c - attributes cached on datatypes (keyvals, set/get/delete,
 * copy on MPI_Type_dup, delete on MPI_Type_free and on replacement, a
 * failing delete callback that keeps the attribute) and the same failure
 * rule on communicators.  Each rank sets its own value on the shared
 * predefined MPI_INT: ranks of one process must not see each other's. */
#include "mpitest.h"

/* What the callbacks saw, per rank (the extra state points here). */
typedef struct {
    int copies, deletes;
    int fail_delete; /* the delete callback returns MPI_ERR_OTHER while set */
} calls_t;

static int type_copy(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)key;
    ((calls_t *)extra)->copies++;
    *(intptr_t *)out = (intptr_t)in * 10;
    *flag = 1;
    return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)val;
    calls_t *c = extra;
    if (c->fail_delete)
        return MPI_ERR_OTHER;
    c->deletes++;
    return MPI_SUCCESS;
}

static int comm_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val;
    calls_t *c = extra;
    if (c->fail_delete)
        return MPI_ERR_OTHER;
    c->deletes++;
    return MPI_SUCCESS;
}

static int get(MPI_Datatype t, int key, intptr_t *v)
{
    void *p = NULL;
    int flag = 0;
    MPI_Type_get_attr(t, key, &p, &flag);
    *v = (intptr_t)p;
    return flag;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), errs = 0;
    calls_t calls = { 0, 0, 0 };
    intptr_t v = 0;
    int key;
    MPI_Type_create_keyval(type_copy, type_delete, &key, &calls);

    /* a predefined type: every rank its own value */
    MPI_Type_set_attr(MPI_INT, key, (void *)(intptr_t)(rank + 1));
    MPI_Barrier(MPI_COMM_WORLD);
    if (!get(MPI_INT, key, &v) || v != rank + 1)
        errs += mt_fail(rank, "MPI_INT attribute: %ld, expected %d", (long)v, rank + 1);
    MPI_Type_delete_attr(MPI_INT, key);
    if (get(MPI_INT, key, &v) || calls.deletes != 1)
        errs += mt_fail(rank, "MPI_INT attribute after delete: present or %d delete calls", calls.deletes);

    /* a derived type: replace (delete callback), dup (copy callback), free */
    MPI_Datatype t, d;
    MPI_Type_contiguous(3, MPI_DOUBLE, &t);
    MPI_Type_set_attr(t, key, (void *)(intptr_t)7);
    MPI_Type_set_attr(t, key, (void *)(intptr_t)8);
    if (!get(t, key, &v) || v != 8 || calls.deletes != 2)
        errs += mt_fail(rank, "replaced attribute: %ld with %d delete calls", (long)v, calls.deletes);
    MPI_Type_dup(t, &d);
    if (!get(d, key, &v) || v != 80 || calls.copies != 1)
        errs += mt_fail(rank, "attribute of the dup: %ld after %d copy calls, expected 80", (long)v, calls.copies);
    MPI_Type_free(&d);
    if (calls.deletes != 3)
        errs += mt_fail(rank, "MPI_Type_free ran %d delete callbacks in all, expected 3", calls.deletes);

    /* a failing delete callback: the call fails and the attribute stays */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    calls.fail_delete = 1;
    if (MPI_Type_set_attr(t, key, (void *)(intptr_t)9) == MPI_SUCCESS)
        errs += mt_fail(rank, "replacing with a failing delete callback succeeded");
    if (!get(t, key, &v) || v != 8)
        errs += mt_fail(rank, "attribute after a failed replace: %ld, expected 8", (long)v);
    if (MPI_Type_free(&t) == MPI_SUCCESS || t == MPI_DATATYPE_NULL)
        errs += mt_fail(rank, "MPI_Type_free with a failing delete callback succeeded");
    calls.fail_delete = 0;
    MPI_Type_free(&t);
    if (t != MPI_DATATYPE_NULL || calls.deletes != 4)
        errs += mt_fail(rank, "MPI_Type_free: handle not null or %d delete calls, expected 4", calls.deletes);

    /* the same rule on a communicator */
    calls_t ccalls = { 0, 0, 0 };
    int ckey, flag = 0;
    void *p = NULL;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &ckey, &ccalls);
    MPI_Comm_set_attr(comm, ckey, (void *)(intptr_t)5);
    ccalls.fail_delete = 1;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (MPI_Comm_set_attr(comm, ckey, (void *)(intptr_t)6) == MPI_SUCCESS)
        errs += mt_fail(rank, "communicator: replacing with a failing delete callback succeeded");
    MPI_Comm_get_attr(comm, ckey, &p, &flag);
    if (!flag || (intptr_t)p != 5)
        errs += mt_fail(rank, "communicator attribute after a failed replace: flag %d value %ld", flag,
                        (long)(intptr_t)p);
    ccalls.fail_delete = 0;
    MPI_Comm_free(&comm);
    if (ccalls.deletes != 1)
        errs += mt_fail(rank, "MPI_Comm_free ran %d delete callbacks, expected 1", ccalls.deletes);

    /* a communicator's keyval is not a datatype's */
    int cls = -1;
    MPI_Error_class(MPI_Type_set_attr(MPI_INT, ckey, NULL), &cls);
    if (cls != MPI_ERR_KEYVAL)
        errs += mt_fail(rank, "a communicator keyval on a datatype: class %d, expected MPI_ERR_KEYVAL", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free_keyval(&ckey);
    MPI_Type_free_keyval(&key);
    if (key != MPI_KEYVAL_INVALID)
        errs += mt_fail(rank, "MPI_Type_free_keyval did not reset the handle");
    mt_finish(errs, "attr_type: OK");
    MPI_Finalize();
    return 0;
}
