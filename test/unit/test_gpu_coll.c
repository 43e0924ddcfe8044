/* src/coll on a fake CUDA driver: the ranks of one collective take the same
 * path whatever memory kinds they pass, so that no call hangs or fails on
 * one rank alone.
 *
 * One process runs 4 ranks (AMPI_Run, as a program started without a
 * launcher with +vp 4).  The fake driver (unit_fake_cuda.h) makes "device"
 * memory that the library classifies as such.  In every call some ranks
 * pass device buffers and the others host buffers, so a rank that decides
 * from its own buffers takes another path than its peers: a user-defined
 * op (no device kernel) or a long double type above the size reduced on
 * host copies (AMPI_GPU_COLL_HOST_MAX, set to 64 KiB here) used to fail on the device
 * ranks while the host ranks waited for them, and a Bcast of 64 KiB among
 * 4 ranks took the flat tree on device ranks and the binomial one on host
 * ranks.  Each call must succeed on every rank with the data of the same
 * call on host buffers (checked element by element, receive buffers
 * poisoned first); a hang ends the test through the watchdog.  Calls:
 * Allreduce (user op, MPI_SUM, long double) below and above the limit,
 * Reduce to a root whose output alone is device memory, Iallreduce, Scan
 * and Reduce_scatter_block with a user op, Bcast of 64 KiB from a device
 * root and from a host root, before and after the ranks have agreed on
 * device buffers (then the flat tree serves host buffers too); Bcast and
 * Allreduce of a vector type (packed by the "GPU" where the buffer is
 * device memory; refused there before), and Alltoallw of one.  Last, a
 * vector sent from a device buffer while packed in chunks
 * (AMPI_GPU_DDT_CHUNK). */
#include "gpu/gpu.h"
#include "gpu/gpu_cuda.h"
#include "mpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

#include "unit_fake_cuda.h"

enum { NRANKS = 4, SMALL = 37, LARGE = 16385 /* ints: 64 KiB + 4 */ };

static void *dev_alloc(size_t bytes)
{
    CUdeviceptr p;
    if (f_MemAlloc(&p, bytes) != GPU_CU_SUCCESS)
        abort();
    return (void *)(uintptr_t)p;
}

/* A wrapping sum of ints: commutative, no device kernel. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

static int value(int rank, size_t i) { return (int)(rank * 1000 + (int)(i % 977)) - 1500; }

/* Rank r's buffers of `bytes`: device memory on the ranks of `dev_mask`. */
static void *buf_for(int rank, unsigned dev_mask, size_t bytes)
{
    return dev_mask >> rank & 1 ? dev_alloc(bytes) : malloc(bytes);
}

static void buf_free(void *p, int rank, unsigned dev_mask)
{
    if (!(dev_mask >> rank & 1))
        free(p);
    /* fake device memory stays mapped: freed ranges could come back as host
     * memory that the library's classification cache still calls device */
}

/* Allreduce (root < 0) or Reduce of n ints with op; in and out on the
 * device as the masks say.  Compares with the sum done here. */
static void reduce_case(int rank, MPI_Op op, const char *opname, size_t n, int root, unsigned in_dev,
                        unsigned out_dev)
{
    size_t bytes = n * sizeof(int);
    int *in = buf_for(rank, in_dev, bytes), *out = buf_for(rank, out_dev, bytes);
    for (size_t i = 0; i < n; i++)
        in[i] = value(rank, i); /* fake device memory is host-addressable */
    memset(out, 0x5A, bytes);
    int rc = root < 0 ? MPI_Allreduce(in, out, (int)n, MPI_INT, op, MPI_COMM_WORLD)
                      : MPI_Reduce(in, out, (int)n, MPI_INT, op, root, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: %s %s n=%zu (device in %#x, out %#x): error %d", rank,
          root < 0 ? "Allreduce" : "Reduce", opname, n, in_dev, out_dev, rc);
    if (rc == MPI_SUCCESS && (root < 0 || root == rank))
        for (size_t i = 0; i < n; i++) {
            int want = 0;
            for (int r = 0; r < NRANKS; r++)
                want += value(r, i);
            if (out[i] != want) {
                CHECK(out[i] == want, "rank %d: %s %s n=%zu: element %zu is %d, want %d", rank,
                      root < 0 ? "Allreduce" : "Reduce", opname, n, i, out[i], want);
                break;
            }
        }
    buf_free(in, rank, in_dev);
    buf_free(out, rank, out_dev);
}

/* Allreduce of n long doubles (no device kernel): sums of small integers. */
static void ldouble_case(int rank, size_t n, unsigned dev_mask)
{
    size_t bytes = n * sizeof(long double);
    long double *in = buf_for(rank, dev_mask, bytes), *out = buf_for(rank, dev_mask, bytes);
    for (size_t i = 0; i < n; i++)
        in[i] = (long double)(rank + (int)(i % 7));
    memset(out, 0x5A, bytes);
    int rc = MPI_Allreduce(in, out, (int)n, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Allreduce LONG_DOUBLE n=%zu: error %d", rank, n, rc);
    for (size_t i = 0; rc == MPI_SUCCESS && i < n; i++) {
        long double want = (long double)(0 + 1 + 2 + 3 + NRANKS * (int)(i % 7));
        if (out[i] != want) {
            CHECK(out[i] == want, "rank %d: Allreduce LONG_DOUBLE n=%zu: element %zu differs", rank, n, i);
            break;
        }
    }
    buf_free(in, rank, dev_mask);
    buf_free(out, rank, dev_mask);
}

/* Iallreduce, Scan and Reduce_scatter_block with the user op. */
static void other_reductions(int rank, MPI_Op op, unsigned dev_mask)
{
    size_t n = LARGE, bytes = n * sizeof(int);
    int *in = buf_for(rank, dev_mask, bytes * NRANKS), *out = buf_for(rank, dev_mask, bytes * NRANKS);
    for (size_t i = 0; i < n * NRANKS; i++)
        in[i] = value(rank, i);
    memset(out, 0x5A, bytes);
    MPI_Request q;
    int rc = MPI_Iallreduce(in, out, (int)n, MPI_INT, op, MPI_COMM_WORLD, &q);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "rank %d: Iallreduce user op: error %d", rank, rc);
    for (size_t i = 0; rc == MPI_SUCCESS && i < n; i++)
        if (out[i] != value(0, i) + value(1, i) + value(2, i) + value(3, i)) {
            CHECK(0, "rank %d: Iallreduce user op: element %zu differs", rank, i);
            break;
        }
    memset(out, 0x5A, bytes);
    rc = MPI_Scan(in, out, (int)n, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Scan user op: error %d", rank, rc);
    for (size_t i = 0; rc == MPI_SUCCESS && i < n; i++) {
        int want = 0;
        for (int r = 0; r <= rank; r++)
            want += value(r, i);
        if (out[i] != want) {
            CHECK(0, "rank %d: Scan user op: element %zu is %d, want %d", rank, i, out[i], want);
            break;
        }
    }
    memset(out, 0x5A, bytes);
    rc = MPI_Reduce_scatter_block(in, out, (int)n, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Reduce_scatter_block user op: error %d", rank, rc);
    for (size_t i = 0; rc == MPI_SUCCESS && i < n; i++) {
        size_t at = (size_t)rank * n + i;
        if (out[i] != value(0, at) + value(1, at) + value(2, at) + value(3, at)) {
            CHECK(0, "rank %d: Reduce_scatter_block user op: element %zu differs", rank, i);
            break;
        }
    }
    buf_free(in, rank, dev_mask);
    buf_free(out, rank, dev_mask);
}

/* Bcast of `bytes` from root, device buffers on the ranks of dev_mask. */
static void bcast_case(int rank, size_t bytes, int root, unsigned dev_mask)
{
    unsigned char *b = buf_for(rank, dev_mask, bytes);
    for (size_t i = 0; i < bytes; i++)
        b[i] = rank == root ? (unsigned char)(i * 7 + (size_t)root) : 0xA5;
    int rc = MPI_Bcast(b, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Bcast %zu B from %d (device %#x): error %d", rank, bytes, root, dev_mask, rc);
    for (size_t i = 0; rc == MPI_SUCCESS && i < bytes; i++)
        if (b[i] != (unsigned char)(i * 7 + (size_t)root)) {
            CHECK(0, "rank %d: Bcast %zu B from %d (device %#x): byte %zu differs", rank, bytes, root, dev_mask, i);
            break;
        }
    buf_free(b, rank, dev_mask);
}

/* A vector type (64 blocks of 4 ints, stride 8): Bcast from root and
 * Allreduce (MPI_SUM) with device buffers on the ranks of dev_mask; the
 * gaps must keep their poison. */
static void vector_case(int rank, int root, unsigned dev_mask)
{
    enum { BLOCKS = 64, LEN = 4, STRIDE = 8, N = BLOCKS * STRIDE };
    MPI_Datatype vec;
    MPI_Type_vector(BLOCKS, LEN, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *b = buf_for(rank, dev_mask, N * sizeof(int)), *in = buf_for(rank, dev_mask, N * sizeof(int));
    for (int i = 0; i < N; i++) {
        b[i] = rank == root ? i * 3 + root : -7;
        in[i] = i % STRIDE < LEN ? value(rank, (size_t)i) : -9;
    }
    int rc = MPI_Bcast(b, 1, vec, root, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Bcast of a vector (device %#x): error %d", rank, dev_mask, rc);
    for (int i = 0; rc == MPI_SUCCESS && i < N; i++) {
        int want = i % STRIDE < LEN || rank == root ? i * 3 + root : -7;
        if (b[i] != want) {
            CHECK(0, "rank %d: Bcast of a vector (device %#x): int %d is %d, want %d", rank, dev_mask, i, b[i],
                  want);
            break;
        }
    }
    for (int i = 0; i < N; i++)
        b[i] = -7;
    rc = MPI_Allreduce(in, b, 1, vec, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Allreduce of a vector (device %#x): error %d", rank, dev_mask, rc);
    for (int i = 0; rc == MPI_SUCCESS && i < N; i++) {
        int want = -7;
        if (i % STRIDE < LEN)
            for (int r = 0; r < NRANKS; r++)
                want = (r ? want : 0) + value(r, (size_t)i);
        if (b[i] != want) {
            CHECK(0, "rank %d: Allreduce of a vector (device %#x): int %d is %d, want %d", rank, dev_mask, i,
                  b[i], want);
            break;
        }
    }
    buf_free(b, rank, dev_mask);
    buf_free(in, rank, dev_mask);
    MPI_Type_free(&vec);
}

/* Alltoallw of a vector type (every block to every rank): device buffers
 * on the ranks of dev_mask.  Its point-to-point messages pack the type on
 * the "GPU"; it used to be refused on device ranks alone. */
static void alltoallw_case(int rank, unsigned dev_mask)
{
    enum { BLOCKS = 16, LEN = 2, STRIDE = 4, PER = BLOCKS * STRIDE };
    MPI_Datatype vec;
    MPI_Type_vector(BLOCKS, LEN, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    size_t bytes = NRANKS * PER * sizeof(int);
    int *s = buf_for(rank, dev_mask, bytes), *r = buf_for(rank, dev_mask, bytes);
    int counts[NRANKS], displs[NRANKS];
    MPI_Datatype types[NRANKS];
    for (int i = 0; i < NRANKS; i++) {
        counts[i] = 1;
        displs[i] = i * PER * (int)sizeof(int);
        types[i] = vec;
    }
    for (int i = 0; i < NRANKS * PER; i++) {
        s[i] = rank * 100000 + i;
        r[i] = -5;
    }
    int rc = MPI_Alltoallw(s, counts, displs, types, r, counts, displs, types, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "rank %d: Alltoallw of a vector (device %#x): error %d", rank, dev_mask, rc);
    for (int i = 0; rc == MPI_SUCCESS && i < NRANKS * PER; i++) {
        int from = i / PER, want = i % STRIDE < LEN ? from * 100000 + rank * PER + i % PER : -5;
        if (r[i] != want) {
            CHECK(0, "rank %d: Alltoallw of a vector (device %#x): int %d is %d, want %d", rank, dev_mask, i, r[i],
                  want);
            break;
        }
    }
    buf_free(s, rank, dev_mask);
    buf_free(r, rank, dev_mask);
    MPI_Type_free(&vec);
}

/* Point to point: a vector of 64 KiB from a device buffer, packed in 4 KiB
 * chunks (AMPI_GPU_DDT_CHUNK, set by main) that the send waits for before
 * the same-process route copies them; rank 0 -> 1 into a device vector,
 * rank 2 -> 3 into host ints. */
static void chunked_send_case(int rank)
{
    enum { BLOCKS = 2048, LEN = 8, STRIDE = 12, N = BLOCKS * STRIDE, PACKED = BLOCKS * LEN };
    MPI_Datatype vec;
    MPI_Type_vector(BLOCKS, LEN, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *b = (rank & 1) && rank != 1 ? malloc(N * sizeof(int)) : dev_alloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        b[i] = rank & 1 ? -3 : rank * 7 + i;
    int rc;
    if (!(rank & 1))
        rc = MPI_Send(b, 1, vec, rank + 1, 5, MPI_COMM_WORLD);
    else if (rank == 1)
        rc = MPI_Recv(b, 1, vec, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        rc = MPI_Recv(b, PACKED, MPI_INT, 2, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "rank %d: a vector packed in chunks: error %d", rank, rc);
    for (int i = 0; rc == MPI_SUCCESS && (rank & 1) && i < N; i++) {
        int from = rank - 1, want;
        if (rank == 1)
            want = i % STRIDE < LEN ? from * 7 + i : -3;
        else
            want = i < PACKED ? from * 7 + (i / LEN) * STRIDE + i % LEN : -3;
        if (b[i] != want) {
            CHECK(0, "rank %d: a vector packed in chunks: int %d is %d, want %d", rank, i, b[i], want);
            break;
        }
    }
    if (rank == 3)
        free(b);
    MPI_Type_free(&vec);
}

static int rank_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    int rank, size;
    MPI_Init(NULL, NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == NRANKS, "%d ranks, want %d", size, NRANKS);
    CHECK(gpu_enabled(), "the fake driver is not in use");
    MPI_Op usum;
    MPI_Op_create(user_sum, 1, &usum);
    const unsigned rank0 = 1, even = 5, all = 15;
    for (int k = 0; k < 2; k++) {
        size_t n = k ? LARGE : SMALL;
        reduce_case(rank, usum, "user sum", n, -1, rank0, rank0);
        reduce_case(rank, usum, "user sum", n, -1, even, all);
        reduce_case(rank, usum, "user sum", n, NRANKS - 1, 0, 1u << (NRANKS - 1)); /* the root's out alone */
        reduce_case(rank, usum, "user sum", n, 0, even, even);
        reduce_case(rank, MPI_SUM, "SUM", n, -1, even, even);
        reduce_case(rank, MPI_SUM, "SUM", n, 1, rank0, 0);
        ldouble_case(rank, n, even);
    }
    other_reductions(rank, usum, even);
    other_reductions(rank, usum, rank0);
    /* the ranks agree on the 1st, 2nd and 4th call: the 4th finds device
     * buffers everywhere, and the flat tree then serves host buffers too */
    bcast_case(rank, 65536, 0, rank0); /* a device root, host receivers */
    bcast_case(rank, 65536, 1, rank0); /* a host root, one device receiver */
    bcast_case(rank, 65536, 2, all);
    bcast_case(rank, 65536, 3, all);
    bcast_case(rank, 65536, 3, even); /* a host root */
    bcast_case(rank, 65536, 0, rank0);
    vector_case(rank, 0, rank0);
    vector_case(rank, 1, even);
    alltoallw_case(rank, rank0);
    chunked_send_case(rank);
    MPI_Op_free(&usum);
    MPI_Finalize();
    return unit_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    unsetenv("AMPI_GPU");
    unsetenv("AMPI_GPU_DEVICE");
    setenv("AMPI_GPU_COLL_HOST_MAX", "64K", 1); /* the calls' sizes lie either side of it */
    setenv("AMPI_WARN_GLOBALS", "0", 1); /* the ranks share the test's statics on purpose */
    setenv("AMPI_NCCL", "0", 1); /* one process: NCCL never applies; no library to load */
    setenv("AMPI_GPU_DDT_CHUNK", "4K", 1);
    gpu_driver_use_for_testing(&fake);
    unit_check_watchdog(60, "FAIL test_gpu_coll: a collective hung (its ranks took different paths)\n");
    char *args[] = { argv[0], "+vp", "4", NULL };
    int rc = AMPI_Run(3, args, rank_main);
    gpu_driver_use_for_testing(NULL);
    if (rc != 0)
        fprintf(stderr, "test_gpu_coll: exit status %d\n", rc);
    return rc ? 1 : unit_check_summary("test_gpu_coll");
}
