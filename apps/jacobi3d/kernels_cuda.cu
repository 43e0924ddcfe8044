/* CUDA backend: the entry points of kernels.h as kernels on per-rank streams.
 *
 * Streams (created by every rank, so ranks sharing a GPU run concurrently):
 *   update  low priority: the Jacobi updates (and the CUDA graph, if any)
 *   pack, unpack, d2h, h2d  high priority: the communication path, so that
 *           one rank's faces are not stuck behind another rank's big update.
 * Dependencies between them are events, so the host waits only once per
 * iteration (wait_packed), on the last stream of the pack path.
 *
 * The rank's device is made current at the top of every entry point: ranks
 * that are user-level threads share the OS thread, and with it CUDA's notion
 * of the current device, and any MPI call may have switched ranks.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"

struct jc_backend {
    jc_block_t blk;
    jc_config_t cfg;
    int device;
    double *grid[2];
    int cur;
    double *d_send, *d_recv;            /* packed faces on the device */
    double *h_send, *h_recv;            /* pinned host copies (-H only) */
    cudaStream_t s_update, s_pack, s_unpack, s_d2h, s_h2d;
    cudaStream_t last;                  /* where the pack path ends: what wait_packed waits on */
    cudaEvent_t ev_updated, ev_packed, ev_h2d, ev_unpacked, ev_fork, ev_join;
    cudaGraphExec_t graph[2];           /* one per current grid: the pointers swap */
    char err[256];
};

#define CU(be, call)                                                                  \
    do {                                                                              \
        cudaError_t cu_rc_ = (call);                                                  \
        if (cu_rc_ != cudaSuccess) {                                                  \
            snprintf((be)->err, sizeof((be)->err), "%s failed: %s (GPU %d)", #call,   \
                     cudaGetErrorString(cu_rc_), (be)->device);                       \
            return -1;                                                                \
        }                                                                             \
    } while (0)

static const int kThreads1d = 256;
static const unsigned kMaxBlocks1d = 65535u * 16u;

static unsigned blocks_for(size_t n)
{
    size_t b = (n + kThreads1d - 1) / kThreads1d;
    return b > kMaxBlocks1d ? kMaxBlocks1d : (unsigned)(b ? b : 1);
}

/* ---- kernels ----------------------------------------------------------- */

__global__ void k_init(double *a, double *b, jc_block_t blk)
{
    size_t n = jc_cells_with_halo(blk.lx, blk.ly, blk.lz);
    size_t wx = blk.lx + 2, wy = blk.ly + 2;
    for (size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x; c < n; c += (size_t)gridDim.x * blockDim.x) {
        long i = (long)(c % wx) - 1, j = (long)(c / wx % wy) - 1, k = (long)(c / wx / wy) - 1;
        double v = jc_initial_value(blk.gx0 + i, blk.gy0 + j, blk.gz0 + k, blk.nx, blk.ny, blk.nz);
        a[c] = v;
        b[c] = v;
    }
}

/* The box [lo, l-lo) in every dimension: the whole block or its interior.
 * Each thread owns an (i,j) column and marches up `chunk` cells in z,
 * carrying the z neighbours in registers: five loads per cell instead of
 * seven, and the x/y neighbours are shared with adjacent threads in cache. */
__global__ void k_update_box(const double *__restrict__ in, double *__restrict__ out, jc_block_t blk, int lo, int chunk)
{
    int nx = blk.lx - 2 * lo, ny = blk.ly - 2 * lo, nz = blk.lz - 2 * lo;
    size_t sy = blk.lx + 2, sz = sy * (blk.ly + 2);
    int k0 = blockIdx.z * chunk, k1 = min(k0 + chunk, nz);
    for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny; j += gridDim.y * blockDim.y)
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nx; i += gridDim.x * blockDim.x) {
            size_t c = jc_idx(i + lo, j + lo, k0 + lo, blk.lx, blk.ly);
            double below = in[c - sz], mid = in[c];
            for (int k = k0; k < k1; k++, c += sz) {
                double above = in[c + sz];
                out[c] = jc_stencil7(mid, in[c - 1], in[c + 1], in[c - sy], in[c + sy], below, above);
                below = mid;
                mid = above;
            }
        }
}

__global__ void k_update_shell(const double *__restrict__ in, double *__restrict__ out, jc_block_t blk)
{
    size_t n = jc_shell_count(blk.lx, blk.ly, blk.lz);
    size_t sy = blk.lx + 2, sz = sy * (blk.ly + 2);
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n; e += (size_t)gridDim.x * blockDim.x) {
        int i, j, k;
        jc_shell_cell(e, blk.lx, blk.ly, blk.lz, &i, &j, &k);
        size_t c = jc_idx(i, j, k, blk.lx, blk.ly);
        out[c] = jc_stencil(in, c, sy, sz);
    }
}

/* to_grid = 0: grid face layer -> buffer (pack); 1: buffer -> halo (unpack). */
__global__ void k_copy_face(double *grid, double *buf, jc_block_t blk, int f, int to_grid)
{
    size_t n = blk.face_len[f];
    double *fb = buf + blk.face_off[f];
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n; e += (size_t)gridDim.x * blockDim.x) {
        size_t c = jc_face_cell(f, e, blk.lx, blk.ly, blk.lz, to_grid);
        if (to_grid)
            grid[c] = fb[e];
        else
            fb[e] = grid[c];
    }
}

/* Fused: as many threads as the longest face; each visits all six faces
 * (less divergence than giving every face its own range of threads). */
__global__ void k_copy_faces_fused(double *grid, double *buf, jc_block_t blk, int to_grid)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < blk.face_max; e += (size_t)gridDim.x * blockDim.x) {
#pragma unroll
        for (int f = 0; f < JC_NFACES; f++) {
            if (e >= blk.face_len[f])
                continue;
            size_t c = jc_face_cell(f, e, blk.lx, blk.ly, blk.lz, to_grid);
            if (to_grid)
                grid[c] = buf[blk.face_off[f] + e];
            else
                buf[blk.face_off[f] + e] = grid[c];
        }
    }
}

/* ---- enqueueing (shared by the direct calls and the graph capture) ----- */

static int enqueue_faces(jc_backend_t *be, cudaStream_t s, int to_grid)
{
    const jc_block_t *b = &be->blk;
    double *buf = to_grid ? be->d_recv : be->d_send;
    if (b->face_total == 0)
        return 0;
    if (be->cfg.fuse) {
        k_copy_faces_fused<<<blocks_for(b->face_max), kThreads1d, 0, s>>>(be->grid[be->cur], buf, *b, to_grid);
    } else {
        for (int f = 0; f < JC_NFACES; f++)
            if (b->face_len[f])
                k_copy_face<<<blocks_for(b->face_len[f]), kThreads1d, 0, s>>>(be->grid[be->cur], buf, *b, f, to_grid);
    }
    CU(be, cudaGetLastError());
    return 0;
}

static int enqueue_pack(jc_backend_t *be)
{
    size_t bytes = be->blk.face_total * sizeof(double);
    CU(be, cudaEventRecord(be->ev_updated, be->s_update));
    if (be->cfg.ddt) { /* the faces are final once the update is: MPI reads them from the grid */
        be->last = be->s_update;
        return 0;
    }
    CU(be, cudaStreamWaitEvent(be->s_pack, be->ev_updated, 0));
    if (enqueue_faces(be, be->s_pack, 0))
        return -1;
    be->last = be->s_pack;
    if (be->cfg.staging && bytes) {
        CU(be, cudaEventRecord(be->ev_packed, be->s_pack));
        CU(be, cudaStreamWaitEvent(be->s_d2h, be->ev_packed, 0));
        CU(be, cudaMemcpyAsync(be->h_send, be->d_send, bytes, cudaMemcpyDeviceToHost, be->s_d2h));
        be->last = be->s_d2h;
    }
    return 0;
}

static int enqueue_unpack(jc_backend_t *be)
{
    size_t bytes = be->blk.face_total * sizeof(double);
    if (be->cfg.ddt) /* MPI_Waitall returned: the library wrote the halos and its GPU work is done */
        return 0;
    if (be->cfg.staging && bytes) {
        CU(be, cudaMemcpyAsync(be->d_recv, be->h_recv, bytes, cudaMemcpyHostToDevice, be->s_h2d));
        CU(be, cudaEventRecord(be->ev_h2d, be->s_h2d));
        CU(be, cudaStreamWaitEvent(be->s_unpack, be->ev_h2d, 0));
    }
    if (enqueue_faces(be, be->s_unpack, 1))
        return -1;
    CU(be, cudaEventRecord(be->ev_unpacked, be->s_unpack));
    CU(be, cudaStreamWaitEvent(be->s_update, be->ev_unpacked, 0));
    return 0;
}

static int enqueue_update(jc_backend_t *be, jc_region_t r)
{
    const jc_block_t *b = &be->blk;
    const double *in = be->grid[be->cur];
    double *out = be->grid[be->cur ^ 1];
    if (r == JC_EXTERIOR) {
        size_t n = jc_shell_count(b->lx, b->ly, b->lz);
        k_update_shell<<<blocks_for(n), kThreads1d, 0, be->s_update>>>(in, out, *b);
    } else {
        int lo = r == JC_INTERIOR ? 1 : 0;
        int nx = b->lx - 2 * lo, ny = b->ly - 2 * lo, nz = b->lz - 2 * lo;
        if (nx <= 0 || ny <= 0 || nz <= 0)
            return 0;
        /* Long z columns for register reuse, but enough of them (about 2M
         * threads) to fill the GPU; grid.z stays under its 65535 limit. */
        long cells = (long)nx * ny * nz;
        int chunk = (int)(cells >> 21);
        if (chunk < 4)
            chunk = 4;
        if (chunk < (nz + 65534) / 65535)
            chunk = (nz + 65534) / 65535;
        if (chunk > nz)
            chunk = nz;
        dim3 threads(64, 4, 1);
        unsigned gy = (unsigned)((ny + 3) / 4);
        dim3 blocks((unsigned)((nx + 63) / 64), gy > 65535u ? 65535u : gy, (unsigned)((nz + chunk - 1) / chunk));
        k_update_box<<<blocks, threads, 0, be->s_update>>>(in, out, *b, lo, chunk);
    }
    CU(be, cudaGetLastError());
    return 0;
}

static int capture_graph(jc_backend_t *be, int parity)
{
    cudaGraph_t g;
    be->cur = parity;
    CU(be, cudaStreamBeginCapture(be->s_update, cudaStreamCaptureModeThreadLocal));
    /* Fork: the side streams join the capture through events from the origin. */
    CU(be, cudaEventRecord(be->ev_fork, be->s_update));
    CU(be, cudaStreamWaitEvent(be->s_unpack, be->ev_fork, 0));
    if (be->cfg.staging)
        CU(be, cudaStreamWaitEvent(be->s_h2d, be->ev_fork, 0));
    int rc = enqueue_unpack(be);
    if (!rc)
        rc = enqueue_update(be, be->cfg.overlap ? JC_EXTERIOR : JC_ALL);
    be->cur ^= 1;
    if (!rc)
        rc = enqueue_pack(be);
    if (!rc) {
        CU(be, cudaEventRecord(be->ev_join, be->last));
        CU(be, cudaStreamWaitEvent(be->s_update, be->ev_join, 0));
    }
    cudaError_t end = cudaStreamEndCapture(be->s_update, &g);
    if (rc)
        return -1;
    CU(be, end);
    cudaError_t inst = cudaGraphInstantiate(&be->graph[parity], g, 0);
    cudaGraphDestroy(g);
    CU(be, inst);
    return 0;
}

/* ---- entry points ------------------------------------------------------ */

static int wait_stream(jc_backend_t *be, cudaStream_t s)
{
    if (!be->cfg.yield) {
        CU(be, cudaStreamSynchronize(s));
        return 0;
    }
    cudaError_t rc;
    while ((rc = cudaStreamQuery(s)) == cudaErrorNotReady) {
        be->cfg.yield();
        CU(be, cudaSetDevice(be->device));
    }
    CU(be, rc);
    return 0;
}

static void cuda_destroy(jc_backend_t *be)
{
    if (!be)
        return;
    cudaSetDevice(be->device);
    for (int p = 0; p < 2; p++)
        if (be->graph[p])
            cudaGraphExecDestroy(be->graph[p]);
    cudaStream_t *streams[] = {&be->s_update, &be->s_pack, &be->s_unpack, &be->s_d2h, &be->s_h2d};
    for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
        if (*streams[i])
            cudaStreamDestroy(*streams[i]);
    cudaEvent_t *events[] = {&be->ev_updated, &be->ev_packed, &be->ev_h2d, &be->ev_unpacked, &be->ev_fork, &be->ev_join};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        if (*events[i])
            cudaEventDestroy(*events[i]);
    cudaFree(be->grid[0]);
    cudaFree(be->grid[1]);
    cudaFree(be->d_send);
    cudaFree(be->d_recv);
    cudaFreeHost(be->h_send);
    cudaFreeHost(be->h_recv);
    free(be);
}

static int setup(jc_backend_t *be)
{
    const jc_block_t *b = &be->blk;
    size_t grid_bytes = jc_cells_with_halo(b->lx, b->ly, b->lz) * sizeof(double);
    size_t face_bytes = (b->face_total ? b->face_total : 1) * sizeof(double);
    int least, greatest;
    CU(be, cudaSetDevice(be->device));
    CU(be, cudaMalloc((void **)&be->grid[0], grid_bytes));
    CU(be, cudaMalloc((void **)&be->grid[1], grid_bytes));
    CU(be, cudaMalloc((void **)&be->d_send, face_bytes));
    CU(be, cudaMalloc((void **)&be->d_recv, face_bytes));
    if (be->cfg.staging) {
        CU(be, cudaMallocHost((void **)&be->h_send, face_bytes));
        CU(be, cudaMallocHost((void **)&be->h_recv, face_bytes));
    }
    CU(be, cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CU(be, cudaStreamCreateWithPriority(&be->s_update, cudaStreamNonBlocking, least));
    CU(be, cudaStreamCreateWithPriority(&be->s_pack, cudaStreamNonBlocking, greatest));
    CU(be, cudaStreamCreateWithPriority(&be->s_unpack, cudaStreamNonBlocking, greatest));
    CU(be, cudaStreamCreateWithPriority(&be->s_d2h, cudaStreamNonBlocking, greatest));
    CU(be, cudaStreamCreateWithPriority(&be->s_h2d, cudaStreamNonBlocking, greatest));
    cudaEvent_t *events[] = {&be->ev_updated, &be->ev_packed, &be->ev_h2d, &be->ev_unpacked, &be->ev_fork, &be->ev_join};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        CU(be, cudaEventCreateWithFlags(events[i], cudaEventDisableTiming));
    be->last = be->s_pack;
    if (be->cfg.graphs && (capture_graph(be, 0) || capture_graph(be, 1)))
        return -1;
    be->cur = 0;
    return 0;
}

static jc_backend_t *cuda_create(const jc_block_t *blk, const jc_config_t *cfg, char *err, size_t errlen)
{
    int ndev = 0;
    cudaError_t rc = cudaGetDeviceCount(&ndev);
    if (rc != cudaSuccess || ndev < 1) {
        snprintf(err, errlen, "this mode needs a CUDA GPU, but none is usable (%s); use -cpu",
                 rc != cudaSuccess ? cudaGetErrorString(rc) : "no devices");
        return NULL;
    }
    jc_backend_t *be = (jc_backend_t *)calloc(1, sizeof(*be));
    if (!be) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    be->blk = *blk;
    be->cfg = *cfg;
    be->device = (cfg->local_rank < 0 ? 0 : cfg->local_rank) % ndev;
    if (setup(be)) {
        snprintf(err, errlen, "%s", be->err);
        cuda_destroy(be);
        return NULL;
    }
    return be;
}

static int cuda_init(jc_backend_t *be)
{
    const jc_block_t *b = &be->blk;
    CU(be, cudaSetDevice(be->device));
    k_init<<<blocks_for(jc_cells_with_halo(b->lx, b->ly, b->lz)), kThreads1d, 0, be->s_update>>>(be->grid[0], be->grid[1], *b);
    CU(be, cudaGetLastError());
    be->cur = 0;
    return 0;
}

static int cuda_pack(jc_backend_t *be)
{
    CU(be, cudaSetDevice(be->device));
    return enqueue_pack(be);
}

static int cuda_wait_packed(jc_backend_t *be)
{
    CU(be, cudaSetDevice(be->device));
    return wait_stream(be, be->last);
}

static int cuda_unpack(jc_backend_t *be)
{
    CU(be, cudaSetDevice(be->device));
    return enqueue_unpack(be);
}

static int cuda_update(jc_backend_t *be, jc_region_t r)
{
    CU(be, cudaSetDevice(be->device));
    return enqueue_update(be, r);
}

static int cuda_swap(jc_backend_t *be)
{
    be->cur ^= 1;
    return 0;
}

static int cuda_step(jc_backend_t *be)
{
    CU(be, cudaSetDevice(be->device));
    if (be->cfg.graphs) {
        CU(be, cudaGraphLaunch(be->graph[be->cur], be->s_update));
        be->cur ^= 1;
        be->last = be->s_update;
        return 0;
    }
    if (enqueue_unpack(be) || enqueue_update(be, be->cfg.overlap ? JC_EXTERIOR : JC_ALL))
        return -1;
    be->cur ^= 1;
    return enqueue_pack(be);
}

static int cuda_finish(jc_backend_t *be)
{
    CU(be, cudaSetDevice(be->device));
    cudaStream_t streams[] = {be->s_update, be->s_pack, be->s_unpack, be->s_d2h, be->s_h2d};
    for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++)
        if (wait_stream(be, streams[i]))
            return -1;
    return 0;
}

static int cuda_copy_out(jc_backend_t *be, double *interior)
{
    const jc_block_t *b = &be->blk;
    if (cuda_finish(be))
        return -1;
    /* Rows of the interior are strided in the haloed grid: a 2D copy per plane. */
    size_t pitch = ((size_t)b->lx + 2) * sizeof(double);
    for (int k = 0; k < b->lz; k++) {
        const double *src = be->grid[be->cur] + jc_idx(0, 0, k, b->lx, b->ly);
        CU(be, cudaMemcpy2D(interior + (size_t)k * b->lx * b->ly, (size_t)b->lx * sizeof(double), src, pitch,
                            (size_t)b->lx * sizeof(double), (size_t)b->ly, cudaMemcpyDeviceToHost));
    }
    return 0;
}

static void *cuda_send_buffer(jc_backend_t *be) { return be->cfg.staging ? be->h_send : be->d_send; }
static void *cuda_recv_buffer(jc_backend_t *be) { return be->cfg.staging ? be->h_recv : be->d_recv; }
static double *cuda_grid(jc_backend_t *be) { return be->grid[be->cur]; }
static const char *cuda_error(jc_backend_t *be) { return be->err; }

/* Positional: C++17 has no designated initializers.  Order as in kernels.h. */
extern "C" const jc_ops_t jc_cuda_ops = {
    "cuda",           cuda_create,  cuda_destroy, cuda_init,   cuda_pack,
    cuda_wait_packed, cuda_unpack,  cuda_update,  cuda_swap,   cuda_step,
    cuda_finish,      cuda_copy_out, cuda_send_buffer, cuda_recv_buffer, cuda_grid, cuda_error,
};
