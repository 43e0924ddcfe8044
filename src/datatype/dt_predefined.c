#define AMPI_BUILDING_LIBRARY 1
#include "datatype/dt.h"

#include <complex.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#define PAIR(a, b) sizeof(struct { a x; b y; })
#define T(h, n, sz) [h] = { n, sz, sz }

const dt_info_t dt_predefined[AMPI_DATATYPE_PREDEFINED_LAST + 1] = {
    T(MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL", 0),
    T(MPI_CHAR, "MPI_CHAR", sizeof(char)),
    T(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", sizeof(signed char)),
    T(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", sizeof(unsigned char)),
    T(MPI_BYTE, "MPI_BYTE", 1),
    T(MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t)),
    T(MPI_SHORT, "MPI_SHORT", sizeof(short)),
    T(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short)),
    T(MPI_INT, "MPI_INT", sizeof(int)),
    T(MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned)),
    T(MPI_LONG, "MPI_LONG", sizeof(long)),
    T(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long)),
    T(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long)),
    T(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long)),
    T(MPI_FLOAT, "MPI_FLOAT", sizeof(float)),
    T(MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)),
    T(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double)),
    T(MPI_PACKED, "MPI_PACKED", 1),
    T(MPI_INT8_T, "MPI_INT8_T", 1),
    T(MPI_INT16_T, "MPI_INT16_T", 2),
    T(MPI_INT32_T, "MPI_INT32_T", 4),
    T(MPI_INT64_T, "MPI_INT64_T", 8),
    T(MPI_UINT8_T, "MPI_UINT8_T", 1),
    T(MPI_UINT16_T, "MPI_UINT16_T", 2),
    T(MPI_UINT32_T, "MPI_UINT32_T", 4),
    T(MPI_UINT64_T, "MPI_UINT64_T", 8),
    T(MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool)),
    T(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(float _Complex)),
    T(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex)),
    T(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex)),
    T(MPI_AINT, "MPI_AINT", sizeof(MPI_Aint)),
    T(MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset)),
    T(MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count)),
    T(MPI_FLOAT_INT, "MPI_FLOAT_INT", PAIR(float, int)),
    T(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", PAIR(double, int)),
    T(MPI_LONG_INT, "MPI_LONG_INT", PAIR(long, int)),
    T(MPI_2INT, "MPI_2INT", PAIR(int, int)),
    T(MPI_SHORT_INT, "MPI_SHORT_INT", PAIR(short, int)),
    T(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", PAIR(long double, int)),
    T(MPI_CHARACTER, "MPI_CHARACTER", 1),
    T(MPI_INTEGER, "MPI_INTEGER", 4),
    T(MPI_REAL, "MPI_REAL", 4),
    T(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8),
    T(MPI_COMPLEX, "MPI_COMPLEX", 8),
    T(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16),
    T(MPI_LOGICAL, "MPI_LOGICAL", 4),
    T(MPI_2INTEGER, "MPI_2INTEGER", 8),
    T(MPI_2REAL, "MPI_2REAL", 8),
    T(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16),
    T(MPI_UB, "MPI_UB", 0),
    T(MPI_LB, "MPI_LB", 0),
};
