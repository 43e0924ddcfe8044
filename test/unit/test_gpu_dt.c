/* src/gpu/gpu_dt.c on a fake driver: which operation packs a derived
 * datatype's layout (2D copy, 3D copy, kernel) and whether it moves the
 * right bytes.
 *
 * The fake driver keeps "device" memory in host memory and carries out
 * what the library asks as the real one would: cuMemcpy2DAsync and
 * cuMemcpy3DAsync row by row with their pitches (refusing what the driver
 * refuses: a pitch below the width, a 3D height below the copy's), and the
 * pack/unpack kernels of gpu_kernels.cu by the same arithmetic on their
 * parameters.  Each layout is packed and unpacked at several element counts
 * and the results compared with a pack done here from the blocks; the
 * operations issued are counted, so that a layout that should take one 3D
 * copy and silently fell back to the kernel (or the reverse) fails.
 * Layouts: a 2D vector of long rows, sub-boxes of a 3D grid whose elements
 * continue the planes or do not (one copy per element, or the kernel past
 * 16 elements), a thick face (two rows per plane), one plane of rows whose
 * elements do not continue them, short rows (kernel), an irregular
 * layout, and a partial unpack (a short message: kernel).  Then the
 * pipelined form (gpu_dt_pack_chunks_start, gpu_dt_chunks_copy_start): the
 * same bytes, chunks of the asked size ending on block boundaries, one
 * launch each, and a stream wait before each chunk's copy. */
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"
#include "gpu/gpu_dt.h"
#include "gpu/gpu_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unit_check.h"

#include "unit_fake_cuda.h"

/* ---- the layouts ---- */

enum route { R_2D, R_3D, R_KERNEL };
static const char *const route_name[] = { "2D copy", "3D copy", "kernel" };

#define MAXB 4096
typedef struct {
    const char *name;
    gpu_dt_block_t b[MAXB];
    size_t n, size;
    ptrdiff_t extent;
} layout_t;

static void add(layout_t *l, ptrdiff_t off, size_t len)
{
    if (l->n < MAXB) {
        l->b[l->n++] = (gpu_dt_block_t){ off, len };
        l->size += len;
    }
}

/* A sub-box [d][h][w] at (z0, y0, x0) of a grid [nz][ny][nx] of doubles,
 * rows merged where they run on (as the datatype layer flattens them). */
static void box(layout_t *l, const char *name, int ny, int nx, int z0, int y0, int x0, int d, int h, int w)
{
    memset(l, 0, sizeof *l);
    l->name = name;
    for (int z = z0; z < z0 + d; z++) {
        if (w == nx) { /* whole rows: a plane of the box is one block */
            add(l, (ptrdiff_t)(((size_t)z * ny + y0) * nx) * 8, (size_t)h * nx * 8);
            continue;
        }
        for (int y = y0; y < y0 + h; y++)
            add(l, (ptrdiff_t)(((size_t)z * ny + y) * nx + x0) * 8, (size_t)w * 8);
    }
}

/* Pack here, from the blocks: the reference. */
static void ref_pack(const layout_t *l, unsigned char *packed, const unsigned char *buf, size_t count)
{
    size_t pos = 0;
    for (size_t e = 0; e < count; e++)
        for (size_t k = 0; k < l->n; k++) {
            memcpy(packed + pos, buf + (ptrdiff_t)e * l->extent + l->b[k].off, l->b[k].len);
            pos += l->b[k].len;
        }
}

static void wait_copy(gpu_copy_t *c)
{
    while (!gpu_copy_done(c))
        ;
}

/* Pack `count` elements, then unpack `bytes` of them (0: all) into a
 * poisoned buffer; checks the bytes and the operations issued. */
static void check_layout(const layout_t *l, size_t count, size_t bytes, enum route route)
{
    gpu_dt_layout_t *g = gpu_dt_layout_new(l->b, l->n, l->extent, l->size);
    CHECK(g != NULL, "%s: no layout", l->name);
    if (!g)
        return;
    ptrdiff_t hi = 0;
    for (size_t k = 0; k < l->n; k++)
        if (l->b[k].off + (ptrdiff_t)l->b[k].len > hi)
            hi = l->b[k].off + (ptrdiff_t)l->b[k].len;
    size_t span = (size_t)hi + (count - 1) * (size_t)l->extent, total = count * l->size;
    size_t limit = bytes ? bytes : total;
    CUdeviceptr dbuf, dpacked, dout;
    CHECK(f_MemAlloc(&dbuf, span) == GPU_CU_SUCCESS && f_MemAlloc(&dpacked, total) == GPU_CU_SUCCESS &&
              f_MemAlloc(&dout, span) == GPU_CU_SUCCESS,
          "%s: fake allocation", l->name);
    unsigned char *buf = (unsigned char *)(uintptr_t)dbuf, *packed = (unsigned char *)(uintptr_t)dpacked;
    unsigned char *out = (unsigned char *)(uintptr_t)dout;
    for (size_t i = 0; i < span; i++)
        buf[i] = (unsigned char)(i * 131 + i / 251);
    unsigned char *want = malloc(total), *want_out = malloc(span);
    ref_pack(l, want, buf, count);
    /* the unpack writes the first `limit` packed bytes back where they came from */
    memset(out, 0xA5, span);
    memset(want_out, 0xA5, span);
    size_t pos = 0;
    for (size_t e = 0; e < count; e++)
        for (size_t k = 0; k < l->n && pos < limit; k++) {
            size_t len = l->b[k].len < limit - pos ? l->b[k].len : limit - pos;
            size_t at = (size_t)((ptrdiff_t)e * l->extent + l->b[k].off);
            memcpy(want_out + at, buf + at, len);
            pos += len;
        }

    long c2 = n2d, c3 = n3d, ck = nkernel;
    gpu_copy_t c;
    memset(packed, 0x5A, total);
    CHECK(gpu_dt_pack_start(packed, buf, count, g, &c) == 0, "%s x%zu: pack failed to start", l->name, count);
    wait_copy(&c);
    CHECK(!memcmp(packed, want, total), "%s x%zu: packed bytes differ", l->name, count);
    CHECK(gpu_dt_unpack_start(out, packed, count, limit, g, &c) == 0, "%s x%zu: unpack failed to start", l->name,
          count);
    wait_copy(&c);
    CHECK(!memcmp(out, want_out, span), "%s x%zu (%zu of %zu bytes): unpacked bytes differ", l->name, count, limit,
          total);
    /* pack and unpack each took `want` (a partial unpack: the kernel) */
    long d2 = n2d - c2, d3 = n3d - c3, dk = nkernel - ck;
    enum route unpack_route = limit < total ? R_KERNEL : route;
    long per = route == R_3D && count > 1 && !strstr(l->name, "continuing") ? (long)count : 1;
    long want2 = (route == R_2D) + (unpack_route == R_2D), wantk = (route == R_KERNEL) + (unpack_route == R_KERNEL);
    long want3 = per * ((route == R_3D) + (unpack_route == R_3D));
    CHECK(d2 == want2 && d3 == want3 && dk == wantk,
          "%s x%zu: %ld 2D copies, %ld 3D copies, %ld kernels; want %ld, %ld, %ld (%s)", l->name, count, d2, d3, dk,
          want2, want3, wantk, route_name[route]);
    free(want);
    free(want_out);
    f_MemFree(dbuf);
    f_MemFree(dpacked);
    f_MemFree(dout);
    gpu_dt_layout_free(g);
}

/* The pipelined form: pack `count` elements in chunks of `chunk` bytes,
 * then copy the first `bytes` packed bytes (0: all) to another buffer
 * chunk by chunk; checks the bytes, that every chunk is one launch of at
 * most `chunk` bytes (or one block), and that the copy waits for each
 * chunk it sends. */
static void check_chunks(const layout_t *l, size_t count, size_t chunk, size_t bytes)
{
    gpu_dt_layout_t *g = gpu_dt_layout_new(l->b, l->n, l->extent, l->size);
    CHECK(g != NULL, "%s: no layout", l->name);
    if (!g)
        return;
    ptrdiff_t hi = 0;
    size_t widest = 0;
    for (size_t k = 0; k < l->n; k++) {
        if (l->b[k].off + (ptrdiff_t)l->b[k].len > hi)
            hi = l->b[k].off + (ptrdiff_t)l->b[k].len;
        if (l->b[k].len > widest)
            widest = l->b[k].len;
    }
    size_t span = (size_t)hi + (count - 1) * (size_t)l->extent, total = count * l->size;
    size_t limit = bytes ? bytes : total;
    CUdeviceptr dbuf, dpacked, ddst;
    CHECK(f_MemAlloc(&dbuf, span) == GPU_CU_SUCCESS && f_MemAlloc(&dpacked, total) == GPU_CU_SUCCESS &&
              f_MemAlloc(&ddst, total) == GPU_CU_SUCCESS,
          "%s: fake allocation", l->name);
    unsigned char *buf = (unsigned char *)(uintptr_t)dbuf, *packed = (unsigned char *)(uintptr_t)dpacked;
    unsigned char *dst = (unsigned char *)(uintptr_t)ddst, *want = malloc(total);
    for (size_t i = 0; i < span; i++)
        buf[i] = (unsigned char)(i * 37 + i / 509);
    ref_pack(l, want, buf, count);
    memset(packed, 0x5A, total);
    memset(dst, 0xA5, total);
    long k0 = nkernel, w0 = nwait;
    gpu_dt_chunks_t *ch = NULL;
    CHECK(gpu_dt_pack_chunks_start(packed, buf, count, g, chunk, &ch) == 0 && ch,
          "%s x%zu by %zu: the chunked pack failed to start", l->name, count, chunk);
    if (!ch) {
        free(want);
        gpu_dt_layout_free(g);
        return;
    }
    /* blocks longer than a chunk are a chunk each */
    size_t n = gpu_dt_chunks_count(ch), least = widest <= chunk ? (total + chunk - 1) / chunk : count * l->n;
    CHECK(n >= least && n <= total, "%s x%zu by %zu: %zu chunks, want at least %zu", l->name, count, chunk, n, least);
    CHECK(nkernel - k0 == (long)n, "%s x%zu by %zu: %ld launches for %zu chunks", l->name, count, chunk,
          nkernel - k0, n);
    if (widest <= chunk)
        CHECK(n <= 2 * least + count, "%s x%zu by %zu: %zu chunks, too many for chunks of %zu bytes", l->name,
              count, chunk, n, chunk);
    gpu_copy_t c;
    CHECK(gpu_dt_chunks_copy_start(dst, packed, limit, ch, &c) == 0, "%s: the chunked copy failed to start",
          l->name);
    wait_copy(&c);
    CHECK(!memcmp(packed, want, total), "%s x%zu by %zu: packed bytes differ", l->name, count, chunk);
    CHECK(!memcmp(dst, want, limit), "%s x%zu by %zu: copied bytes differ", l->name, count, chunk);
    size_t poisoned = 0;
    for (size_t i = limit; i < total; i++)
        poisoned += dst[i] == 0xA5;
    CHECK(poisoned == total - limit, "%s x%zu by %zu: the copy of %zu bytes wrote past them", l->name, count,
          chunk, limit);
    /* one wait per chunk that the copy sends (the fake's events are all
     * still held: no one asked whether they were done) */
    CHECK(nwait - w0 >= 1 && nwait - w0 <= (long)n, "%s x%zu by %zu: %ld stream waits for %zu chunks", l->name,
          count, chunk, nwait - w0, n);
    CHECK(gpu_dt_chunks_done(ch), "%s: chunks not done", l->name);
    gpu_dt_chunks_free(ch);
    free(want);
    f_MemFree(dbuf);
    f_MemFree(dpacked);
    f_MemFree(ddst);
    gpu_dt_layout_free(g);
}

int main(void)
{
    unsetenv("AMPI_GPU");
    unsetenv("AMPI_GPU_DEVICE");
    gpu_driver_use_for_testing(&fake);
    if (gpu_init(0, 1) != 0 || !gpu_enabled()) {
        printf("FAIL gpu_init on the fake driver\n");
        return 1;
    }
    if (!gpu_dt_available()) {
        printf("SKIP the library was built without nvcc: no device datatype kernels\n");
        return 77;
    }
    static layout_t l;
    const int nz = 12, ny = 16, nx = 64; /* rows of 64 doubles: 512 B */
    ptrdiff_t grid = (ptrdiff_t)nz * ny * nx * 8;

    /* a vector of 40 rows of 64 doubles, 128 apart, continuing from element to element */
    memset(&l, 0, sizeof l);
    l.name = "vector of 512 B rows";
    for (int r = 0; r < 40; r++)
        add(&l, (ptrdiff_t)r * 1024, 512);
    l.extent = 40 * 1024;
    check_layout(&l, 1, 0, R_2D);
    check_layout(&l, 3, 0, R_2D);

    /* a sub-box [6][5][40] at (2, 3, 7): element = the whole grid (a subarray type) */
    box(&l, "sub-box", ny, nx, 2, 3, 7, 6, 5, 40);
    l.extent = grid;
    check_layout(&l, 1, 0, R_3D);
    check_layout(&l, 2, 0, R_3D);  /* one copy per element */
    check_layout(&l, 17, 0, R_KERNEL); /* past 16 elements: the kernel */
    check_layout(&l, 1, 1000, R_3D); /* a short message: packed by one copy, unpacked by the kernel */

    /* the same box resized so that elements continue its planes: one copy for all */
    box(&l, "sub-box continuing", ny, nx, 2, 3, 7, 6, 5, 40);
    l.extent = (ptrdiff_t)6 * ny * nx * 8;
    check_layout(&l, 1, 0, R_3D);
    check_layout(&l, 4, 0, R_3D);

    /* a thick y face [nz][2][62] at (0, 7, 1): two rows a plane */
    box(&l, "thick y face", ny, nx, 0, 7, 1, nz, 2, nx - 2);
    l.extent = grid;
    check_layout(&l, 1, 0, R_3D);

    /* whole rows: a y face of full rows is 2D, and so is a thick one (rows merge) */
    box(&l, "y face, whole rows", ny, nx, 0, 4, 0, nz, 1, nx);
    l.extent = grid;
    check_layout(&l, 1, 0, R_2D);
    box(&l, "thick y face, whole rows", ny, nx, 0, 4, 0, nz, 3, nx);
    l.extent = grid;
    check_layout(&l, 1, 0, R_2D);
    check_layout(&l, 2, 0, R_2D); /* the next element's rows continue at the same stride */
    /* part of the planes: elements do not continue the rows, so a one-plane box per element */
    box(&l, "y face of planes 2-9, whole rows", ny, nx, 2, 4, 0, 8, 1, nx);
    l.extent = grid;
    check_layout(&l, 1, 0, R_3D);
    check_layout(&l, 3, 0, R_3D);

    /* rows of 20 doubles (160 B): the kernel */
    box(&l, "sub-box of short rows", ny, nx, 1, 1, 1, 4, 4, 20);
    l.extent = grid;
    check_layout(&l, 1, 0, R_KERNEL);

    /* an x face: single doubles */
    box(&l, "x face", ny, nx, 0, 0, 5, nz, ny, 1);
    l.extent = grid;
    check_layout(&l, 1, 0, R_KERNEL);

    /* irregular: one row longer than the others */
    box(&l, "irregular box", ny, nx, 0, 0, 0, 3, 3, 40);
    l.b[4].len += 8;
    l.size += 8;
    l.extent = grid;
    check_layout(&l, 1, 0, R_KERNEL);

    /* planes that overlap (plane pitch below rows x row pitch): no box */
    memset(&l, 0, sizeof l);
    l.name = "overlapping planes";
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 4; y++)
            add(&l, (ptrdiff_t)z * 2 * 1024 + (ptrdiff_t)y * 1024, 512);
    l.extent = 16 * 1024;
    check_layout(&l, 1, 0, R_KERNEL);

    /* packing in chunks while the chunks are copied out */
    memset(&l, 0, sizeof l);
    l.name = "vector of 512 B rows (chunks)";
    for (int r = 0; r < 40; r++)
        add(&l, (ptrdiff_t)r * 1024, 512);
    l.extent = 40 * 1024;
    check_chunks(&l, 3, 4096, 0);       /* inside elements: 8 rows a chunk */
    check_chunks(&l, 3, 5000, 0);       /* chunks end on row boundaries */
    check_chunks(&l, 7, 65536, 0);      /* three elements a chunk */
    check_chunks(&l, 3, 4096, 30000);   /* a truncated receive: a prefix */
    box(&l, "sub-box (chunks)", ny, nx, 2, 3, 7, 6, 5, 40);
    l.extent = grid;
    check_chunks(&l, 2, 2048, 0);
    box(&l, "x face (chunks)", ny, nx, 0, 0, 5, nz, ny, 1);
    l.extent = grid;
    check_chunks(&l, 1, 256, 0);
    box(&l, "irregular box (chunks)", ny, nx, 0, 0, 0, 3, 3, 40);
    l.b[4].len += 8;
    l.size += 8;
    l.extent = grid;
    check_chunks(&l, 2, 100, 0);        /* every block longer than a chunk: one each */

    CHECK(nbad == 0, "%ld copies with arguments the driver refuses", nbad);
    gpu_finalize();
    gpu_driver_use_for_testing(NULL);
    return unit_check_summary("test_gpu_dt");
}
