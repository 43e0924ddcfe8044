/* interop.c - the MPI 3.1 calls around the core: C/Fortran handle and
 * status conversion, MPI_Aint_add/diff, the Fortran types of fixed size and
 * the C++ types used from C (sizes, a message, a reduction), type matching,
 * MPI_Status_set_elements(_x) and its error class, MPI_Comm_get_parent,
 * communicator info, MPI_Info_get_string, MPI_Pcontrol and the tool
 * information interface. */
#include "mpitest.h"

#include <complex.h>
#include <stdbool.h>

static int expect_class(int rank, int err, int want, const char *what)
{
    int cls = -1;
    MPI_Error_class(err, &cls);
    return cls == want ? 0 : mt_fail(rank, "%s: error class %d, expected %d", what, cls, want);
}

static int check_handles(int rank)
{
    int errs = 0;
    if (MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) != MPI_COMM_WORLD)
        errs += mt_fail(rank, "MPI_COMM_WORLD does not survive c2f/f2c");
    if (MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) != MPI_DOUBLE)
        errs += mt_fail(rank, "MPI_DOUBLE does not survive c2f/f2c");
    if (MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) != MPI_SUM || MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) != MPI_GROUP_EMPTY)
        errs += mt_fail(rank, "MPI_SUM or MPI_GROUP_EMPTY does not survive c2f/f2c");
    if (MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) != MPI_REQUEST_NULL)
        errs += mt_fail(rank, "MPI_REQUEST_NULL does not survive c2f/f2c");

    /* two live requests: distinct integers, each converts back to itself */
    int a = rank, b = -1;
    MPI_Request rq[2];
    MPI_Irecv(&b, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &rq[0]);
    MPI_Isend(&a, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &rq[1]);
    MPI_Fint f0 = MPI_Request_c2f(rq[0]), f1 = MPI_Request_c2f(rq[1]);
    if (f0 == f1 || MPI_Request_f2c(f0) != rq[0] || MPI_Request_f2c(f1) != rq[1] || f0 == 0)
        errs += mt_fail(rank, "request integers %d %d do not convert back", (int)f0, (int)f1);
    MPI_Request back[2] = { MPI_Request_f2c(f0), MPI_Request_f2c(f1) };
    MPI_Status st[2];
    MPI_Waitall(2, back, st);
    if (b != rank)
        errs += mt_fail(rank, "message through converted requests: %d, expected %d", b, rank);

    /* a status through Fortran and back keeps source, tag and count */
    MPI_Fint fst[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    MPI_Status c2;
    int n = -1;
    MPI_Status_c2f(&st[0], fst);
    memset(&c2, 0, sizeof c2);
    MPI_Status_f2c(fst, &c2);
    MPI_Get_count(&c2, MPI_INT, &n);
    if (fst[0] != 0 || fst[1] != 7 || c2.MPI_SOURCE != 0 || c2.MPI_TAG != 7 || n != 1)
        errs += mt_fail(rank, "status through Fortran: source %d tag %d count %d", (int)fst[0], (int)fst[1], n);
#if MPI_VERSION >= 4 || defined(AMPI_UCX) /* Open MPI 4 builds them only with Fortran 2008 */
    MPI_F08_status f08;
    MPI_Status_c2f08(&st[0], &f08);
    memset(&c2, 0, sizeof c2);
    MPI_Status_f082c(&f08, &c2);
    MPI_Get_count(&c2, MPI_INT, &n);
    if (c2.MPI_SOURCE != 0 || c2.MPI_TAG != 7 || n != 1)
        errs += mt_fail(rank, "status through Fortran 2008: tag %d count %d", c2.MPI_TAG, n);
#endif
    return errs;
}

static int check_types(int rank, int size)
{
    int errs = 0;
    const struct {
        MPI_Datatype t;
        int size;
        const char *name;
    } sized[] = {
        { MPI_INTEGER1, 1, "MPI_INTEGER1" },
        { MPI_INTEGER2, 2, "MPI_INTEGER2" },
        { MPI_INTEGER4, 4, "MPI_INTEGER4" },
        { MPI_INTEGER8, 8, "MPI_INTEGER8" },
        { MPI_REAL4, 4, "MPI_REAL4" },
        { MPI_REAL8, 8, "MPI_REAL8" },
        { MPI_COMPLEX8, 8, "MPI_COMPLEX8" },
        { MPI_COMPLEX16, 16, "MPI_COMPLEX16" },
        { MPI_CXX_BOOL, (int)sizeof(bool), "MPI_CXX_BOOL" },
        { MPI_CXX_FLOAT_COMPLEX, (int)sizeof(float _Complex), "MPI_CXX_FLOAT_COMPLEX" },
        { MPI_CXX_DOUBLE_COMPLEX, (int)sizeof(double _Complex), "MPI_CXX_DOUBLE_COMPLEX" },
        { MPI_CXX_LONG_DOUBLE_COMPLEX, (int)sizeof(long double _Complex), "MPI_CXX_LONG_DOUBLE_COMPLEX" },
    };
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++) {
        int s = -1, len = 0;
        char name[MPI_MAX_OBJECT_NAME];
        MPI_Type_size(sized[i].t, &s);
        MPI_Type_get_name(sized[i].t, name, &len);
        if (s != sized[i].size || strcmp(name, sized[i].name) != 0)
            errs += mt_fail(rank, "%s: size %d name '%s', expected %d", sized[i].name, s, name, sized[i].size);
    }

    /* a sum over MPI_INTEGER8 and MPI_REAL8, and a ring message of MPI_INTEGER2 */
    long long l = (long long)rank << 33, lsum = 0;
    double d = rank + 0.25, dsum = 0;
    MPI_Allreduce(&l, &lsum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&d, &dsum, 1, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD);
    long long lwant = ((long long)size * (size - 1) / 2) << 33;
    double dwant = size * (size - 1) / 2.0 + 0.25 * size;
    if (lsum != lwant || dsum != dwant)
        errs += mt_fail(rank, "sums over MPI_INTEGER8/MPI_REAL8: %lld %g, expected %lld %g", lsum, dsum, lwant, dwant);
    short out[3] = { (short)rank, (short)(rank + 100), -5 }, in[3] = { 0, 0, 0 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(out, 3, MPI_INTEGER2, right, 3, in, 3, MPI_INTEGER2, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in[0] != left || in[1] != left + 100 || in[2] != -5)
        errs += mt_fail(rank, "MPI_INTEGER2 ring: got %d %d %d from %d", in[0], in[1], in[2], left);

    /* matching by size and parameterized Fortran 90 types: any predefined
     * type of the right size answers (MPI 3.1 17.1.9) */
    const struct {
        int typeclass, size;
    } match[] = { { MPI_TYPECLASS_INTEGER, 4 }, { MPI_TYPECLASS_REAL, 8 }, { MPI_TYPECLASS_COMPLEX, 8 } };
    MPI_Datatype m = MPI_DATATYPE_NULL;
    int msize = -1;
    for (size_t i = 0; i < sizeof match / sizeof match[0]; i++) {
        MPI_Type_match_size(match[i].typeclass, match[i].size, &m);
        MPI_Type_size(m, &msize);
        if (msize != match[i].size)
            errs += mt_fail(rank, "MPI_Type_match_size(%d, %d): a type of %d bytes", match[i].typeclass,
                            match[i].size, msize);
    }
    MPI_Type_create_f90_integer(9, &m);
    MPI_Type_size(m, &msize);
    if (msize != 4)
        errs += mt_fail(rank, "f90 integer of range 9: %d bytes, expected 4", msize);
    MPI_Type_create_f90_real(10, MPI_UNDEFINED, &m);
    MPI_Type_size(m, &msize);
    if (msize != 8)
        errs += mt_fail(rank, "f90 real of precision 10: %d bytes, expected 8", msize);
    /* its envelope names the constructor and (p, r); the same handle for the
     * same arguments; predefined for the reductions */
    int ni = -1, na = -1, nt = -1, comb = -1, pr[2] = { -1, -1 };
    MPI_Datatype again = MPI_DATATYPE_NULL, unused;
    MPI_Type_get_envelope(m, &ni, &na, &nt, &comb);
    MPI_Type_get_contents(m, 2, 0, 0, pr, NULL, &unused);
    MPI_Type_create_f90_real(10, MPI_UNDEFINED, &again);
    if (comb != MPI_COMBINER_F90_REAL || ni != 2 || na != 0 || nt != 0 || pr[0] != 10 ||
        pr[1] != MPI_UNDEFINED || again != m)
        errs += mt_fail(rank, "f90 real envelope: combiner %d (%d %d %d) contents (%d, %d), same handle %d", comb,
                        ni, na, nt, pr[0], pr[1], again == m);
    double one = 1.0, sum = 0.0;
    MPI_Allreduce(&one, &sum, 1, m, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (double)mt_size())
        errs += mt_fail(rank, "MPI_SUM over an f90 real: %g", sum);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errs += expect_class(rank, MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m), MPI_ERR_ARG,
                         "MPI_Type_match_size of 3 bytes");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* address arithmetic over an array */
    double arr[4];
    MPI_Aint a0, a3;
    MPI_Get_address(&arr[0], &a0);
    MPI_Get_address(&arr[3], &a3);
    if (MPI_Aint_diff(a3, a0) != 3 * (MPI_Aint)sizeof(double) || MPI_Aint_add(a0, 3 * sizeof(double)) != a3)
        errs += mt_fail(rank, "MPI_Aint_add/diff over an array of doubles");
    return errs;
}

static int check_status_setters(int rank)
{
    int errs = 0, n = -1;
    MPI_Count x = -1;
    MPI_Status st;
    MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)3 << 31);
    MPI_Get_elements_x(&st, MPI_INT, &x);
    if (x != (MPI_Count)3 << 31)
        errs += mt_fail(rank, "MPI_Status_set_elements_x: %lld elements back", (long long)x);
    MPI_Status_set_elements(&st, MPI_SHORT, 5);
    MPI_Get_count(&st, MPI_SHORT, &n);
    if (n != 5)
        errs += mt_fail(rank, "MPI_Status_set_elements: count %d, expected 5", n);
    /* MPI 3.1 8.4: a bad datatype is MPI_ERR_TYPE, not MPI_ERR_ARG */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errs += expect_class(rank, MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE,
                         "MPI_Status_set_elements(MPI_DATATYPE_NULL)");
    errs += expect_class(rank, MPI_Status_set_elements_x(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE,
                         "MPI_Status_set_elements_x(MPI_DATATYPE_NULL)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

static int check_env(int rank)
{
    int errs = 0;
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        errs += mt_fail(rank, "MPI_Comm_get_parent: not MPI_COMM_NULL");
    if (MPI_Pcontrol(1) != MPI_SUCCESS || MPI_Pcontrol(0) != MPI_SUCCESS)
        errs += mt_fail(rank, "MPI_Pcontrol failed");

    /* communicator hints: accepted; the info of hints used is a new object */
    MPI_Info hints, used = MPI_INFO_NULL;
    int nkeys = -1;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "mpi_assert_no_any_tag", "true");
    MPI_Comm_set_info(MPI_COMM_WORLD, hints);
    MPI_Comm_get_info(MPI_COMM_WORLD, &used);
    if (used == MPI_INFO_NULL || used == hints || MPI_Info_get_nkeys(used, &nkeys) != MPI_SUCCESS || nkeys < 0)
        errs += mt_fail(rank, "MPI_Comm_get_info: no info object of its own");
    if (used != MPI_INFO_NULL)
        MPI_Info_free(&used);

#if MPI_VERSION >= 4 || defined(AMPI_UCX) /* MPI 4.0; Open MPI 4 lacks it */
    /* MPI_Info_get_string: full value, cut value, room asked for */
    char val[64];
    int buflen = sizeof val, flag = 0;
    MPI_Info_get_string(hints, "mpi_assert_no_any_tag", &buflen, val, &flag);
    if (!flag || buflen != 5 || strcmp(val, "true") != 0)
        errs += mt_fail(rank, "MPI_Info_get_string: flag %d buflen %d value '%s'", flag, buflen, val);
    buflen = 3;
    MPI_Info_get_string(hints, "mpi_assert_no_any_tag", &buflen, val, &flag);
    if (!flag || buflen != 5 || strcmp(val, "tr") != 0)
        errs += mt_fail(rank, "MPI_Info_get_string cut short: buflen %d value '%s'", buflen, val);
    buflen = 0;
    MPI_Info_get_string(hints, "absent", &buflen, NULL, &flag);
    if (flag)
        errs += mt_fail(rank, "MPI_Info_get_string found an absent key");
#endif
    MPI_Info_free(&hints);

    /* the tool information interface: works, and has nothing to show */
    int provided = -1, num = -1, idx;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS || provided != MPI_THREAD_SINGLE)
        errs += mt_fail(rank, "MPI_T_init_thread: provided %d", provided);
    MPI_T_cvar_get_num(&num);
#ifdef AMPI_UCX
    if (num != 0) /* this library has no control variables yet */
#else
    if (num < 0)
#endif
        errs += mt_fail(rank, "MPI_T_cvar_get_num: %d", num);
    if (MPI_T_pvar_get_index("no_such_variable", MPI_T_PVAR_CLASS_COUNTER, &idx) != MPI_T_ERR_INVALID_NAME)
        errs += mt_fail(rank, "MPI_T_pvar_get_index of an unknown name is not MPI_T_ERR_INVALID_NAME");
    MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
    if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS || session == MPI_T_PVAR_SESSION_NULL ||
        MPI_T_pvar_session_free(&session) != MPI_SUCCESS || session != MPI_T_PVAR_SESSION_NULL)
        errs += mt_fail(rank, "MPI_T pvar session create/free");
    if (MPI_T_finalize() != MPI_SUCCESS)
        errs += mt_fail(rank, "MPI_T_finalize failed");
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += check_handles(rank);
    errs += check_types(rank, size);
    errs += check_status_setters(rank);
    errs += check_env(rank);
    mt_finish(errs, "interop: OK");
    MPI_Finalize();
    return 0;
}
