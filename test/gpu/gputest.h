/* gputest.h - helpers shared by the GPU point-to-point tests in test/gpu.
 *
 * The programs build with ampicc (AMPI-UCX) and with Open MPI's mpicc, and
 * link the CUDA runtime.  Under ampirun several MPI ranks are user-level
 * threads of one process, so nothing here keeps state in globals or statics:
 * every helper works on its arguments.
 *
 * Generic helpers (failure lines, malloc) come from test/mpi/mpitest.h.
 *
 * Device buffers cannot be filled or checked from C without a kernel, so
 * data goes through a pinned host staging buffer with cudaMemcpy.  Every
 * fill is followed by a stream synchronisation: cudaMemcpy from host and
 * cudaMemset may return before the device memory is written, and an MPI
 * library reading the buffer on another stream would then see old data.
 */
#ifndef GPUTEST_H
#define GPUTEST_H

#include "../mpi/mpitest.h"

#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h> /* MPIX_Query_cuda_support */
#endif
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes checked after every received message: a library that writes past
 * the message (or past the posted count) changes them. */
#define GT_GUARD 64
#define GT_POISON 0xA5 /* receive buffers are set to this before a receive */
#define GT_TAG_MAX 30000

/* Failure and note lines, malloc that aborts: the test/mpi helpers (same
 * output, so logs of both suites read alike) under the names the GPU tests
 * use. */
#define gt_fail mt_fail
#define gt_note mt_note
#define gt_malloc mt_malloc
#define gt_zalloc mt_zalloc

/* A CUDA error leaves the device in an unknown (often sticky) state, so the
 * test cannot go on meaningfully: report and abort the job. */
static inline void gt_cuda_ok(cudaError_t e, const char *what, const char *file,
                              int line)
{
    if (e == cudaSuccess)
        return;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    gt_fail(rank, "%s:%d: %s: %s (%s)", file, line, what,
            cudaGetErrorName(e), cudaGetErrorString(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define GT_CUDA(call) gt_cuda_ok((call), #call, __FILE__, __LINE__)

/* An MPI call that must succeed; counts a failure (with the library's error
 * text) and lets the test go on. */
static inline int gt_mpi_ok(int rank, int rc, const char *what, const char *ctx)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char msg[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return gt_fail(rank, "%s: %s returned %d (%s)", ctx, what, rc, msg);
}
#define GT_MPI(rank, ctx, call) gt_mpi_ok((rank), (call), #call, (ctx))

/* ---- test data -------------------------------------------------------------
 * A message's bytes are a function of a 64-bit seed made from (source,
 * destination, size, index), so data from the wrong peer, from an earlier
 * message, shifted or cut short does not compare equal.  Word w of the
 * pattern is cheap (xor, multiply, shift) so that 64 MiB messages are filled
 * and checked in a few tens of milliseconds. */
static inline uint64_t gt_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t h = 0x243F6A8885A308D3ull;
    const uint64_t in[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        h ^= in[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

static inline uint64_t gt_word(uint64_t seed, size_t w)
{
    uint64_t x = seed ^ ((uint64_t)(w + 1) * 0x9E3779B97F4A7C15ull);
    return x ^ (x >> 29);
}

static inline void gt_pattern(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = n / 8, w;
    for (w = 0; w < words; w++) {
        uint64_t x = gt_word(seed, w);
        memcpy(p + 8 * w, &x, 8);
    }
    if (n % 8) {
        uint64_t x = gt_word(seed, w);
        memcpy(p + 8 * w, &x, n % 8);
    }
}

/* Offset of the first byte that differs from gt_pattern(seed), or -1;
 * *got and *want receive that byte and the expected one. */
static inline long gt_pattern_diff(const void *buf, size_t n, uint64_t seed,
                                   int *got, int *want)
{
    const unsigned char *p = buf;
    for (size_t off = 0; off < n; off += 8) {
        uint64_t x = gt_word(seed, off / 8), y = x;
        size_t len = n - off < 8 ? n - off : 8;
        /* fixed-size copies compile to plain loads, unlike a memcmp call */
        if (len == 8)
            memcpy(&y, p + off, 8);
        else
            memcpy(&y, p + off, len);
        if (y == x)
            continue;
        unsigned char xb[8];
        memcpy(xb, &x, 8);
        for (size_t k = 0; k < len; k++)
            if (p[off + k] != xb[k]) {
                *got = p[off + k];
                *want = xb[k];
                return (long)(off + k);
            }
    }
    return -1;
}

/* Offset of the first byte of buf[0..n) that is not `byte`, or -1. */
static inline long gt_bytes_diff(const void *buf, size_t n, int byte)
{
    const unsigned char *p = buf;
    uint64_t all = 0x0101010101010101ull * (unsigned char)byte, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* word at a time, bytes only on a miss */
        memcpy(&w, p + i, 8);
        if (w != all)
            break;
    }
    for (; i < n; i++)
        if (p[i] != (unsigned char)byte)
            return (long)i;
    return -1;
}

/* ---- memory that is either on the device or on the host ------------------ */
typedef struct {
    unsigned char *p;
    size_t cap;
    int dev; /* 1: cudaMalloc, 0: malloc */
} gt_buf;

static inline gt_buf gt_alloc(size_t cap, int dev)
{
    gt_buf b = {NULL, cap, dev};
    if (dev)
        GT_CUDA(cudaMalloc((void **)&b.p, cap ? cap : 1));
    else
        b.p = gt_malloc(cap);
    return b;
}

static inline void gt_free(gt_buf *b)
{
    if (b->dev)
        GT_CUDA(cudaFree(b->p));
    else
        free(b->p);
    b->p = NULL;
}

static inline const char *gt_kind(int dev) { return dev ? "device" : "host"; }

/* Wait until the host-issued copies and memsets (legacy default stream) have
 * written device memory, before the buffer is handed to MPI. */
static inline void gt_sync(void) { GT_CUDA(cudaStreamSynchronize(0)); }

/* Copy n bytes from host memory src to b.p + off. */
static inline void gt_put(gt_buf b, size_t off, const void *src, size_t n)
{
    if (n == 0)
        return;
    if (b.dev) {
        GT_CUDA(cudaMemcpy(b.p + off, src, n, cudaMemcpyHostToDevice));
        gt_sync();
    } else {
        memcpy(b.p + off, src, n);
    }
}

/* Pointer to n bytes of b from off, readable by the CPU: b itself for host
 * memory, else a copy in stage (cudaMemcpy to host returns when done). */
static inline const unsigned char *gt_get(gt_buf b, size_t off, size_t n,
                                          unsigned char *stage)
{
    if (!b.dev)
        return b.p + off;
    if (n)
        GT_CUDA(cudaMemcpy(stage, b.p + off, n, cudaMemcpyDeviceToHost));
    return stage;
}

static inline void gt_set(gt_buf b, size_t off, int byte, size_t n)
{
    if (n == 0)
        return;
    if (b.dev) {
        GT_CUDA(cudaMemset(b.p + off, byte, n));
        gt_sync();
    } else {
        memset(b.p + off, byte, n);
    }
}

/* Write the pattern of `seed` to the first n bytes of b (through stage). */
static inline void gt_fill(gt_buf b, size_t n, uint64_t seed,
                           unsigned char *stage)
{
    if (b.dev) {
        gt_pattern(stage, n, seed);
        gt_put(b, 0, stage, n);
    } else {
        gt_pattern(b.p, n, seed);
    }
}

/* Check a received message: n bytes of pattern `seed`, then `after` bytes
 * still GT_POISON (set by the caller before the receive).  Returns the
 * number of errors (0 or 1 per region). */
static inline int gt_verify(int rank, const char *what, gt_buf b, size_t n,
                            uint64_t seed, size_t after, unsigned char *stage)
{
    int errs = 0, got = 0, want = 0;
    const unsigned char *h = gt_get(b, 0, n + after, stage);
    long bad = gt_pattern_diff(h, n, seed, &got, &want);
    if (bad >= 0)
        errs += gt_fail(rank, "%s: %s buffer byte %ld of %zu is 0x%02x, "
                        "expected 0x%02x", what, gt_kind(b.dev), bad, n, got,
                        want);
    bad = gt_bytes_diff(h + n, after, GT_POISON);
    if (bad >= 0)
        errs += gt_fail(rank, "%s: %s buffer byte %zu (%ld past the message "
                        "of %zu bytes) was overwritten: 0x%02x", what,
                        gt_kind(b.dev), n + (size_t)bad, bad + 1, n,
                        h[n + (size_t)bad]);
    return errs;
}

/* Source, tag and element count of a receive. */
static inline int gt_check_status(int rank, const char *what,
                                  const MPI_Status *st, MPI_Datatype type,
                                  int src, int tag, int count)
{
    int errs = 0, got = -7;
    if (src >= 0 && st->MPI_SOURCE != src)
        errs += gt_fail(rank, "%s: status source %d, expected %d", what,
                        st->MPI_SOURCE, src);
    if (tag >= 0 && st->MPI_TAG != tag)
        errs += gt_fail(rank, "%s: status tag %d, expected %d", what,
                        st->MPI_TAG, tag);
    MPI_Get_count(st, type, &got);
    if (count >= 0 && got != count)
        errs += gt_fail(rank, "%s: count %d, expected %d", what, got, count);
    return errs;
}

/* ---- setup and end --------------------------------------------------------- */

/* This process's node-local rank as the launcher tells it: ampirun sets
 * AMPI_LOCAL_RANK, Open MPI OMPI_COMM_WORLD_LOCAL_RANK; 0 in a singleton. */
static inline int gt_local_rank(void)
{
    const char *names[] = {"AMPI_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "MPI_LOCALRANKID", "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

/* Use the device the MPI library picked for this process (local rank modulo
 * the visible devices): buffers of another device would be a different
 * test.  Aborts when no device is visible. */
static inline int gt_select_device(int rank)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        gt_fail(rank, "no CUDA device visible (%s, %d devices)",
                cudaGetErrorName(e), ndev);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int dev = gt_local_rank() % ndev;
    GT_CUDA(cudaSetDevice(dev));
    return dev;
}

/* Whether this MPI copies device memory in its own datatype engine (Bsend
 * packing, Sendrecv_replace's temporary buffer).  Open MPI does only when
 * built with CUDA, which MPIX_Query_cuda_support() tells; its UCX pml still
 * passes contiguous device buffers straight to a CUDA-aware UCX. */
static inline int gt_packs_device(void)
{
#ifdef OPEN_MPI
    return MPIX_Query_cuda_support() == 1;
#else
    return 1;
#endif
}

/* Common start: MPI_Init, errors returned instead of fatal, the device.
 * Errors are returned so that every failing call is reported with its
 * context rather than ending the job at the first one. */
static inline void gt_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    gt_select_device(*rank);
}

/* Common end: the error count of all ranks; rank 0 prints "<prog>: OK" when
 * it is 0.  Returns the exit status for main. */
static inline int gt_finish(int rank, int errs, const char *prog)
{
    int total = -1;
    if (MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) !=
        MPI_SUCCESS) {
        gt_fail(rank, "%s: MPI_Allreduce of the error count failed", prog);
        total = errs ? errs : 1;
    }
    if (rank == 0) {
        if (total == 0)
            printf("%s: OK\n", prog);
        else
            printf("FAIL %s: %d error(s) in all ranks\n", prog, total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

/* Largest message size: GPU_TEST_MAX_BYTES if set (to shorten a run), else
 * `dflt`.  Every rank must compute the same value: the environment is the
 * same in all processes. */
static inline size_t gt_max_bytes(size_t dflt)
{
    const char *v = getenv("GPU_TEST_MAX_BYTES");
    if (v && *v) {
        char *end;
        unsigned long long x = strtoull(v, &end, 0);
        if (*end == '\0' && x > 0 && x < dflt)
            return (size_t)x;
    }
    return dflt;
}

#endif
