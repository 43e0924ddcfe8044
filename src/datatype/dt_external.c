/* MPI_Pack_external, MPI_Pack_external_size, MPI_Unpack_external: the
 * "external32" representation (MPI 3.1 13.5.2).  Every basic element is
 * stored big-endian at a fixed size (MPI_LONG in 4 bytes, MPI_WCHAR in 2,
 * MPI_LONG_DOUBLE as an IEEE quad of 16, ...), with no padding; booleans
 * become 0 or 1.  The data is packed natively first (dt_pack: type-map
 * order, no gaps) and then converted element by element along the type's
 * runs of basic types; unpacking runs the other way. */
#include "core/core_rank.h"
#include "datatype/dt_internal.h"
#include "rank/rank_host.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef enum { X_UINT, X_SINT, X_FLOAT, X_LDOUBLE, X_BOOL } xkind_t;

/* One part of a basic element: its native and external sizes. */
typedef struct {
    xkind_t kind;
    unsigned char nat, ext;
} xpart_t;

#define PART(k, n, e) ((xpart_t){ k, (unsigned char)(n), (unsigned char)(e) })

/* The parts of predefined type t (a complex number or a pair has two);
 * 0 for types external32 does not define. */
static int parts_of(MPI_Datatype t, xpart_t p[2])
{
    const xpart_t i4 = PART(X_SINT, sizeof(int), 4), f4 = PART(X_FLOAT, 4, 4), f8 = PART(X_FLOAT, 8, 8),
                  ld = PART(X_LDOUBLE, sizeof(long double), 16);
    p[1] = i4; /* the index of the pairs */
    switch (t) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_INT8_T: case MPI_INTEGER1:
        p[0] = PART(X_SINT, 1, 1); return 1;
    case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_PACKED: case MPI_UINT8_T: case MPI_CHARACTER:
        p[0] = PART(X_UINT, 1, 1); return 1;
    case MPI_C_BOOL: case MPI_CXX_BOOL:
        p[0] = PART(X_BOOL, sizeof(bool), 1); return 1;
    case MPI_WCHAR:
        p[0] = PART(X_UINT, sizeof(wchar_t), 2); return 1;
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2:
        p[0] = PART(X_SINT, 2, 2); return 1;
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T:
        p[0] = PART(X_UINT, 2, 2); return 1;
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4: case MPI_LOGICAL:
        p[0] = i4; return 1;
    case MPI_UNSIGNED: case MPI_UINT32_T:
        p[0] = PART(X_UINT, 4, 4); return 1;
    case MPI_LONG:
        p[0] = PART(X_SINT, sizeof(long), 4); return 1;
    case MPI_UNSIGNED_LONG:
        p[0] = PART(X_UINT, sizeof(long), 4); return 1;
    case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_INTEGER8: case MPI_AINT: case MPI_OFFSET: case MPI_COUNT:
        p[0] = PART(X_SINT, 8, 8); return 1;
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T:
        p[0] = PART(X_UINT, 8, 8); return 1;
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4:
        p[0] = f4; return 1;
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8:
        p[0] = f8; return 1;
    case MPI_LONG_DOUBLE:
        p[0] = ld; return 1;
    case MPI_C_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8: case MPI_CXX_FLOAT_COMPLEX: case MPI_2REAL:
        p[0] = p[1] = f4; return 2;
    case MPI_C_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX: case MPI_COMPLEX16: case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_2DOUBLE_PRECISION:
        p[0] = p[1] = f8; return 2;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
        p[0] = p[1] = ld; return 2;
    case MPI_FLOAT_INT: p[0] = f4; return 2;
    case MPI_DOUBLE_INT: p[0] = f8; return 2;
    case MPI_LONG_INT: p[0] = PART(X_SINT, sizeof(long), 4); return 2;
    case MPI_2INT: case MPI_2INTEGER: p[0] = i4; return 2;
    case MPI_SHORT_INT: p[0] = PART(X_SINT, 2, 2); return 2;
    case MPI_LONG_DOUBLE_INT: p[0] = ld; return 2;
    default: return 0;
    }
}

/* Bytes of one element of t in external32, or 0 when some basic type has
 * no external32 form (sets *ok false). */
static size_t ext_size(MPI_Datatype t, bool *ok)
{
    const dt_type_t *d = dt_view(t);
    size_t total = 0;
    *ok = true;
    for (size_t i = 0; i < d->nruns; i++) {
        xpart_t p[2];
        int np = parts_of(d->runs[i].basic, p);
        if (np == 0)
            *ok = false;
        for (int k = 0; k < np; k++)
            total += d->runs[i].n * p[k].ext;
    }
    return total;
}

static uint64_t load_native(const unsigned char *s, int n)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64 = 0;
    switch (n) {
    case 1: memcpy(&u8, s, 1); return u8;
    case 2: memcpy(&u16, s, 2); return u16;
    case 4: memcpy(&u32, s, 4); return u32;
    default: memcpy(&u64, s, 8); return u64;
    }
}

static void store_native(unsigned char *d, int n, uint64_t v)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (n) {
    case 1: memcpy(d, &u8, 1); break;
    case 2: memcpy(d, &u16, 2); break;
    case 4: memcpy(d, &u32, 4); break;
    default: memcpy(d, &v, 8); break;
    }
}

/* The 16 bytes of an IEEE quad, most significant first, and back. */
static bool quad_out(const unsigned char *s, unsigned char *d)
{
#if defined(__SIZEOF_FLOAT128__) || LDBL_MANT_DIG == 113
    long double v;
    memcpy(&v, s, sizeof v);
#if LDBL_MANT_DIG == 113
    long double q = v;
#else
    __float128 q = (__float128)v;
#endif
    unsigned char b[16];
    memcpy(b, &q, 16);
    for (int i = 0; i < 16; i++)
        d[i] = b[15 - i]; /* little-endian hosts */
    return true;
#else
    (void)s, (void)d;
    return false;
#endif
}

static bool quad_in(const unsigned char *s, unsigned char *d)
{
#if defined(__SIZEOF_FLOAT128__) || LDBL_MANT_DIG == 113
    unsigned char b[16];
    for (int i = 0; i < 16; i++)
        b[i] = s[15 - i];
#if LDBL_MANT_DIG == 113
    long double q;
#else
    __float128 q;
#endif
    memcpy(&q, b, 16);
    long double v = (long double)q;
    memset(d, 0, sizeof v);
    memcpy(d, &v, sizeof v);
    return true;
#else
    (void)s, (void)d;
    return false;
#endif
}

static bool part_out(const xpart_t *p, const unsigned char *s, unsigned char *d)
{
    if (p->kind == X_LDOUBLE)
        return quad_out(s, d);
    uint64_t v;
    if (p->kind == X_BOOL) {
        v = 0;
        for (int i = 0; i < p->nat; i++)
            v |= s[i] != 0;
    } else {
        v = load_native(s, p->nat);
    }
    for (int i = 0; i < p->ext; i++)
        d[i] = (unsigned char)(v >> (8 * (p->ext - 1 - i)));
    return true;
}

static bool part_in(const xpart_t *p, const unsigned char *s, unsigned char *d)
{
    if (p->kind == X_LDOUBLE)
        return quad_in(s, d);
    uint64_t v = 0;
    for (int i = 0; i < p->ext; i++)
        v = v << 8 | s[i];
    if (p->kind == X_SINT && p->ext < 8 && (v >> (8 * p->ext - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * p->ext); /* sign extension to the native size */
    store_native(d, p->nat, v);
    return true;
}

/* Converts count elements of t between the native packed form and
 * external32 (to_ext: native -> external). */
static bool convert(MPI_Datatype t, int count, const unsigned char *in, unsigned char *out, bool to_ext)
{
    const dt_type_t *d = dt_view(t);
    for (int e = 0; e < count; e++)
        for (size_t i = 0; i < d->nruns; i++) {
            xpart_t p[2];
            int np = parts_of(d->runs[i].basic, p);
            for (size_t j = 0; j < d->runs[i].n; j++)
                for (int k = 0; k < np; k++) {
                    if (!(to_ext ? part_out(&p[k], in, out) : part_in(&p[k], in, out)))
                        return false;
                    in += to_ext ? p[k].nat : p[k].ext;
                    out += to_ext ? p[k].ext : p[k].nat;
                }
        }
    return true;
}

/* Checks shared by the three calls; sets *xbytes to count elements' size. */
static int check(const char *datarep, int count, MPI_Datatype t, size_t *xbytes)
{
    if (!datarep || strcmp(datarep, "external32") != 0)
        return MPI_ERR_ARG;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!dt_valid(t))
        return MPI_ERR_TYPE;
    bool ok;
    *xbytes = (size_t)count * ext_size(t, &ok);
    return ok ? MPI_SUCCESS : MPI_ERR_TYPE;
}

#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    size_t x;
    int err = check(datarep, incount, datatype, &x);
    if (!err && !size)
        err = MPI_ERR_ARG;
    if (err)
        return core_error(NULL, err, "MPI_Pack_external_size");
    *size = (MPI_Aint)x;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external = PMPI_Pack_external
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Pack_external";
    size_t x;
    int err = check(datarep, incount, datatype, &x);
    if (!err && (!position || *position < 0 || outsize < 0))
        err = MPI_ERR_ARG;
    if (err)
        return core_error(NULL, err, fn);
    if (*position > outsize || x > (size_t)(outsize - *position))
        return core_error_msg(NULL, MPI_ERR_TRUNCATE, fn, "output buffer too small");
    size_t nat = dt_packed_size(datatype, incount);
    unsigned char *tmp = malloc(nat ? nat : 1);
    if (!tmp)
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    dt_pack(inbuf, incount, datatype, tmp);
    bool ok = convert(datatype, incount, tmp, (unsigned char *)outbuf + *position, true);
    free(tmp);
    if (!ok)
        return core_error_msg(NULL, MPI_ERR_CONVERSION, fn, "long double has no quad form on this machine");
    *position += (MPI_Aint)x;
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpack_external = PMPI_Unpack_external
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Unpack_external";
    size_t x;
    int err = check(datarep, outcount, datatype, &x);
    if (!err && (!position || *position < 0 || insize < 0))
        err = MPI_ERR_ARG;
    if (err)
        return core_error(NULL, err, fn);
    if (*position > insize || x > (size_t)(insize - *position))
        return core_error_msg(NULL, MPI_ERR_TRUNCATE, fn, "input buffer too short");
    size_t nat = dt_packed_size(datatype, outcount);
    unsigned char *tmp = malloc(nat ? nat : 1);
    if (!tmp)
        return core_error(NULL, MPI_ERR_NO_MEM, fn);
    bool ok = convert(datatype, outcount, (const unsigned char *)inbuf + *position, tmp, false);
    if (ok)
        dt_unpack(tmp, nat, outbuf, outcount, datatype);
    free(tmp);
    if (!ok)
        return core_error_msg(NULL, MPI_ERR_CONVERSION, fn, "long double has no quad form on this machine");
    *position += (MPI_Aint)x;
    return MPI_SUCCESS;
}
