/* Datatypes for other languages' types (MPI 3.1 17.1.9, 17.2.5) and
 * address arithmetic (4.1.5).
 *
 * The parameterized Fortran 90 types have the data of the predefined type
 * of fixed size with the asked precision and range (MPI_INTEGER1..8,
 * MPI_REAL4/8, MPI_COMPLEX8/16, or the long double types), but their own
 * handle whose envelope says MPI_COMBINER_F90_* with (p, r) as contents
 * (MPI 3.1 4.1.13).  MPI makes them predefined: one handle per (kind, p, r)
 * for the whole process, never freed, and the reductions take them as
 * their fixed-size type (coll_op.c asks dt_f90_base). */
#include "core/core_rank.h"
#include "datatype/dt_internal.h"

#include <float.h>

#define F90_MAX 64 /* distinct (kind, p, r) a process asks for */

static struct {
    int combiner, p, r;
    MPI_Datatype handle, base;
} f90_types[F90_MAX];
static int f90_count;

MPI_Datatype dt_f90_base(MPI_Datatype t)
{
    for (int i = 0; i < f90_count; i++)
        if (f90_types[i].handle == t)
            return f90_types[i].base;
    return MPI_DATATYPE_NULL;
}

/* The handle for (combiner, p, r), made at the first request; r alone
 * for MPI_COMBINER_F90_INTEGER. */
static int f90_handle(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
    for (int i = 0; i < f90_count; i++)
        if (f90_types[i].combiner == combiner && f90_types[i].p == p && f90_types[i].r == r) {
            *out = f90_types[i].handle;
            return MPI_SUCCESS;
        }
    if (f90_count == F90_MAX) /* more distinct kinds than any program uses: the fixed-size type */
        return *out = base, MPI_SUCCESS;
    dt_entry_t e = { 0, 1, dt_view(base) };
    dt_type_t *d = NULL;
    int err = dt_build(&e, 1, &d);
    bool integer = combiner == MPI_COMBINER_F90_INTEGER;
    if (!err)
        err = dt_contents_init(d, combiner, integer ? 1 : 2, 0, 0);
    if (!err) {
        d->ints[0] = integer ? r : p;
        if (!integer)
            d->ints[1] = r;
        d->committed = true;
        err = dt_register(d, out);
    }
    if (err) {
        dt_destroy(d);
        return err;
    }
    f90_types[f90_count++] = (__typeof__(f90_types[0])){ combiner, p, r, *out, base };
    return MPI_SUCCESS;
}

#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp); }

#pragma weak MPI_Aint_diff = PMPI_Aint_diff
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

#pragma weak MPI_Type_match_size = PMPI_Type_match_size
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const struct {
        int typeclass;
        MPI_Datatype type;
    } candidates[] = {
        { MPI_TYPECLASS_INTEGER, MPI_INTEGER1 }, { MPI_TYPECLASS_INTEGER, MPI_INTEGER2 },
        { MPI_TYPECLASS_INTEGER, MPI_INTEGER4 }, { MPI_TYPECLASS_INTEGER, MPI_INTEGER8 },
        { MPI_TYPECLASS_REAL, MPI_REAL4 },       { MPI_TYPECLASS_REAL, MPI_REAL8 },
        { MPI_TYPECLASS_REAL, MPI_LONG_DOUBLE }, { MPI_TYPECLASS_COMPLEX, MPI_COMPLEX8 },
        { MPI_TYPECLASS_COMPLEX, MPI_COMPLEX16 }, { MPI_TYPECLASS_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX },
    };
    if (!datatype)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (candidates[i].typeclass == typeclass && (int)dt_size(candidates[i].type) == size) {
            *datatype = candidates[i].type;
            return MPI_SUCCESS;
        }
    return core_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
}

#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    /* decimal exponent range of each size: 10^r fits */
    static const struct {
        int range;
        MPI_Datatype type;
    } ints[] = { { 2, MPI_INTEGER1 }, { 4, MPI_INTEGER2 }, { 9, MPI_INTEGER4 }, { 18, MPI_INTEGER8 } };
    if (!newtype)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer");
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (r == MPI_UNDEFINED || r <= ints[i].range) {
            int err = f90_handle(MPI_COMBINER_F90_INTEGER, 0, r, ints[i].type, newtype);
            return err ? core_error(NULL, err, "MPI_Type_create_f90_integer") : MPI_SUCCESS;
        }
    return core_error_msg(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer", "no integer type has that range");
}

/* The smallest real type with precision p and range r (MPI_UNDEFINED: any);
 * complex types are pairs of the same reals. */
static int f90_real(int p, int r, bool complex, MPI_Datatype *newtype, const char *func)
{
    static const struct {
        int precision, range;
        MPI_Datatype real, cplx;
    } reals[] = {
        { FLT_DIG, FLT_MAX_10_EXP, MPI_REAL4, MPI_COMPLEX8 },
        { DBL_DIG, DBL_MAX_10_EXP, MPI_REAL8, MPI_COMPLEX16 },
        { LDBL_DIG, LDBL_MAX_10_EXP, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX },
    };
    if (!newtype)
        return core_error(NULL, MPI_ERR_ARG, func);
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return core_error_msg(NULL, MPI_ERR_ARG, func, "p and r are both MPI_UNDEFINED");
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if ((p == MPI_UNDEFINED || p <= reals[i].precision) && (r == MPI_UNDEFINED || r <= reals[i].range)) {
            int err = f90_handle(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                                 complex ? reals[i].cplx : reals[i].real, newtype);
            return err ? core_error(NULL, err, func) : MPI_SUCCESS;
        }
    return core_error_msg(NULL, MPI_ERR_ARG, func, "no real type has that precision and range");
}

#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return f90_real(p, r, false, newtype, "MPI_Type_create_f90_real");
}

#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return f90_real(p, r, true, newtype, "MPI_Type_create_f90_complex");
}
