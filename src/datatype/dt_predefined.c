#define AMPI_BUILDING_LIBRARY 1
#include "datatype/dt.h"

#include <complex.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

/* C(h, name, ctype): size, extent and alignment of the C type;
 * N(h, name): no data (MPI_DATATYPE_NULL and the MPI_LB/MPI_UB markers). */
#define C(h, n, ctype) [h] = { n, sizeof(ctype), sizeof(ctype), _Alignof(ctype) }
#define N(h, n) [h] = { n, 0, 0, 1 }
#define PAIR(a, b) struct { a x; b y; }
/* MPI's (value, index) pairs: the data of a value and an int; the extent
 * of the C struct, padding included (the padding is no data). */
#define P(h, n, a)                                                                               \
    [h] = { n, sizeof(a) + sizeof(int), sizeof(PAIR(a, int)), _Alignof(PAIR(a, int)), sizeof(a), \
            offsetof(PAIR(a, int), y) }

const dt_info_t dt_predefined[AMPI_DATATYPE_PREDEFINED_LAST + 1] = {
    N(MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL"),
    C(MPI_CHAR, "MPI_CHAR", char),
    C(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", signed char),
    C(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", unsigned char),
    C(MPI_BYTE, "MPI_BYTE", unsigned char),
    C(MPI_WCHAR, "MPI_WCHAR", wchar_t),
    C(MPI_SHORT, "MPI_SHORT", short),
    C(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", unsigned short),
    C(MPI_INT, "MPI_INT", int),
    C(MPI_UNSIGNED, "MPI_UNSIGNED", unsigned),
    C(MPI_LONG, "MPI_LONG", long),
    C(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", unsigned long),
    C(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", long long),
    C(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", unsigned long long),
    C(MPI_FLOAT, "MPI_FLOAT", float),
    C(MPI_DOUBLE, "MPI_DOUBLE", double),
    C(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", long double),
    C(MPI_PACKED, "MPI_PACKED", unsigned char),
    C(MPI_INT8_T, "MPI_INT8_T", int8_t),
    C(MPI_INT16_T, "MPI_INT16_T", int16_t),
    C(MPI_INT32_T, "MPI_INT32_T", int32_t),
    C(MPI_INT64_T, "MPI_INT64_T", int64_t),
    C(MPI_UINT8_T, "MPI_UINT8_T", uint8_t),
    C(MPI_UINT16_T, "MPI_UINT16_T", uint16_t),
    C(MPI_UINT32_T, "MPI_UINT32_T", uint32_t),
    C(MPI_UINT64_T, "MPI_UINT64_T", uint64_t),
    C(MPI_C_BOOL, "MPI_C_BOOL", bool),
    C(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", float _Complex), /* MPI_C_COMPLEX names the same type */
    C(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", double _Complex),
    C(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", long double _Complex),
    C(MPI_AINT, "MPI_AINT", MPI_Aint),
    C(MPI_OFFSET, "MPI_OFFSET", MPI_Offset),
    C(MPI_COUNT, "MPI_COUNT", MPI_Count),
    P(MPI_FLOAT_INT, "MPI_FLOAT_INT", float),
    P(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", double),
    P(MPI_LONG_INT, "MPI_LONG_INT", long),
    C(MPI_2INT, "MPI_2INT", PAIR(int, int)),
    P(MPI_SHORT_INT, "MPI_SHORT_INT", short),
    P(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", long double),
    C(MPI_CHARACTER, "MPI_CHARACTER", char),
    C(MPI_INTEGER, "MPI_INTEGER", int32_t),
    C(MPI_REAL, "MPI_REAL", float),
    C(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", double),
    C(MPI_COMPLEX, "MPI_COMPLEX", float _Complex),
    C(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", double _Complex),
    C(MPI_LOGICAL, "MPI_LOGICAL", int32_t),
    C(MPI_2INTEGER, "MPI_2INTEGER", PAIR(int32_t, int32_t)),
    C(MPI_2REAL, "MPI_2REAL", PAIR(float, float)),
    C(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", PAIR(double, double)),
    N(MPI_UB, "MPI_UB"),
    N(MPI_LB, "MPI_LB"),
    C(MPI_CXX_BOOL, "MPI_CXX_BOOL", bool),
    C(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", float _Complex),
    C(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", double _Complex),
    C(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", long double _Complex),
    C(MPI_INTEGER1, "MPI_INTEGER1", int8_t),
    C(MPI_INTEGER2, "MPI_INTEGER2", int16_t),
    C(MPI_INTEGER4, "MPI_INTEGER4", int32_t),
    C(MPI_INTEGER8, "MPI_INTEGER8", int64_t),
    C(MPI_REAL4, "MPI_REAL4", float),
    C(MPI_REAL8, "MPI_REAL8", double),
    C(MPI_COMPLEX8, "MPI_COMPLEX8", float _Complex),
    C(MPI_COMPLEX16, "MPI_COMPLEX16", double _Complex),
};
