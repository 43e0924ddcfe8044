/*
 * Where benchmark buffers live: host memory, or CUDA device memory when
 * built with -DOSU_CUDA; and which GPU each rank drives.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_internal.h"

#include <mpi.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef OSU_CUDA
#include <cuda_runtime.h>
#endif

/* ------------------------------------------------------------------ */
/* Device selection                                                    */
/* ------------------------------------------------------------------ */

int osu_local_rank_from_env(void)
{
    /* The same list OSU and most launchers agree on, plus our ampirun's. */
    static const char *const names[] = {
        "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",            "SLURM_LOCALID",
        "AMPI_LOCAL_RANK",
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        long long v;
        if (osu_parse_integer(getenv(names[k]), 0, INT_MAX, &v) == 0) {
            return (int)v;
        }
    }
    return -1;
}

void osu_select_device(int hint, struct osu_parse *res)
{
#ifdef OSU_CUDA
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);

    if (err == cudaSuccess && count < 1) {
        err = cudaErrorNoDevice;
    }
    if (err == cudaSuccess) {
        err = cudaSetDevice(hint % count);
    }
    if (err == cudaSuccess) {
        /* Creates the context now, so the MPI library finds a current
         * CUDA context when it initializes, as with OSU's init_accel(). */
        err = cudaFree(NULL);
    }
    if (err != cudaSuccess) {
        res->status = OSU_STATUS_DEVICE_FAILED;
        snprintf(res->message, sizeof res->message,
                 "Error initializing CUDA device: %s",
                 cudaGetErrorString(err));
    }
#else
    (void)hint;
    res->status = OSU_STATUS_NO_CUDA;
    snprintf(res->message, sizeof res->message,
             "CUDA Support Not Enabled (build with -DOSU_CUDA)");
#endif
}

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

#ifdef OSU_CUDA
static void osu_cuda_or_abort(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(err));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#endif

void *osu_buffer_alloc(char placement, size_t bytes)
{
    void *buf = NULL;
    long page = sysconf(_SC_PAGESIZE);

    /* Room for the 4-byte bandwidth acknowledgement at least. */
    if (bytes < 64) {
        bytes = 64;
    }
    if (placement == 'D') {
#ifdef OSU_CUDA
        cudaError_t err = cudaMalloc(&buf, bytes);
        if (err != cudaSuccess) {
            fprintf(stderr, "cudaMalloc(%zu) failed: %s\n", bytes,
                    cudaGetErrorString(err));
            return NULL;
        }
        return buf;
#else
        fprintf(stderr, "device buffer requested without -DOSU_CUDA\n");
        return NULL;
#endif
    }
    if (posix_memalign(&buf, page > 0 ? (size_t)page : 4096, bytes) != 0) {
        fprintf(stderr, "posix_memalign(%zu) failed\n", bytes);
        return NULL;
    }
    return buf;
}

void osu_buffer_free(char placement, void *buf)
{
    if (buf == NULL) {
        return;
    }
#ifdef OSU_CUDA
    if (placement == 'D') {
        osu_cuda_or_abort(cudaFree(buf), "cudaFree");
        return;
    }
#else
    (void)placement;
#endif
    free(buf);
}

unsigned char osu_pattern_byte(size_t i, size_t size, int sender)
{
    uint32_t x = (uint32_t)i ^ ((uint32_t)size * 0x9e3779b9u) ^
                 ((uint32_t)sender * 0x85ebca6bu);
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return (unsigned char)x;
}

void osu_buffer_upload(char placement, void *dst, const void *src,
                       size_t bytes)
{
    if (bytes == 0) {
        return;
    }
#ifdef OSU_CUDA
    if (placement == 'D') {
        osu_cuda_or_abort(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
                          "cudaMemcpy to device");
        return;
    }
#else
    (void)placement;
#endif
    memcpy(dst, src, bytes);
}

void osu_buffer_download(char placement, void *dst, const void *src,
                         size_t bytes)
{
    if (bytes == 0) {
        return;
    }
#ifdef OSU_CUDA
    if (placement == 'D') {
        osu_cuda_or_abort(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
                          "cudaMemcpy to host");
        return;
    }
#else
    (void)placement;
#endif
    memcpy(dst, src, bytes);
}

static void osu_make_pattern(unsigned char *host, size_t size, int sender)
{
    for (size_t i = 0; i < size; i++) {
        host[i] = osu_pattern_byte(i, size, sender);
    }
}

void osu_buffer_fill_pattern(char placement, void *buf, size_t size,
                             int sender)
{
    unsigned char *host;

    if (size == 0) {
        return;
    }
    if (placement != 'D') {
        osu_make_pattern(buf, size, sender);
        return;
    }
    /* Device memory: build the pattern on the host, then copy it over. */
    host = malloc(size);
    if (host == NULL) {
        fprintf(stderr, "malloc(%zu) failed\n", size);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    osu_make_pattern(host, size, sender);
    osu_buffer_upload(placement, buf, host, size);
    free(host);
}

void osu_buffer_set(char placement, void *buf, int value, size_t bytes)
{
    if (bytes == 0) {
        return;
    }
#ifdef OSU_CUDA
    if (placement == 'D') {
        osu_cuda_or_abort(cudaMemset(buf, value, bytes), "cudaMemset");
        /* The MPI library may copy on its own streams: finish first. */
        osu_cuda_or_abort(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        return;
    }
#else
    (void)placement;
#endif
    memset(buf, value, bytes);
}

long osu_buffer_mismatches(char placement, const void *buf, size_t size,
                           int sender)
{
    const unsigned char *bytes = buf;
    unsigned char *copy = NULL;
    long wrong = 0;

    if (size == 0) {
        return 0;
    }
    if (placement == 'D') {
        /* Device memory: compare a host copy. */
        copy = malloc(size);
        if (copy == NULL) {
            fprintf(stderr, "malloc(%zu) failed\n", size);
            MPI_Abort(MPI_COMM_WORLD, 1);
            return 0;
        }
        osu_buffer_download(placement, copy, buf, size);
        bytes = copy;
    }
    for (size_t i = 0; i < size; i++) {
        wrong += bytes[i] != osu_pattern_byte(i, size, sender);
    }
    free(copy);
    return wrong;
}
