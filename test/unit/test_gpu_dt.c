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
 * layout, and a partial unpack (a short message: kernel). */
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

/* ---- the fake driver ---- */

typedef struct {
    uintptr_t start;
    size_t size;
} dev_alloc_t;
static dev_alloc_t allocs[64];
static int nallocs;
static long n2d, n3d, nkernel, nbad;
static char ctx_storage;
static _Thread_local CUcontext current;

static CUresult f_Init(unsigned f) { (void)f; return GPU_CU_SUCCESS; }
static CUresult f_DeviceGetCount(int *c) { *c = 1; return GPU_CU_SUCCESS; }
static CUresult f_DeviceGet(CUdevice *d, int o) { *d = o; return GPU_CU_SUCCESS; }
static CUresult f_DeviceGetPCIBusId(char *b, int l, CUdevice d)
{
    snprintf(b, (size_t)l, "0000:%02x:00.0", 0x10 + (int)d);
    return GPU_CU_SUCCESS;
}
static CUresult f_PrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)(void *)&ctx_storage; return GPU_CU_SUCCESS; }
static CUresult f_PrimaryCtxRelease(CUdevice d) { (void)d; return GPU_CU_SUCCESS; }
static CUresult f_CtxSetCurrent(CUcontext c) { current = c; return GPU_CU_SUCCESS; }
static CUresult f_CtxGetCurrent(CUcontext *c) { *c = current; return GPU_CU_SUCCESS; }
static CUresult f_CtxGetDevice(CUdevice *d) { *d = 0; return GPU_CU_SUCCESS; }

static dev_alloc_t *find(uintptr_t p)
{
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].size && p >= allocs[i].start && p - allocs[i].start < allocs[i].size)
            return &allocs[i];
    return NULL;
}

static CUresult f_PointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr)
{
    dev_alloc_t *a = find((uintptr_t)ptr);
    for (unsigned i = 0; i < n; i++) {
        switch ((int)attrs[i]) {
        case GPU_CU_PTR_ATTR_MEMORY_TYPE: *(unsigned *)data[i] = a ? GPU_CU_MEMORYTYPE_DEVICE : 0; break;
        case GPU_CU_PTR_ATTR_IS_MANAGED: *(unsigned *)data[i] = 0; break;
        case GPU_CU_PTR_ATTR_DEVICE_ORDINAL: *(int *)data[i] = a ? 0 : -2; break;
        case GPU_CU_PTR_ATTR_RANGE_START: *(CUdeviceptr *)data[i] = a ? a->start : 0; break;
        case GPU_CU_PTR_ATTR_RANGE_SIZE: *(size_t *)data[i] = a ? a->size : 0; break;
        default: return GPU_CU_ERROR_INVALID_VALUE;
        }
    }
    return GPU_CU_SUCCESS;
}
static CUresult f_MemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    dev_alloc_t *a = find((uintptr_t)p);
    if (!a)
        return GPU_CU_ERROR_INVALID_VALUE;
    *base = a->start;
    *size = a->size;
    return GPU_CU_SUCCESS;
}
static int stream_storage;
static CUresult f_StreamCreate(CUstream *s, unsigned f) { (void)f; *s = (CUstream)(void *)&stream_storage; return GPU_CU_SUCCESS; }
static CUresult f_StreamDestroy(CUstream s) { (void)s; return GPU_CU_SUCCESS; }
static CUresult f_StreamSynchronize(CUstream s) { (void)s; return GPU_CU_SUCCESS; }
static CUresult f_MemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return GPU_CU_SUCCESS;
}
static CUresult f_EventCreate(CUevent *e, unsigned f) { (void)f; *e = (CUevent)malloc(1); return GPU_CU_SUCCESS; }
static CUresult f_EventRecord(CUevent e, CUstream s) { (void)e, (void)s; return GPU_CU_SUCCESS; }
static CUresult f_EventQuery(CUevent e) { (void)e; return GPU_CU_SUCCESS; }
static CUresult f_EventDestroy(CUevent e) { free((void *)e); return GPU_CU_SUCCESS; }
static CUresult f_GetErrorName(CUresult r, const char **name) { (void)r; *name = "FAKE_ERROR"; return GPU_CU_SUCCESS; }

/* Device memory: its own mapping each, so that no host range covers it. */
static CUresult f_MemAlloc(CUdeviceptr *p, size_t n)
{
    void *r = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED || nallocs == 64)
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    allocs[nallocs++] = (dev_alloc_t){ (uintptr_t)r, n ? n : 1 };
    *p = (uintptr_t)r;
    return GPU_CU_SUCCESS;
}
static CUresult f_MemFree(CUdeviceptr p)
{
    dev_alloc_t *a = find((uintptr_t)p);
    if (!a || a->start != p)
        return GPU_CU_ERROR_INVALID_VALUE;
    munmap((void *)a->start, a->size);
    a->size = 0;
    return GPU_CU_SUCCESS;
}
static CUresult f_MemcpyHtoD(CUdeviceptr d, const void *s, size_t n) { return f_MemcpyAsync(d, (uintptr_t)s, n, NULL); }
static CUresult f_MemcpyDtoH(void *d, CUdeviceptr s, size_t n) { return f_MemcpyAsync((uintptr_t)d, s, n, NULL); }

static CUresult f_Memcpy2DAsync(const gpu_cu_memcpy2d_t *p, CUstream s)
{
    (void)s;
    n2d++;
    if (p->srcMemoryType != GPU_CU_MEMORYTYPE_UNIFIED || p->dstMemoryType != GPU_CU_MEMORYTYPE_UNIFIED ||
        p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes || p->srcXInBytes || p->srcY ||
        p->dstXInBytes || p->dstY) {
        nbad++;
        return GPU_CU_ERROR_INVALID_VALUE;
    }
    for (size_t y = 0; y < p->Height; y++)
        memcpy((char *)(uintptr_t)p->dstDevice + y * p->dstPitch, (const char *)(uintptr_t)p->srcDevice + y * p->srcPitch,
               p->WidthInBytes);
    return GPU_CU_SUCCESS;
}

static CUresult f_Memcpy3DAsync(const gpu_cu_memcpy3d_t *p, CUstream s)
{
    (void)s;
    n3d++;
    if (p->srcMemoryType != GPU_CU_MEMORYTYPE_UNIFIED || p->dstMemoryType != GPU_CU_MEMORYTYPE_UNIFIED ||
        p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes ||
        (p->Depth > 1 && (p->srcHeight < p->Height || p->dstHeight < p->Height)) || p->srcXInBytes || p->srcY ||
        p->srcZ || p->srcLOD || p->dstXInBytes || p->dstY || p->dstZ || p->dstLOD || p->reserved0 ||
        p->reserved1 || p->srcArray || p->dstArray) {
        nbad++;
        return GPU_CU_ERROR_INVALID_VALUE;
    }
    for (size_t z = 0; z < p->Depth; z++)
        for (size_t y = 0; y < p->Height; y++)
            memcpy((char *)(uintptr_t)p->dstDevice + (z * p->dstHeight + y) * p->dstPitch,
                   (const char *)(uintptr_t)p->srcDevice + (z * p->srcHeight + y) * p->srcPitch, p->WidthInBytes);
    return GPU_CU_SUCCESS;
}

static int module_storage;
static CUresult f_ModuleLoadData(CUmodule *m, const void *image) { (void)image; *m = (CUmodule)(void *)&module_storage; return GPU_CU_SUCCESS; }
static CUresult f_ModuleUnload(CUmodule m) { (void)m; return GPU_CU_SUCCESS; }
/* The function handle is its name (kept: the library holds the pointer). */
static char names[32][32];
static int nnames;
static CUresult f_ModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    for (int i = 0; i < nnames; i++)
        if (!strcmp(names[i], name)) {
            *f = (CUfunction)(void *)names[i];
            return GPU_CU_SUCCESS;
        }
    if (nnames == 32 || strncmp(name, "ampi_dt_", 8))
        return GPU_CU_ERROR_NOT_FOUND;
    snprintf(names[nnames], sizeof names[nnames], "%s", name);
    *f = (CUfunction)(void *)names[nnames++];
    return GPU_CU_SUCCESS;
}

/* What ampi_dt_pack_* / ampi_dt_unpack_* do (gpu_kernels.cu: dt_seg). */
typedef struct {
    long long off;
    unsigned long long len, pos;
} seg_t;
static CUresult f_LaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)extra;
    nkernel++;
    const char *name = (const char *)(void *)f;
    bool pack = !strncmp(name, "ampi_dt_pack_", 13);
    char *packed = *(char **)params[0], *buf = *(char **)params[1];
    const seg_t *segs = (const seg_t *)(uintptr_t) * (CUdeviceptr *)params[2];
    unsigned long long nsegs = *(unsigned long long *)params[3], esize = *(unsigned long long *)params[5];
    long long extent = *(long long *)params[4];
    unsigned long long total = *(unsigned long long *)params[6], limit = *(unsigned long long *)params[7];
    for (unsigned long long i = 0; i < total; i++) {
        unsigned long long e = i / nsegs, k = i % nsegs, p0 = e * esize + segs[k].pos, len = segs[k].len;
        if (p0 >= limit)
            continue;
        if (p0 + len > limit)
            len = limit - p0;
        char *u = buf + (long long)e * extent + segs[k].off, *p = packed + p0;
        if (pack)
            memcpy(p, u, len);
        else
            memcpy(u, p, len);
    }
    return GPU_CU_SUCCESS;
}

static const gpu_driver_t fake = {
    .Init = f_Init, .DeviceGetCount = f_DeviceGetCount, .DeviceGet = f_DeviceGet,
    .DeviceGetPCIBusId = f_DeviceGetPCIBusId, .DevicePrimaryCtxRetain = f_PrimaryCtxRetain,
    .DevicePrimaryCtxRelease = f_PrimaryCtxRelease, .CtxSetCurrent = f_CtxSetCurrent,
    .CtxGetCurrent = f_CtxGetCurrent, .CtxGetDevice = f_CtxGetDevice,
    .PointerGetAttributes = f_PointerGetAttributes, .MemGetAddressRange = f_MemGetAddressRange,
    .StreamCreate = f_StreamCreate, .StreamDestroy = f_StreamDestroy, .StreamSynchronize = f_StreamSynchronize,
    .MemcpyAsync = f_MemcpyAsync, .EventCreate = f_EventCreate, .EventRecord = f_EventRecord,
    .EventQuery = f_EventQuery, .EventDestroy = f_EventDestroy, .GetErrorName = f_GetErrorName,
    .MemAlloc = f_MemAlloc, .MemFree = f_MemFree, .MemcpyHtoD = f_MemcpyHtoD, .MemcpyDtoH = f_MemcpyDtoH,
    .ModuleLoadData = f_ModuleLoadData, .ModuleUnload = f_ModuleUnload,
    .ModuleGetFunction = f_ModuleGetFunction, .LaunchKernel = f_LaunchKernel,
    .Memcpy2DAsync = f_Memcpy2DAsync, .Memcpy3DAsync = f_Memcpy3DAsync,
};

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

    CHECK(nbad == 0, "%ld copies with arguments the driver refuses", nbad);
    gpu_finalize();
    gpu_driver_use_for_testing(NULL);
    return unit_check_summary("test_gpu_dt");
}
