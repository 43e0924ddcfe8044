/* info.c - every MPI_Info function: set/get/replace/delete, key order,
 * value lengths and truncation, dup independence, free, MPI_INFO_ENV, and
 * the error classes of bad keys, values and handles.  Values depend on the
 * rank and a barrier separates setting from checking, so ranks that share
 * a process (and its handle table) must not see each other's objects. */
#include "mpitest.h"

static int expect_class(int rank, int err, int want, const char *what)
{
    int cls = -1;
    MPI_Error_class(err, &cls);
    return cls == want ? 0 : mt_fail(rank, "%s: error class %d, expected %d", what, cls, want);
}

static int expect_value(int rank, MPI_Info info, const char *key, const char *want)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
    if (!want)
        return flag == 0 ? 0 : mt_fail(rank, "key '%s' present ('%s')", key, val);
    if (!flag || strcmp(val, want) != 0)
        return mt_fail(rank, "key '%s': flag %d value '%s', expected '%s'", key, flag, flag ? val : "", want);
    MPI_Info_get_valuelen(info, key, &len, &flag);
    if (!flag || len != (int)strlen(want))
        return mt_fail(rank, "key '%s': valuelen %d flag %d", key, len, flag);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0, n = -1, flag;
    char v1[64], v2[64], key[MPI_MAX_INFO_KEY + 1];
    snprintf(v1, sizeof v1, "value-of-rank-%d", rank);
    snprintf(v2, sizeof v2, "%d", 1000 + rank);

    MPI_Info info, dup;
    MPI_Info_create(&info);
    MPI_Info_get_nkeys(info, &n);
    if (n != 0)
        errs += mt_fail(rank, "new info has %d keys", n);
    MPI_Info_set(info, "zeta", v1);
    MPI_Info_set(info, "alpha", v2);
    MPI_Info_set(info, "mid_key", "x");
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's objects exist now */
    errs += expect_value(rank, info, "zeta", v1);
    errs += expect_value(rank, info, "alpha", v2);
    errs += expect_value(rank, info, "nokey", NULL);

    /* keys in insertion order; replacing keeps the position */
    MPI_Info_set(info, "zeta", "replaced");
    const char *order[] = { "zeta", "alpha", "mid_key" };
    MPI_Info_get_nkeys(info, &n);
    if (n != 3)
        errs += mt_fail(rank, "nkeys %d, expected 3", n);
    for (int i = 0; i < 3 && n == 3; i++) {
        MPI_Info_get_nthkey(info, i, key);
        if (strcmp(key, order[i]) != 0)
            errs += mt_fail(rank, "key %d is '%s', expected '%s'", i, key, order[i]);
    }
    errs += expect_value(rank, info, "zeta", "replaced");

    /* a short value buffer truncates: valuelen characters and the terminator */
    char small[8];
    memset(small, '#', sizeof small);
    MPI_Info_get(info, "alpha", 2, small, &flag);
    if (!flag || memcmp(small, v2, 2) != 0 || small[2] != '\0' || small[3] != '#')
        errs += mt_fail(rank, "truncated get: flag %d '%.3s'", flag, small);

    /* dup is a separate object */
    MPI_Info_dup(info, &dup);
    MPI_Info_delete(info, "alpha");
    MPI_Info_set(dup, "only_in_dup", "1");
    errs += expect_value(rank, info, "alpha", NULL);
    errs += expect_value(rank, info, "only_in_dup", NULL);
    errs += expect_value(rank, dup, "alpha", v2);
    errs += expect_value(rank, dup, "zeta", "replaced");
    MPI_Info_get_nkeys(info, &n);
    if (n != 2)
        errs += mt_fail(rank, "after delete: nkeys %d", n);
    MPI_Info_get_nkeys(dup, &n);
    if (n != 4)
        errs += mt_fail(rank, "dup: nkeys %d", n);

    /* long keys and values (MPI_MAX_INFO_KEY/VAL - 1 characters: Open MPI
     * counts the terminator in the limits, MPICH does not) */
    char longkey[MPI_MAX_INFO_KEY + 2], *longval = mt_malloc(MPI_MAX_INFO_VAL + 2);
    memset(longkey, 'k', MPI_MAX_INFO_KEY - 1);
    longkey[MPI_MAX_INFO_KEY - 1] = '\0';
    memset(longval, 'v', MPI_MAX_INFO_VAL - 1);
    longval[MPI_MAX_INFO_VAL - 1] = '\0';
    MPI_Info_set(dup, longkey, longval);
    errs += expect_value(rank, dup, longkey, longval);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    errs += expect_class(rank, MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY, "delete of a missing key");
    memset(longkey, 'k', MPI_MAX_INFO_KEY + 1);
    longkey[MPI_MAX_INFO_KEY + 1] = '\0';
    errs += expect_class(rank, MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "key too long");
    errs += expect_class(rank, MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY, "empty key");
    memset(longval, 'v', MPI_MAX_INFO_VAL + 1);
    longval[MPI_MAX_INFO_VAL + 1] = '\0';
    errs += expect_class(rank, MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE, "value too long");
    /* n out of range: MPICH (and we) say MPI_ERR_ARG, Open MPI MPI_ERR_INFO_KEY */
    int err = MPI_Info_get_nthkey(info, 2, key), cls = -1;
    MPI_Error_class(err, &cls);
    if (cls != MPI_ERR_ARG && cls != MPI_ERR_INFO_KEY)
        errs += mt_fail(rank, "nthkey past the end: error class %d", cls);
    errs += expect_class(rank, MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO, "MPI_INFO_NULL");
    MPI_Info_get_nkeys(info, &n);
    if (n != 2)
        errs += mt_fail(rank, "failed calls changed the info: nkeys %d", n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    free(longval);

    /* MPI_INFO_ENV can be read and duplicated; maxprocs, if given, is the size */
    MPI_Info env;
    char val[MPI_MAX_INFO_VAL + 1];
    MPI_Info_dup(MPI_INFO_ENV, &env);
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag);
    if (flag && atoi(val) != size)
        errs += mt_fail(rank, "MPI_INFO_ENV maxprocs %s, size %d", val, size);
    int n_env = -1, n_dup = -2;
    MPI_Info_get_nkeys(MPI_INFO_ENV, &n_env);
    MPI_Info_get_nkeys(env, &n_dup);
    if (n_env != n_dup)
        errs += mt_fail(rank, "dup of MPI_INFO_ENV: %d keys, original %d", n_dup, n_env);

    MPI_Barrier(MPI_COMM_WORLD); /* the others' frees must not touch ours */
    errs += expect_value(rank, dup, "alpha", v2);
    MPI_Info_free(&info);
    MPI_Info_free(&dup);
    MPI_Info_free(&env);
    if (info != MPI_INFO_NULL || dup != MPI_INFO_NULL || env != MPI_INFO_NULL)
        errs += mt_fail(rank, "Info_free did not reset the handles");
    mt_finish(errs, "info OK");
    MPI_Finalize();
    return 0;
}
