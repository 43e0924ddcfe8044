/* Kernels of the predefined reduction operations, one per (op, element
 * kind), and the table of which predefined type may use which op (MPI 3.1
 * section 5.9.2).  Types of equal C representation share an element kind,
 * so MPI_INT and MPI_INT32_T use the same kernels. */
#define AMPI_BUILDING_LIBRARY 1
/* The kernels are memory-bound elementwise loops that -O2's "very cheap"
 * vectorizer leaves scalar (it neither checks in/inout for overlap at run
 * time nor adds a remainder loop): a scalar float sum ran at a third of the
 * speed of the copies around it.  Elementwise SIMD keeps every result
 * bit-identical to the scalar loop (no reassociation). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif
#include "coll/coll_op.h"
#include "datatype/dt.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

enum elem_kind {
    EK_NONE,
    EK_I8, EK_U8, EK_I16, EK_U16, EK_I32, EK_U32, EK_I64, EK_U64,
    EK_F32, EK_F64, EK_FLD,
    EK_CF32, EK_CF64, EK_CFLD,
    EK_BOOL, EK_FLOGICAL, EK_BYTE,
    EK_FLOAT_INT, EK_DOUBLE_INT, EK_LONG_INT, EK_2INT, EK_SHORT_INT, EK_LDOUBLE_INT, EK_2FLOAT, EK_2DOUBLE,
    EK_COUNT
};

/* Kind of a C integer type, from its size and signedness (S: 1 signed). */
#define IKIND(T, S)                                                 \
    (sizeof(T) == 1   ? ((S) ? EK_I8 : EK_U8)                       \
     : sizeof(T) == 2 ? ((S) ? EK_I16 : EK_U16)                     \
     : sizeof(T) == 4 ? ((S) ? EK_I32 : EK_U32)                     \
                      : ((S) ? EK_I64 : EK_U64))

static const unsigned char kind_of[AMPI_DATATYPE_PREDEFINED_LAST + 1] = {
    [MPI_CHAR] = IKIND(char, CHAR_MIN < 0), /* lenient: MPI 3.1 lists only the signed/unsigned chars */
    [MPI_SIGNED_CHAR] = IKIND(signed char, 1),
    [MPI_UNSIGNED_CHAR] = IKIND(unsigned char, 0),
    [MPI_SHORT] = IKIND(short, 1),
    [MPI_UNSIGNED_SHORT] = IKIND(unsigned short, 0),
    [MPI_INT] = IKIND(int, 1),
    [MPI_UNSIGNED] = IKIND(unsigned, 0),
    [MPI_LONG] = IKIND(long, 1),
    [MPI_UNSIGNED_LONG] = IKIND(unsigned long, 0),
    [MPI_LONG_LONG_INT] = IKIND(long long, 1),
    [MPI_UNSIGNED_LONG_LONG] = IKIND(unsigned long long, 0),
    [MPI_INT8_T] = EK_I8, [MPI_INT16_T] = EK_I16, [MPI_INT32_T] = EK_I32, [MPI_INT64_T] = EK_I64,
    [MPI_UINT8_T] = EK_U8, [MPI_UINT16_T] = EK_U16, [MPI_UINT32_T] = EK_U32, [MPI_UINT64_T] = EK_U64,
    [MPI_AINT] = IKIND(MPI_Aint, 1),
    [MPI_OFFSET] = IKIND(MPI_Offset, 1),
    [MPI_COUNT] = IKIND(MPI_Count, 1),
    [MPI_INTEGER] = EK_I32,
    [MPI_FLOAT] = EK_F32, [MPI_REAL] = EK_F32,
    [MPI_DOUBLE] = EK_F64, [MPI_DOUBLE_PRECISION] = EK_F64,
    [MPI_LONG_DOUBLE] = EK_FLD,
    [MPI_C_FLOAT_COMPLEX] = EK_CF32, [MPI_COMPLEX] = EK_CF32,
    [MPI_C_DOUBLE_COMPLEX] = EK_CF64, [MPI_DOUBLE_COMPLEX] = EK_CF64,
    [MPI_C_LONG_DOUBLE_COMPLEX] = EK_CFLD,
    [MPI_C_BOOL] = EK_BOOL,
    [MPI_LOGICAL] = EK_FLOGICAL,
    [MPI_BYTE] = EK_BYTE,
    [MPI_FLOAT_INT] = EK_FLOAT_INT,
    [MPI_DOUBLE_INT] = EK_DOUBLE_INT,
    [MPI_LONG_INT] = EK_LONG_INT,
    [MPI_2INT] = EK_2INT, [MPI_2INTEGER] = EK_2INT,
    [MPI_SHORT_INT] = EK_SHORT_INT,
    [MPI_LONG_DOUBLE_INT] = EK_LDOUBLE_INT,
    [MPI_2REAL] = EK_2FLOAT,
    [MPI_2DOUBLE_PRECISION] = EK_2DOUBLE,
    [MPI_CXX_BOOL] = EK_BOOL,
    [MPI_CXX_FLOAT_COMPLEX] = EK_CF32, [MPI_CXX_DOUBLE_COMPLEX] = EK_CF64,
    [MPI_CXX_LONG_DOUBLE_COMPLEX] = EK_CFLD,
    [MPI_INTEGER1] = EK_I8, [MPI_INTEGER2] = EK_I16, [MPI_INTEGER4] = EK_I32, [MPI_INTEGER8] = EK_I64,
    [MPI_REAL4] = EK_F32, [MPI_REAL8] = EK_F64,
    [MPI_COMPLEX8] = EK_CF32, [MPI_COMPLEX16] = EK_CF64,
};

/* One elementwise loop: b[i] = EXPR(A = in[i], B = inout[i]). */
#define A a[i]
#define B b[i]
#define LOOP(name, T, EXPR)                                        \
    static void name(const void *in_, void *io_, size_t n)         \
    {                                                              \
        const T *a = in_;                                          \
        T *b = io_;                                                \
        for (size_t i = 0; i < n; i++)                             \
            b[i] = (T)(EXPR);                                      \
    }

#define MINMAX(S, T) LOOP(max_##S, T, A > B ? A : B) LOOP(min_##S, T, A < B ? A : B)
/* integer sums and products wrap (two's complement): computed unsigned so
 * that overflow is defined, which also serves the signed types */
#define IARITH(S, T) LOOP(sum_##S, T, (uint64_t)A + (uint64_t)B) LOOP(prod_##S, T, (uint64_t)A * (uint64_t)B)
#define ARITH(S, T) LOOP(sum_##S, T, A + B) LOOP(prod_##S, T, A * B)
#define LOGIC(S, T) LOOP(land_##S, T, A && B) LOOP(lor_##S, T, A || B) LOOP(lxor_##S, T, !A != !B)
#define BITS(S, T) LOOP(band_##S, T, A & B) LOOP(bor_##S, T, A | B) LOOP(bxor_##S, T, A ^ B)

MINMAX(i8, int8_t) MINMAX(u8, uint8_t) MINMAX(i16, int16_t) MINMAX(u16, uint16_t)
MINMAX(i32, int32_t) MINMAX(u32, uint32_t) MINMAX(i64, int64_t) MINMAX(u64, uint64_t)
MINMAX(f32, float) MINMAX(f64, double) MINMAX(fld, long double)
IARITH(u8, uint8_t) IARITH(u16, uint16_t) IARITH(u32, uint32_t) IARITH(u64, uint64_t)
ARITH(f32, float) ARITH(f64, double) ARITH(fld, long double)
ARITH(cf32, float _Complex) ARITH(cf64, double _Complex) ARITH(cfld, long double _Complex)
LOGIC(u8, uint8_t) LOGIC(u16, uint16_t) LOGIC(u32, uint32_t) LOGIC(u64, uint64_t) LOGIC(bool, bool)
BITS(u8, uint8_t) BITS(u16, uint16_t) BITS(u32, uint32_t) BITS(u64, uint64_t)

/* MAXLOC/MINLOC on (value, index) pairs: the better value wins; on a tie
 * the lower index, so the result does not depend on the combining order. */
#define LOC(S, VT, IT)                                                        \
    typedef struct { VT v; IT i; } pair_##S;                                  \
    LOC_LOOP(maxloc_##S, pair_##S, >)                                         \
    LOC_LOOP(minloc_##S, pair_##S, <)
#define LOC_LOOP(name, P, CMP)                                                \
    static void name(const void *in_, void *io_, size_t n)                    \
    {                                                                         \
        const P *a = in_;                                                     \
        P *b = io_;                                                           \
        for (size_t i = 0; i < n; i++) {                                      \
            if (a[i].v CMP b[i].v)                                            \
                b[i] = a[i];                                                  \
            else if (a[i].v == b[i].v && a[i].i < b[i].i)                     \
                b[i].i = a[i].i;                                              \
        }                                                                     \
    }

LOC(float_int, float, int) LOC(double_int, double, int) LOC(long_int, long, int) LOC(2int, int, int)
LOC(short_int, short, int) LOC(ldouble_int, long double, int) LOC(2float, float, float)
LOC(2double, double, double)

/* Row initialisers: the kinds an op class applies to. */
#define SIGNED_INTS(op)                                                             \
    [EK_I8] = op##_i8, [EK_U8] = op##_u8, [EK_I16] = op##_i16, [EK_U16] = op##_u16, \
    [EK_I32] = op##_i32, [EK_U32] = op##_u32, [EK_I64] = op##_i64, [EK_U64] = op##_u64
#define ANY_INTS(op)                                                                \
    [EK_I8] = op##_u8, [EK_U8] = op##_u8, [EK_I16] = op##_u16, [EK_U16] = op##_u16, \
    [EK_I32] = op##_u32, [EK_U32] = op##_u32, [EK_I64] = op##_u64, [EK_U64] = op##_u64
#define FLOATS(op) [EK_F32] = op##_f32, [EK_F64] = op##_f64, [EK_FLD] = op##_fld
#define COMPLEXES(op) [EK_CF32] = op##_cf32, [EK_CF64] = op##_cf64, [EK_CFLD] = op##_cfld
#define LOGICALS(op) ANY_INTS(op), [EK_BOOL] = op##_bool, [EK_FLOGICAL] = op##_u32
#define BITWISE(op) ANY_INTS(op), [EK_BYTE] = op##_u8
#define PAIRS(op)                                                                    \
    [EK_FLOAT_INT] = op##_float_int, [EK_DOUBLE_INT] = op##_double_int,              \
    [EK_LONG_INT] = op##_long_int, [EK_2INT] = op##_2int, [EK_SHORT_INT] = op##_short_int, \
    [EK_LDOUBLE_INT] = op##_ldouble_int, [EK_2FLOAT] = op##_2float, [EK_2DOUBLE] = op##_2double

static coll_kernel_t *const kernels[MPI_MINLOC + 1][EK_COUNT] = {
    [MPI_MAX] = { SIGNED_INTS(max), FLOATS(max) },
    [MPI_MIN] = { SIGNED_INTS(min), FLOATS(min) },
    [MPI_SUM] = { ANY_INTS(sum), FLOATS(sum), COMPLEXES(sum) },
    [MPI_PROD] = { ANY_INTS(prod), FLOATS(prod), COMPLEXES(prod) },
    [MPI_LAND] = { LOGICALS(land) },
    [MPI_LOR] = { LOGICALS(lor) },
    [MPI_LXOR] = { LOGICALS(lxor) },
    [MPI_BAND] = { BITWISE(band) },
    [MPI_BOR] = { BITWISE(bor) },
    [MPI_BXOR] = { BITWISE(bxor) },
    [MPI_MAXLOC] = { PAIRS(maxloc) },
    [MPI_MINLOC] = { PAIRS(minloc) },
};

coll_kernel_t *coll_op_kernel(MPI_Op op, MPI_Datatype dt)
{
    if (op < MPI_MAX || op > MPI_MINLOC || !dt_valid(dt))
        return NULL;
    return kernels[op][kind_of[dt]];
}
