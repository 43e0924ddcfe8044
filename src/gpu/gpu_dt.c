/* Derived datatypes on device memory (gpu_dt.h). */
#include "gpu/gpu_dt.h"
#include "gpu/gpu_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 128
#define MAX_GRID 4096
#define WIDE_MIN 128 /* blocks of at least this many bytes on average: a thread block each */
/* A box whose elements do not continue its planes takes one 3D copy per
 * element up to this many elements, the kernel beyond (a copy costs about
 * as much as a kernel launch) */
#define BOX_COPIES_MAX 16

/* what the kernels read (struct ampi_dt_seg of gpu_kernels.cu) */
typedef struct {
    long long off;
    unsigned long long len, pos;
} seg_t;

struct gpu_dt_layout {
    size_t nblocks, size;
    ptrdiff_t extent;
    seg_t *host;          /* the blocks with their packed positions */
    unsigned align;       /* largest of 16, 8, 4, 2, 1 dividing every offset, length and the extent */
    bool uniform;         /* one length, one stride, also from element to element */
    ptrdiff_t stride;     /* ... that stride */
    /* a box: `planes` groups of `rows` blocks of one length, rows `row_pitch`
     * apart inside a group, groups `plane_pitch` apart (a multiple of
     * row_pitch) -- a sub-box of a 3D grid; box_continues: the next element
     * starts one plane_pitch after the last plane */
    bool box, box_continues;
    size_t rows, planes;
    ptrdiff_t row_pitch, plane_pitch;
    pthread_mutex_t lock; /* for the device copy */
    CUdeviceptr dev;      /* device copy of host[], made at first use */
    unsigned generation;  /* gpu_state.generation of dev */
};

extern const size_t gpu_kernels_image_size;

bool gpu_dt_available(void) { return gpu_kernels_image_size != 0; }

static unsigned align_of(uint64_t x)
{
    unsigned a = 16;
    while (a > 1 && x % a)
        a /= 2;
    return a;
}

/* Whether the blocks form a box (see gpu_dt_layout); a 2D layout whose
 * elements do not continue its rows is a box of one plane. */
static void find_box(gpu_dt_layout_t *l, const gpu_dt_block_t *b, size_t n)
{
    if (n < 2)
        return;
    size_t w = b[0].len, h = 1;
    ptrdiff_t p = b[1].off - b[0].off;
    if (w == 0 || p < (ptrdiff_t)w)
        return;
    while (h < n && b[h].off - b[h - 1].off == p)
        h++;
    if (n % h)
        return;
    ptrdiff_t q = h == n ? p * (ptrdiff_t)h : b[h].off - b[0].off;
    if (q % p || q / p < (ptrdiff_t)h) /* planes overlap, or do not start on a row */
        return;
    for (size_t k = 0; k < n; k++)
        if (b[k].len != w || b[k].off != b[0].off + (ptrdiff_t)(k / h) * q + (ptrdiff_t)(k % h) * p)
            return;
    l->box = true;
    l->rows = h;
    l->planes = n / h;
    l->row_pitch = p;
    l->plane_pitch = q;
    l->box_continues = l->extent == q * (ptrdiff_t)l->planes;
}

gpu_dt_layout_t *gpu_dt_layout_new(const gpu_dt_block_t *blocks, size_t nblocks, ptrdiff_t extent, size_t size)
{
    gpu_dt_layout_t *l = calloc(1, sizeof *l);
    if (!l || !(l->host = malloc(sizeof *l->host * (nblocks ? nblocks : 1)))) {
        free(l);
        return NULL;
    }
    l->nblocks = nblocks;
    l->size = size;
    l->extent = extent;
    uint64_t bits = (uint64_t)extent;
    size_t pos = 0;
    for (size_t k = 0; k < nblocks; k++) {
        l->host[k] = (seg_t){ blocks[k].off, blocks[k].len, pos };
        pos += blocks[k].len;
        bits |= (uint64_t)blocks[k].off | blocks[k].len;
    }
    l->align = align_of(bits);
    l->stride = nblocks > 1 ? blocks[1].off - blocks[0].off : extent;
    l->uniform = nblocks > 0 && l->stride >= (ptrdiff_t)blocks[0].len;
    for (size_t k = 1; k < nblocks && l->uniform; k++)
        l->uniform = blocks[k].len == blocks[0].len && blocks[k].off - blocks[k - 1].off == l->stride;
    l->uniform = l->uniform && extent == l->stride * (ptrdiff_t)nblocks; /* elements continue the rows */
    if (!l->uniform)
        find_box(l, blocks, nblocks);
    pthread_mutex_init(&l->lock, NULL);
    return l;
}

void gpu_dt_layout_free(gpu_dt_layout_t *l)
{
    if (!l)
        return;
    /* a copy of an earlier context (reset, or gpu_release) went with it */
    if (l->dev && l->generation == gpu_state.generation && gpu_state.on)
        gpu_drv.MemFree(l->dev);
    pthread_mutex_destroy(&l->lock);
    free(l->host);
    free(l);
}

/* The device copy of the blocks; our context is current. */
static CUresult layout_on_device(gpu_dt_layout_t *l, CUdeviceptr *out)
{
    CUresult r = GPU_CU_SUCCESS;
    pthread_mutex_lock(&l->lock);
    if (!l->dev || l->generation != gpu_state.generation) {
        size_t bytes = sizeof *l->host * l->nblocks;
        l->dev = 0;
        r = gpu_drv.MemAlloc(&l->dev, bytes);
        if (r == GPU_CU_SUCCESS && (r = gpu_drv.MemcpyHtoD(l->dev, l->host, bytes)) != GPU_CU_SUCCESS) {
            gpu_drv.MemFree(l->dev);
            l->dev = 0;
        }
        l->generation = gpu_state.generation;
    }
    *out = l->dev;
    pthread_mutex_unlock(&l->lock);
    return r;
}

typedef struct {
    bool pack;
    char *packed, *buf;
    size_t count, limit;
    gpu_dt_layout_t *l;
    int buf_device; /* ordinal of buf's GPU; -1 host-reachable (managed) */
} job_t;

static CUresult issue_2d(CUstream s, const job_t *j)
{
    const gpu_dt_layout_t *l = j->l;
    size_t rows = j->count * l->nblocks, width = l->host[0].len;
    CUdeviceptr strided = (CUdeviceptr)(uintptr_t)(j->buf + l->host[0].off);
    CUdeviceptr packed = (CUdeviceptr)(uintptr_t)j->packed;
    gpu_cu_memcpy2d_t p = { .srcMemoryType = GPU_CU_MEMORYTYPE_UNIFIED, .dstMemoryType = GPU_CU_MEMORYTYPE_UNIFIED,
                            .WidthInBytes = width, .Height = rows };
    p.srcDevice = j->pack ? strided : packed;
    p.srcPitch = j->pack ? (size_t)l->stride : width;
    p.dstDevice = j->pack ? packed : strided;
    p.dstPitch = j->pack ? width : (size_t)l->stride;
    return gpu_drv.Memcpy2DAsync(&p, s);
}

/* One cuMemcpy3DAsync of `depth` planes between a box at `boxed` (its
 * first block) and packed rows. */
static CUresult copy_3d(CUstream s, const job_t *j, char *boxed, char *packed, size_t depth)
{
    const gpu_dt_layout_t *l = j->l;
    size_t width = l->host[0].len;
    gpu_cu_memcpy3d_t p = { .srcMemoryType = GPU_CU_MEMORYTYPE_UNIFIED, .dstMemoryType = GPU_CU_MEMORYTYPE_UNIFIED,
                            .WidthInBytes = width, .Height = l->rows, .Depth = depth };
    CUdeviceptr b = (CUdeviceptr)(uintptr_t)boxed, k = (CUdeviceptr)(uintptr_t)packed;
    size_t box_pitch = (size_t)l->row_pitch, box_height = (size_t)(l->plane_pitch / l->row_pitch);
    p.srcDevice = j->pack ? b : k;
    p.srcPitch = j->pack ? box_pitch : width;
    p.srcHeight = j->pack ? box_height : l->rows;
    p.dstDevice = j->pack ? k : b;
    p.dstPitch = j->pack ? width : box_pitch;
    p.dstHeight = j->pack ? l->rows : box_height;
    return gpu_drv.Memcpy3DAsync(&p, s);
}

/* A box: one 3D copy for the whole message when the elements continue the
 * planes, else one per element. */
static CUresult issue_3d(CUstream s, const job_t *j)
{
    const gpu_dt_layout_t *l = j->l;
    char *first = j->buf + l->host[0].off;
    if (l->box_continues)
        return copy_3d(s, j, first, j->packed, j->count * l->planes);
    for (size_t e = 0; e < j->count; e++) {
        CUresult r = copy_3d(s, j, first + (ptrdiff_t)e * l->extent, j->packed + e * l->size, l->planes);
        if (r != GPU_CU_SUCCESS)
            return r;
    }
    return GPU_CU_SUCCESS;
}

/* Memory of another GPU: the copy engine, block by block. */
static CUresult issue_blocks(CUstream s, const job_t *j)
{
    const gpu_dt_layout_t *l = j->l;
    size_t done = 0;
    for (size_t e = 0; e < j->count && done < j->limit; e++)
        for (size_t k = 0; k < l->nblocks && done < j->limit; k++) {
            size_t len = l->host[k].len < j->limit - done ? l->host[k].len : j->limit - done;
            char *u = j->buf + (ptrdiff_t)e * l->extent + l->host[k].off, *p = j->packed + done;
            CUresult r = gpu_drv.MemcpyAsync((CUdeviceptr)(uintptr_t)(j->pack ? p : u),
                                             (CUdeviceptr)(uintptr_t)(j->pack ? u : p), len, s);
            if (r != GPU_CU_SUCCESS)
                return r;
            done += len;
        }
    return GPU_CU_SUCCESS;
}

/* The kernel over blocks [k0, k0 + nsegs) of each of j->count elements
 * (all blocks: k0 0, nsegs l->nblocks); the blocks keep their packed
 * positions within the element. */
static CUresult launch_blocks(CUstream s, const job_t *j, size_t k0, unsigned long long nsegs)
{
    gpu_dt_layout_t *l = j->l;
    CUdeviceptr segs;
    CUresult r = layout_on_device(l, &segs);
    if (r != GPU_CU_SUCCESS)
        return r;
    segs += k0 * sizeof(seg_t);
    unsigned unit = align_of((uint64_t)l->align | (uintptr_t)j->buf | (uintptr_t)j->packed);
    bool wide = l->nblocks && l->size / l->nblocks >= WIDE_MIN;
    char name[32];
    snprintf(name, sizeof name, "ampi_dt_%s_%c%u", j->pack ? "pack" : "unpack", wide ? 'w' : 'n', unit);
    CUfunction f;
    if ((r = (CUresult)gpu_kernel_get(name, &f)) != GPU_CU_SUCCESS)
        return r;
    unsigned long long total = j->count * nsegs, esize = l->size, limit = j->limit;
    long long extent = l->extent;
    unsigned long long grid = wide ? total : (total + THREADS - 1) / THREADS;
    if (grid > MAX_GRID)
        grid = MAX_GRID;
    if (grid == 0)
        return GPU_CU_SUCCESS;
    char *packed = j->packed, *buf = j->buf;
    void *params[] = { &packed, &buf, &segs, &nsegs, &extent, &esize, &total, &limit };
    return gpu_drv.LaunchKernel(f, (unsigned)grid, 1, 1, THREADS, 1, 1, 0, s, params, NULL);
}

static CUresult issue_kernel(CUstream s, const job_t *j) { return launch_blocks(s, j, 0, j->l->nblocks); }

static CUresult issue(CUstream s, void *arg)
{
    const job_t *j = arg;
    const gpu_dt_layout_t *l = j->l;
    if (j->buf_device >= 0 && j->buf_device != gpu_state.device)
        return issue_blocks(s, j);
    bool whole = j->limit == j->count * l->size; /* the copy engine moves whole elements */
    if (l->uniform && l->host[0].len >= GPU_DT_2D_MIN && whole)
        return issue_2d(s, j);
    if (l->box && l->host[0].len >= GPU_DT_2D_MIN && whole && (l->box_continues || j->count <= BOX_COPIES_MAX))
        return issue_3d(s, j);
    return issue_kernel(s, j);
}

static int start(bool pack, void *packed, const void *buf, size_t count, size_t limit, gpu_dt_layout_t *l,
                 gpu_copy_t *c)
{
    c->event = NULL;
    if (count == 0 || l->size == 0 || limit == 0)
        return 0;
    gpu_mem_t m;
    gpu_classify(buf, 1, &m);
    job_t j = { pack, packed, (char *)buf, count, limit, l, m.kind == GPU_MEM_DEVICE ? m.device : -1 };
    return gpu_copy_issue(issue, &j, c);
}

int gpu_dt_pack_start(void *packed, const void *buf, size_t count, gpu_dt_layout_t *l, gpu_copy_t *c)
{
    return start(true, packed, buf, count, count * l->size, l, c);
}

int gpu_dt_unpack_start(void *buf, const void *packed, size_t count, size_t bytes, gpu_dt_layout_t *l,
                        gpu_copy_t *c)
{
    size_t all = count * l->size;
    return start(false, (void *)packed, buf, count, bytes < all ? bytes : all, l, c);
}

/* ---- packing in chunks, each sent as soon as it is packed ---- */

struct gpu_dt_chunks {
    size_t n;
    size_t *end;      /* packed bytes [end[i-1], end[i]) are chunk i */
    gpu_copy_t *done; /* each chunk's completion on the PE's main stream */
};

/* The first block of element e (0 <= pos < l->size) whose packed bytes
 * reach past pos: chunks inside an element end on block boundaries. */
static size_t block_after(const gpu_dt_layout_t *l, size_t pos)
{
    size_t lo = 0, hi = l->nblocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->host[mid].pos + l->host[mid].len <= pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The pieces of the pack: whole elements per chunk when an element is
 * smaller than a chunk, else ranges of blocks of one element.  Calls
 * piece(job, k0, nsegs, end) for each, in order; 0 or the driver's error. */
typedef CUresult piece_fn(const job_t *j, size_t k0, size_t nsegs, size_t end, void *arg);

static CUresult for_each_piece(const job_t *whole, size_t chunk, piece_fn *piece, void *arg)
{
    const gpu_dt_layout_t *l = whole->l;
    if (l->size < chunk) {
        size_t per = chunk / l->size;
        for (size_t e = 0; e < whole->count; e += per) {
            job_t j = *whole;
            j.count = whole->count - e < per ? whole->count - e : per;
            j.buf = whole->buf + (ptrdiff_t)e * l->extent;
            j.packed = whole->packed + e * l->size;
            CUresult r = piece(&j, 0, l->nblocks, (e + j.count) * l->size, arg);
            if (r != GPU_CU_SUCCESS)
                return r;
        }
        return GPU_CU_SUCCESS;
    }
    for (size_t e = 0; e < whole->count; e++) {
        job_t j = *whole;
        j.count = 1;
        j.buf = whole->buf + (ptrdiff_t)e * l->extent;
        j.packed = whole->packed + e * l->size;
        for (size_t k = 0; k < l->nblocks;) {
            size_t target = l->host[k].pos + chunk, k1 = target >= l->size ? l->nblocks : block_after(l, target);
            if (k1 <= k)
                k1 = k + 1;
            size_t end = k1 < l->nblocks ? l->host[k1].pos : l->size;
            CUresult r = piece(&j, k, k1 - k, e * l->size + end, arg);
            if (r != GPU_CU_SUCCESS)
                return r;
            k = k1;
        }
    }
    return GPU_CU_SUCCESS;
}

static CUresult count_piece(const job_t *j, size_t k0, size_t nsegs, size_t end, void *arg)
{
    (void)j, (void)k0, (void)nsegs, (void)end;
    ++*(size_t *)arg;
    return GPU_CU_SUCCESS;
}

typedef struct {
    const job_t *j;
    size_t k0, nsegs;
} piece_t;

static CUresult issue_piece(CUstream s, void *arg)
{
    const piece_t *p = arg;
    return launch_blocks(s, p->j, p->k0, p->nsegs);
}

static CUresult start_piece(const job_t *j, size_t k0, size_t nsegs, size_t end, void *arg)
{
    gpu_dt_chunks_t *c = arg;
    piece_t p = { j, k0, nsegs };
    c->end[c->n] = end;
    CUresult r = (CUresult)gpu_copy_issue(issue_piece, &p, &c->done[c->n]);
    if (r == GPU_CU_SUCCESS)
        c->n++;
    return r;
}

int gpu_dt_pack_chunks_start(void *packed, const void *buf, size_t count, gpu_dt_layout_t *l, size_t chunk,
                             gpu_dt_chunks_t **out)
{
    *out = NULL;
    if (count == 0 || l->size == 0 || chunk == 0 || !gpu_dt_available())
        return GPU_CU_ERROR_NOT_FOUND;
    gpu_mem_t m;
    gpu_classify(buf, 1, &m);
    if (m.kind == GPU_MEM_DEVICE && m.device != gpu_state.device)
        return GPU_CU_ERROR_NOT_FOUND; /* another GPU: our kernels cannot reach it */
    job_t j = { true, packed, (char *)buf, count, count * l->size, l, -1 };
    size_t n = 0;
    for_each_piece(&j, chunk, count_piece, &n);
    gpu_dt_chunks_t *c = calloc(1, sizeof *c);
    if (c) {
        c->end = malloc(n * sizeof *c->end);
        c->done = calloc(n, sizeof *c->done);
    }
    if (!c || !c->end || !c->done) {
        gpu_dt_chunks_free(c);
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    }
    CUresult r = for_each_piece(&j, chunk, start_piece, c);
    if (r != GPU_CU_SUCCESS) {
        gpu_dt_chunks_wait(c); /* what was issued must end before its buffer goes */
        gpu_dt_chunks_free(c);
        return (int)r;
    }
    *out = c;
    return 0;
}

bool gpu_dt_chunks_done(gpu_dt_chunks_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (!gpu_copy_done(&c->done[i]))
            return false;
    return true;
}

void gpu_dt_chunks_wait(gpu_dt_chunks_t *c)
{
    while (c && !gpu_dt_chunks_done(c))
        ;
}

size_t gpu_dt_chunks_count(const gpu_dt_chunks_t *c) { return c ? c->n : 0; }

void gpu_dt_chunks_free(gpu_dt_chunks_t *c)
{
    if (!c)
        return;
    free(c->end);
    free(c->done);
    free(c);
}

typedef struct {
    char *dst;
    const char *packed;
    size_t bytes;
    gpu_dt_chunks_t *c;
} push_t;

/* Chunk by chunk: wait for its pack (on the main stream), then copy it. */
static CUresult issue_push(CUstream s, void *arg)
{
    const push_t *p = arg;
    size_t begin = 0;
    for (size_t i = 0; i < p->c->n && begin < p->bytes; i++) {
        size_t end = p->c->end[i] < p->bytes ? p->c->end[i] : p->bytes;
        CUresult r = GPU_CU_SUCCESS;
        if (p->c->done[i].event) /* a chunk already seen done has no event left */
            r = gpu_drv.StreamWaitEvent(s, (CUevent)p->c->done[i].event, 0);
        if (r == GPU_CU_SUCCESS && end > begin)
            r = gpu_drv.MemcpyAsync((CUdeviceptr)(uintptr_t)(p->dst + begin),
                                    (CUdeviceptr)(uintptr_t)(p->packed + begin), end - begin, s);
        if (r != GPU_CU_SUCCESS)
            return r;
        begin = end;
    }
    return GPU_CU_SUCCESS;
}

int gpu_dt_chunks_copy_start(void *dst, const void *packed, size_t bytes, gpu_dt_chunks_t *c, gpu_copy_t *done)
{
    push_t p = { dst, packed, bytes, c };
    return gpu_copy_issue_side(issue_push, &p, done);
}
