/* gpu_query.c - MPIX_Query_cuda_support() and the device a process uses.
 *
 *   - under AMPI-UCX: MPIX_CUDA_AWARE_SUPPORT is 1 at compile time, the
 *     launcher set AMPI_LOCAL_RANK (0 <= it < AMPI_LOCAL_SIZE), and
 *     MPIX_Query_cuda_support() is 1 when a GPU is visible -- or 0 when the
 *     job runs with AMPI_GPU=0, which keeps the library off the GPU
 *   - the answer is the same on all ranks
 *   - with a GPU in use, a device buffer goes around the ring (1 MiB and
 *     8 B), so "supported" means it works
 * Under Open MPI the query's answer depends on how it was built: printed,
 * not checked.
 */
#include "gputest.h"

#include <strings.h>

#define MiB ((size_t)1024 * 1024)

static int gpu_switched_off(void)
{
    const char *v = getenv("AMPI_GPU");
    return v && (!strcmp(v, "0") || !strcasecmp(v, "off") ||
                 !strcasecmp(v, "no") || !strcasecmp(v, "false"));
}

static int check_launcher_env(int rank)
{
    int errs = 0;
#ifdef OPEN_MPI
    (void)rank;
#else
    const char *lr = getenv("AMPI_LOCAL_RANK"), *ls = getenv("AMPI_LOCAL_SIZE");
    if (!lr || !*lr)
        return gt_fail(rank, "AMPI_LOCAL_RANK is not set");
    int r = atoi(lr), s = ls && *ls ? atoi(ls) : -1;
    if (r < 0 || (s >= 0 && r >= s))
        errs += gt_fail(rank, "AMPI_LOCAL_RANK=%s, AMPI_LOCAL_SIZE=%s", lr,
                        ls ? ls : "(unset)");
#if !defined(MPIX_CUDA_AWARE_SUPPORT) || MPIX_CUDA_AWARE_SUPPORT != 1
    errs += gt_fail(rank, "mpi.h does not define MPIX_CUDA_AWARE_SUPPORT 1");
#endif
#endif
    return errs;
}

/* Device buffer to the right neighbour, device buffer from the left. */
static int ring_device(int rank, int size, size_t len, unsigned char *stage)
{
    int errs = 0, left = (rank + size - 1) % size, right = (rank + 1) % size;
    gt_buf s = gt_alloc(len, 1), r = gt_alloc(len + GT_GUARD, 1);
    MPI_Status st;
    char what[80];
    snprintf(what, sizeof what, "device ring of %zu B", len);
    gt_fill(s, len, gt_seed((uint64_t)rank, (uint64_t)right, len, 77), stage);
    gt_set(r, 0, GT_POISON, len + GT_GUARD);
    int rc = MPI_Sendrecv(s.p, (int)len, MPI_BYTE, right, 5, r.p, (int)len,
                          MPI_BYTE, left, 5, MPI_COMM_WORLD, &st);
    errs += gt_mpi_ok(rank, rc, "MPI_Sendrecv", what);
    if (rc == MPI_SUCCESS &&
        !gt_check_status(rank, what, &st, MPI_BYTE, left, 5, (int)len))
        errs += gt_verify(rank, what, r, len,
                          gt_seed((uint64_t)left, (uint64_t)rank, len, 77),
                          GT_GUARD, stage);
    gt_free(&s);
    gt_free(&r);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errs += check_launcher_env(rank);

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess)
        ndev = 0;
    int off = gpu_switched_off();
    int q = MPIX_Query_cuda_support();
    int qmin = -1, qmax = -1;
    MPI_Allreduce(&q, &qmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&q, &qmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (qmin != qmax)
        errs += gt_fail(rank, "MPIX_Query_cuda_support() differs between "
                        "ranks: %d to %d", qmin, qmax);
#ifdef OPEN_MPI
    if (rank == 0)
        gt_note("gpu_query: Open MPI: MPIX_Query_cuda_support() = %d, %d "
                "device(s) visible (not checked)", q, ndev);
#else
    int want = ndev > 0 && !off;
    if (q != want)
        errs += gt_fail(rank, "MPIX_Query_cuda_support() = %d, expected %d "
                        "(%d device(s) visible, AMPI_GPU %s)", q, want, ndev,
                        off ? "off" : "not off");
    if (rank == 0)
        gt_note("gpu_query: MPIX_Query_cuda_support() = %d with %d device(s)%s",
                q, ndev, off ? " and AMPI_GPU off" : "");
#endif
    if (ndev > 0 && !off) {
        int dev = gt_select_device(rank), cur = -1;
        GT_CUDA(cudaGetDevice(&cur));
        if (cur != dev)
            errs += gt_fail(rank, "cudaGetDevice() = %d after cudaSetDevice(%d)",
                            cur, dev);
    }
    /* also under Open MPI whatever it answers: its UCX pml passes device
     * buffers to a CUDA-aware UCX even when Open MPI was built without CUDA */
    if (ndev > 0 && !off) {
        unsigned char *stage;
        GT_CUDA(cudaMallocHost((void **)&stage, MiB + GT_GUARD));
        errs += ring_device(rank, size, MiB, stage);
        errs += ring_device(rank, size, 8, stage);
        GT_CUDA(cudaFreeHost(stage));
    }
    return gt_finish(rank, errs, "gpu_query");
}
