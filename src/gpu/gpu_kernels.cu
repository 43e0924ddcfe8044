/* Device kernels of the predefined reduction operations: the GPU twins of
 * src/coll/coll_op_kernels.c, computing inout[i] = op(in[i], inout[i]).
 *
 * Built by nvcc into a fatbin (gpu.am) that is embedded in libampi as a byte
 * array and loaded with cuModuleLoadData, so the library links neither cudart
 * nor libcuda.  Kernels are looked up by name, "ampi_<op>_<kind>", with the
 * names of gpu_reduce.c's tables; extern "C" keeps them unmangled.  A pair
 * missing here is reported as unsupported on device memory, never run wrong.
 *
 * One grid-stride loop per kernel: any count with a bounded grid, and
 * consecutive threads touch consecutive elements (coalesced). */
#include <stddef.h>
#include <stdint.h>

#define LOOP(name, T, EXPR)                                                         \
    extern "C" __global__ void ampi_##name(const T *in, T *io, size_t n)            \
    {                                                                               \
        size_t stride = (size_t)gridDim.x * blockDim.x;                             \
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;       \
             i += stride) {                                                         \
            T A = in[i], B = io[i];                                                 \
            io[i] = (EXPR);                                                         \
        }                                                                           \
    }

#define MINMAX(S, T) LOOP(max_##S, T, A > B ? A : B) LOOP(min_##S, T, A < B ? A : B)
/* Integer sums and products wrap (two's complement), computed in 64-bit
 * unsigned arithmetic: a product of two promoted 16-bit values could
 * overflow int, which would be undefined. */
#define IARITH(S, T)                                                  \
    LOOP(sum_##S, T, (T)((unsigned long long)A + (unsigned long long)B)) \
    LOOP(prod_##S, T, (T)((unsigned long long)A * (unsigned long long)B))
#define ARITH(S, T) LOOP(sum_##S, T, A + B) LOOP(prod_##S, T, A * B)
#define LOGIC(S, T)                          \
    LOOP(land_##S, T, (T)((A) && (B)))       \
    LOOP(lor_##S, T, (T)((A) || (B)))        \
    LOOP(lxor_##S, T, (T)(!(A) != !(B)))
#define BITS(S, T) LOOP(band_##S, T, (T)(A & B)) LOOP(bor_##S, T, (T)(A | B)) LOOP(bxor_##S, T, (T)(A ^ B))

MINMAX(i8, int8_t) MINMAX(u8, uint8_t) MINMAX(i16, int16_t) MINMAX(u16, uint16_t)
MINMAX(i32, int32_t) MINMAX(u32, uint32_t) MINMAX(i64, int64_t) MINMAX(u64, uint64_t)
MINMAX(f32, float) MINMAX(f64, double)
IARITH(u8, uint8_t) IARITH(u16, uint16_t) IARITH(u32, uint32_t) IARITH(u64, uint64_t)
ARITH(f32, float) ARITH(f64, double)
LOGIC(u8, uint8_t) LOGIC(u16, uint16_t) LOGIC(u32, uint32_t) LOGIC(u64, uint64_t) LOGIC(bool, bool)
BITS(u8, uint8_t) BITS(u16, uint16_t) BITS(u32, uint32_t) BITS(u64, uint64_t)

/* C's float/double _Complex: two parts, aligned like one part. */
template <typename R> struct cplx {
    R re, im;
};
template <typename R> __device__ static cplx<R> operator+(cplx<R> a, cplx<R> b)
{
    return cplx<R>{a.re + b.re, a.im + b.im};
}
template <typename R> __device__ static cplx<R> operator*(cplx<R> a, cplx<R> b)
{
    return cplx<R>{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
typedef cplx<float> cf32_t;
typedef cplx<double> cf64_t;
ARITH(cf32, cf32_t) ARITH(cf64, cf64_t)

/* MAXLOC/MINLOC on {value, index} pairs: the better value wins; on a tie the
 * lower index, so the result does not depend on the combining order (as on
 * the CPU). */
#define LOC(S, VT, IT)                                                              \
    struct pair_##S {                                                               \
        VT v;                                                                       \
        IT i;                                                                       \
    };                                                                              \
    LOC_LOOP(maxloc_##S, pair_##S, >)                                               \
    LOC_LOOP(minloc_##S, pair_##S, <)
#define LOC_LOOP(name, P, CMP)                                                      \
    extern "C" __global__ void ampi_##name(const P *in, P *io, size_t n)            \
    {                                                                               \
        size_t stride = (size_t)gridDim.x * blockDim.x;                             \
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;       \
             i += stride) {                                                         \
            P a = in[i], b = io[i];                                                 \
            if (a.v CMP b.v)                                                        \
                io[i] = a;                                                          \
            else if (a.v == b.v && a.i < b.i)                                       \
                io[i].i = a.i;                                                      \
        }                                                                           \
    }

LOC(float_int, float, int) LOC(double_int, double, int) LOC(long_int, long, int) LOC(2int, int, int)
LOC(short_int, short, int) LOC(2float, float, float) LOC(2double, double, double)

/* ---- Derived datatypes on device memory (gpu_dt.c) ----
 * A layout is the type's flattened blocks, each with its place in the
 * packed element (pos).  Segment s of a message is block s % nsegs of
 * element s / nsegs.  Only packed bytes below `limit` move (a short
 * receive fills a prefix of the type map).  U is the widest unit that
 * every offset, length and both base addresses allow; a clipped tail moves
 * byte by byte.  "w" kernels give each segment a block of threads (long
 * blocks), "n" kernels one thread (many short blocks: a face of a grid
 * sent as one element per block). */
struct ampi_dt_seg {
    long long off;
    unsigned long long len, pos;
};

template <typename U, bool PACK>
__device__ static void dt_seg(char *packed, char *buf, const ampi_dt_seg *segs, unsigned long long nsegs,
                              long long extent, unsigned long long esize, unsigned long long limit,
                              unsigned long long s, unsigned first, unsigned step)
{
    unsigned long long e = s / nsegs, k = s - e * nsegs;
    unsigned long long p0 = e * esize + segs[k].pos, len = segs[k].len;
    if (p0 >= limit)
        return;
    if (p0 + len > limit)
        len = limit - p0;
    char *u = buf + (long long)e * extent + segs[k].off, *p = packed + p0;
    unsigned long long units = len / sizeof(U);
    for (unsigned long long i = first; i < units; i += step) {
        if (PACK)
            ((U *)p)[i] = ((const U *)u)[i];
        else
            ((U *)u)[i] = ((const U *)p)[i];
    }
    for (unsigned long long i = units * sizeof(U) + first; i < len; i += step) {
        if (PACK)
            p[i] = u[i];
        else
            u[i] = p[i];
    }
}

#define DT_KERNELS(W, U)                                                                                   \
    extern "C" __global__ void ampi_dt_pack_w##W(char *packed, char *buf, const ampi_dt_seg *segs,          \
                                                 unsigned long long nsegs, long long extent,                 \
                                                 unsigned long long esize, unsigned long long total,         \
                                                 unsigned long long limit)                                   \
    {                                                                                                        \
        for (unsigned long long s = blockIdx.x; s < total; s += gridDim.x)                                  \
            dt_seg<U, true>(packed, buf, segs, nsegs, extent, esize, limit, s, threadIdx.x, blockDim.x);     \
    }                                                                                                        \
    extern "C" __global__ void ampi_dt_unpack_w##W(char *packed, char *buf, const ampi_dt_seg *segs,        \
                                                   unsigned long long nsegs, long long extent,               \
                                                   unsigned long long esize, unsigned long long total,       \
                                                   unsigned long long limit)                                 \
    {                                                                                                        \
        for (unsigned long long s = blockIdx.x; s < total; s += gridDim.x)                                  \
            dt_seg<U, false>(packed, buf, segs, nsegs, extent, esize, limit, s, threadIdx.x, blockDim.x);    \
    }                                                                                                        \
    extern "C" __global__ void ampi_dt_pack_n##W(char *packed, char *buf, const ampi_dt_seg *segs,          \
                                                 unsigned long long nsegs, long long extent,                 \
                                                 unsigned long long esize, unsigned long long total,         \
                                                 unsigned long long limit)                                   \
    {                                                                                                        \
        for (unsigned long long s = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; s < total;    \
             s += (unsigned long long)gridDim.x * blockDim.x)                                                \
            dt_seg<U, true>(packed, buf, segs, nsegs, extent, esize, limit, s, 0, 1);                        \
    }                                                                                                        \
    extern "C" __global__ void ampi_dt_unpack_n##W(char *packed, char *buf, const ampi_dt_seg *segs,        \
                                                   unsigned long long nsegs, long long extent,               \
                                                   unsigned long long esize, unsigned long long total,       \
                                                   unsigned long long limit)                                 \
    {                                                                                                        \
        for (unsigned long long s = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; s < total;    \
             s += (unsigned long long)gridDim.x * blockDim.x)                                                \
            dt_seg<U, false>(packed, buf, segs, nsegs, extent, esize, limit, s, 0, 1);                       \
    }

DT_KERNELS(1, uint8_t) DT_KERNELS(2, uint16_t) DT_KERNELS(4, uint32_t) DT_KERNELS(8, uint64_t)
DT_KERNELS(16, uint4)
