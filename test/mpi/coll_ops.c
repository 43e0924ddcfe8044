/* coll_ops.c - every predefined reduction op on every type it applies to.
 *
 * For each (op, type) every rank builds its input from (rank, index), runs
 * MPI_Allreduce and MPI_Reduce (root = last rank), and compares with the
 * reduction it computes itself, in rank order, from everybody's inputs.
 * Values are chosen so that results are exact (small integers, dyadic
 * fractions, products of 1, -1, 2, 1/2, Gaussian units), so any combining
 * order must give them bit for bit.  MAXLOC/MINLOC inputs have many ties
 * and indices that decrease with the rank, so "ties -> lowest index" is
 * tested independently of the combining order.  User-defined ops:
 * coll_user_ops.c; invalid (op, type) pairs: coll_args.c. */
#include "mpitest.h"
#include <complex.h>
#include <stdbool.h>

#define N 40 /* elements per call */

enum { O_MAX, O_MIN, O_SUM, O_PROD, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MAXLOC, O_MINLOC, NOPS };
static const char *const op_name[NOPS] = {"MAX", "MIN", "SUM", "PROD", "LAND", "LOR",
                                          "LXOR", "BAND", "BOR", "BXOR", "MAXLOC", "MINLOC"};
#define B(o) (1u << (o))
#define INT_OPS (B(O_MAX) | B(O_MIN) | B(O_SUM) | B(O_PROD) | B(O_LAND) | B(O_LOR) | B(O_LXOR) | \
                 B(O_BAND) | B(O_BOR) | B(O_BXOR))
#define FLT_OPS (B(O_MAX) | B(O_MIN) | B(O_SUM) | B(O_PROD))
#define CPX_OPS (B(O_SUM) | B(O_PROD))
#define LOG_OPS (B(O_LAND) | B(O_LOR) | B(O_LXOR))
#define BYTE_OPS (B(O_BAND) | B(O_BOR) | B(O_BXOR))
#define LOC_OPS (B(O_MAXLOC) | B(O_MINLOC))
/* A known Open MPI 4.1 deviation (the programs are checked with it too):
 * it orders MPI_OFFSET as unsigned in MAX/MIN. */
#ifdef OPEN_MPI
#define OFFSET_OPS (INT_OPS & ~(B(O_MAX) | B(O_MIN)))
#else
#define OFFSET_OPS INT_OPS
#endif

static MPI_Op mpi_op(int o)
{
    const MPI_Op ops[NOPS] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR,
                              MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    return ops[o];
}

static uint32_t h(int o, int r, int i) { return mt_hash((uint32_t)o, (uint32_t)r, (uint32_t)i, 77); }

/* Truth of element i of rank r for the logical ops: all false, only rank 0
 * false, random, all true, only one rank true. */
static bool truth(int o, int r, int i, int n)
{
    switch (i % 5) {
    case 0: return false;
    case 1: return r != 0;
    case 2: return h(o, r, i) % 3 != 0;
    case 3: return true;
    default: return r == i % n;
    }
}

/* One C type: input generator, sequential fold (acc = acc op v), equality. */
typedef struct {
    MPI_Datatype dt;
    const char *name;
    size_t size;
    unsigned ops;
    void (*gen)(int o, int r, int i, int n, void *out);
    void (*fold)(int o, void *acc, const void *v);
    bool (*same)(int o, const void *a, const void *b);
} ty_t;

/* Exact equality, which the chosen inputs make the right test. */
#define SAME_EQ(S, T)                                                                     \
    static bool same_##S(int o, const void *a, const void *b)                             \
    {                                                                                     \
        (void)o;                                                                          \
        return *(const T *)a == *(const T *)b;                                            \
    }

#define INT_TYPE(S, T, SIGNED)                                                              \
    typedef T S##_ct;                                                                     \
    static void gen_##S(int o, int r, int i, int n, void *out)                            \
    {                                                                                     \
        uint32_t x = h(o, r, i);                                                          \
        long v;                                                                           \
        if (o == O_SUM)                                                                   \
            v = SIGNED ? (long)(x % 11) - 5 : (long)(x % 11);                              \
        else if (o == O_PROD)                                                             \
            v = (r + i) % 4 == 0 ? 2 : (SIGNED && (x & 1)) ? -1 : 1;                        \
        else if (o == O_LAND || o == O_LOR || o == O_LXOR)                                \
            v = truth(o, r, i, n) ? 1 + 2 * (long)(x & 1) : 0;                             \
        else                                                                              \
            v = SIGNED ? (long)(x % 201) - 100 : (long)(x % 128);                          \
        *(T *)out = (T)v;                                                                 \
    }                                                                                     \
    static void fold_##S(int o, void *acc_, const void *v_)                               \
    {                                                                                     \
        T *acc = acc_, a = *acc, b = *(const T *)v_;                                      \
        switch (o) {                                                                      \
        case O_MAX: *acc = a > b ? a : b; break;                                          \
        case O_MIN: *acc = a < b ? a : b; break;                                          \
        case O_SUM: *acc = (T)(a + b); break;                                             \
        case O_PROD: *acc = (T)(a * b); break;                                            \
        case O_LAND: *acc = (T)(a && b); break;                                           \
        case O_LOR: *acc = (T)(a || b); break;                                            \
        case O_LXOR: *acc = (T)(!a != !b); break;                                         \
        case O_BAND: *acc = (T)(a & b); break;                                            \
        case O_BOR: *acc = (T)(a | b); break;                                             \
        default: *acc = (T)(a ^ b); break;                                                \
        }                                                                                 \
    }                                                                                     \
    static bool same_##S(int o, const void *a_, const void *b_)                           \
    {                                                                                     \
        T a = *(const T *)a_, b = *(const T *)b_;                                         \
        return (o == O_LAND || o == O_LOR || o == O_LXOR) ? !a == !b : a == b;            \
    }

#define FLOAT_TYPE(S, T)                                                                  \
    typedef T S##_ct;                                                                     \
    static void gen_##S(int o, int r, int i, int n, void *out)                            \
    {                                                                                     \
        (void)n;                                                                          \
        uint32_t x = h(o, r, i);                                                          \
        static const double prod_vals[4] = {1.0, -1.0, 2.0, 0.5};                         \
        *(T *)out = (T)(o == O_PROD ? prod_vals[x % 4] : ((double)(x % 2001) - 1000.0) / 8); \
    }                                                                                     \
    static void fold_##S(int o, void *acc_, const void *v_)                               \
    {                                                                                     \
        T *acc = acc_, a = *acc, b = *(const T *)v_;                                      \
        *acc = o == O_MAX ? (a > b ? a : b) : o == O_MIN ? (a < b ? a : b) : o == O_SUM ? a + b : a * b; \
    }                                                                                     \
    SAME_EQ(S, T)

#define COMPLEX_TYPE(S, T)                                                                \
    typedef T S##_ct;                                                                     \
    static void gen_##S(int o, int r, int i, int n, void *out)                            \
    {                                                                                     \
        (void)n;                                                                          \
        uint32_t x = h(o, r, i);                                                          \
        static const double re[6] = {1, 0, -1, 0, 1, 1}, im[6] = {0, 1, 0, -1, 1, -1};    \
        if (o == O_PROD)                                                                  \
            *(T *)out = (T)re[x % 6] + (T)im[x % 6] * (T)I;                               \
        else                                                                              \
            *(T *)out = (T)((double)(x % 201) - 100) + (T)((double)(x >> 16 & 255) / 4) * (T)I; \
    }                                                                                     \
    static void fold_##S(int o, void *acc_, const void *v_)                               \
    {                                                                                     \
        T *acc = acc_;                                                                    \
        *acc = o == O_SUM ? *acc + *(const T *)v_ : *acc * *(const T *)v_;                \
    }                                                                                     \
    SAME_EQ(S, T)

#define PAIR_TYPE(S, VT, IT)                                                              \
    typedef struct { VT v; IT i; } S##_ct;                                                \
    static void gen_##S(int o, int r, int i, int n, void *out)                            \
    {                                                                                     \
        S##_ct p = {(VT)(h(o, r, i) % 4), (IT)((n - r) * 100 + i)}; /* many ties */        \
        *(S##_ct *)out = p;                                                                \
    }                                                                                     \
    static void fold_##S(int o, void *acc_, const void *v_)                               \
    {                                                                                     \
        S##_ct *a = acc_;                                                                  \
        const S##_ct *b = v_;                                                              \
        if (o == O_MAXLOC ? b->v > a->v : b->v < a->v)                                     \
            *a = *b;                                                                      \
        else if (b->v == a->v && b->i < a->i)                                             \
            a->i = b->i;                                                                  \
    }                                                                                     \
    static bool same_##S(int o, const void *a_, const void *b_)                           \
    {                                                                                     \
        (void)o;                                                                          \
        const S##_ct *a = a_, *b = b_;                                                     \
        return a->v == b->v && a->i == b->i;                                              \
    }

INT_TYPE(schar, signed char, 1) INT_TYPE(uchar, unsigned char, 0) INT_TYPE(short, short, 1)
INT_TYPE(ushort, unsigned short, 0) INT_TYPE(int, int, 1) INT_TYPE(uint, unsigned, 0) INT_TYPE(long, long, 1)
INT_TYPE(ulong, unsigned long, 0) INT_TYPE(llong, long long, 1) INT_TYPE(ullong, unsigned long long, 0)
INT_TYPE(i8, int8_t, 1) INT_TYPE(i16, int16_t, 1) INT_TYPE(i32, int32_t, 1) INT_TYPE(i64, int64_t, 1)
INT_TYPE(u8, uint8_t, 0) INT_TYPE(u16, uint16_t, 0) INT_TYPE(u32, uint32_t, 0) INT_TYPE(u64, uint64_t, 0)
INT_TYPE(aint, MPI_Aint, 1) INT_TYPE(offset, MPI_Offset, 1) INT_TYPE(count, MPI_Count, 1)
INT_TYPE(byte, unsigned char, 0)
FLOAT_TYPE(float, float) FLOAT_TYPE(double, double) FLOAT_TYPE(ldouble, long double)
COMPLEX_TYPE(cfloat, float _Complex) COMPLEX_TYPE(cdouble, double _Complex)
COMPLEX_TYPE(cldouble, long double _Complex)
PAIR_TYPE(float_int, float, int) PAIR_TYPE(double_int, double, int) PAIR_TYPE(long_int, long, int)
PAIR_TYPE(two_int, int, int) PAIR_TYPE(short_int, short, int) PAIR_TYPE(ldouble_int, long double, int)
PAIR_TYPE(two_float, float, float) PAIR_TYPE(two_double, double, double)

typedef bool bool_ct;
static void gen_bool(int o, int r, int i, int n, void *out) { *(bool *)out = truth(o, r, i, n); }
static void fold_bool(int o, void *acc_, const void *v_)
{
    bool *acc = acc_, b = *(const bool *)v_;
    *acc = o == O_LAND ? *acc && b : o == O_LOR ? *acc || b : *acc != b;
}
SAME_EQ(bool, bool)

#define TY(S, DT, OPS) {DT, #DT, sizeof(S##_ct), OPS, gen_##S, fold_##S, same_##S}

/* Allreduce and Reduce (root = last) of op o on type t against the fold. */
static int check_op(int rank, int size, const ty_t *t, int o)
{
    int errs = 0, root = size - 1;
    unsigned char *in = mt_malloc(N * t->size), *out = mt_malloc(N * t->size);
    unsigned char *want = mt_malloc(N * t->size), *v = mt_malloc(t->size);
    for (int i = 0; i < N; i++) {
        t->gen(o, 0, i, size, want + i * t->size);
        for (int r = 1; r < size; r++) {
            t->gen(o, r, i, size, v);
            t->fold(o, want + i * t->size, v);
        }
        t->gen(o, rank, i, size, in + i * t->size);
    }
    for (int pass = 0; pass < 2; pass++) {
        memset(out, 0x5a, N * t->size);
        if (pass == 0)
            MPI_Allreduce(in, out, N, t->dt, mpi_op(o), MPI_COMM_WORLD);
        else
            MPI_Reduce(in, out, N, t->dt, mpi_op(o), root, MPI_COMM_WORLD);
        for (int i = 0; i < N && (pass == 0 || rank == root); i++)
            if (!t->same(o, out + i * t->size, want + i * t->size)) {
                errs += mt_fail(rank, "%s MPI_%s on %s: element %d differs from the sequential result",
                                pass ? "Reduce" : "Allreduce", op_name[o], t->name, i);
                break;
            }
    }
    free(in), free(out), free(want), free(v);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0, pairs = 0;
    const ty_t types[] = {
        TY(schar, MPI_SIGNED_CHAR, INT_OPS), TY(uchar, MPI_UNSIGNED_CHAR, INT_OPS), TY(short, MPI_SHORT, INT_OPS),
        TY(ushort, MPI_UNSIGNED_SHORT, INT_OPS), TY(int, MPI_INT, INT_OPS), TY(uint, MPI_UNSIGNED, INT_OPS),
        TY(long, MPI_LONG, INT_OPS), TY(ulong, MPI_UNSIGNED_LONG, INT_OPS), TY(llong, MPI_LONG_LONG, INT_OPS),
        TY(ullong, MPI_UNSIGNED_LONG_LONG, INT_OPS), TY(i8, MPI_INT8_T, INT_OPS), TY(i16, MPI_INT16_T, INT_OPS),
        TY(i32, MPI_INT32_T, INT_OPS), TY(i64, MPI_INT64_T, INT_OPS), TY(u8, MPI_UINT8_T, INT_OPS),
        TY(u16, MPI_UINT16_T, INT_OPS), TY(u32, MPI_UINT32_T, INT_OPS), TY(u64, MPI_UINT64_T, INT_OPS),
        TY(aint, MPI_AINT, INT_OPS), TY(offset, MPI_OFFSET, OFFSET_OPS), TY(count, MPI_COUNT, INT_OPS),
        TY(int, MPI_INTEGER, INT_OPS & ~LOG_OPS), TY(int, MPI_LOGICAL, LOG_OPS),
        TY(bool, MPI_C_BOOL, LOG_OPS), TY(byte, MPI_BYTE, BYTE_OPS),
        TY(float, MPI_FLOAT, FLT_OPS), TY(double, MPI_DOUBLE, FLT_OPS), TY(ldouble, MPI_LONG_DOUBLE, FLT_OPS),
        TY(float, MPI_REAL, FLT_OPS), TY(double, MPI_DOUBLE_PRECISION, FLT_OPS),
        TY(cfloat, MPI_C_FLOAT_COMPLEX, CPX_OPS), TY(cdouble, MPI_C_DOUBLE_COMPLEX, CPX_OPS),
        TY(cldouble, MPI_C_LONG_DOUBLE_COMPLEX, CPX_OPS), TY(cfloat, MPI_COMPLEX, CPX_OPS),
        TY(cdouble, MPI_DOUBLE_COMPLEX, CPX_OPS),
        TY(float_int, MPI_FLOAT_INT, LOC_OPS), TY(double_int, MPI_DOUBLE_INT, LOC_OPS),
        TY(long_int, MPI_LONG_INT, LOC_OPS), TY(two_int, MPI_2INT, LOC_OPS), TY(short_int, MPI_SHORT_INT, LOC_OPS),
        TY(ldouble_int, MPI_LONG_DOUBLE_INT, LOC_OPS), TY(two_int, MPI_2INTEGER, LOC_OPS),
        TY(two_float, MPI_2REAL, LOC_OPS), TY(two_double, MPI_2DOUBLE_PRECISION, LOC_OPS),
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (int o = 0; o < NOPS; o++)
            if (types[k].ops & B(o)) {
                errs += check_op(rank, size, &types[k], o);
                pairs++;
            }
    char ok[96];
    snprintf(ok, sizeof ok, "coll_ops: %d ranks, %d (op, type) pairs OK", size, pairs);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
