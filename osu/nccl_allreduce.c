/*
 * nccl_allreduce: NCCL's own all-reduce as a reference beside the MPI
 * device all-reduces (osu_allreduce -d cuda), in the OSU suite's layout.
 *
 * One process per GPU; MPI only bootstraps NCCL (rank 0 makes the unique
 * id, MPI_Bcast hands it out) and gathers the timings. Float sum, out of
 * place by default (as osu_allreduce: separate send and receive buffers),
 * in place with -I. Timing as OSU 7.x collectives: every iteration is timed
 * alone -- ncclAllReduce plus cudaStreamSynchronize, since an MPI
 * all-reduce returns only when its result is there -- with an untimed
 * barrier after it and untimed warmup; each rank's mean goes to rank 0
 * (MPI_Reduce, sum / nprocs).
 *
 * Bus bandwidth as nccl-tests reports it: algbw = size / time,
 * busbw = algbw * 2(n-1)/n (for 2 ranks busbw = algbw), GB/s = 1e9 B/s.
 *
 * Build (Open MPI or any MPI; NCCL and the CUDA runtime, no nvcc):
 *   mpicc -std=c11 -O2 -I$CUDA_HOME/include -o nccl_allreduce \
 *         nccl_allreduce.c -L$CUDA_HOME/lib64 -lnccl -lcudart
 * Run: mpirun -np 2 ./nccl_allreduce [-m [MIN:]MAX] [-i N] [-x N] [-I] [-c]
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OSU's collective defaults; sizes as nccl-tests' usual 8 B .. 128 MiB. */
#define NCCL_AR_MIN_SIZE       ((size_t)8)
#define NCCL_AR_MAX_SIZE       ((size_t)128 << 20)
#define NCCL_AR_LARGE_MESSAGE  8192
#define NCCL_AR_ITERS          1000
#define NCCL_AR_ITERS_LARGE    100
#define NCCL_AR_SKIP           100
#define NCCL_AR_SKIP_LARGE     10
#define NCCL_AR_FIELD_WIDTH    18

struct nccl_ar_options {
    size_t min_size, max_size;
    int iterations, iterations_large;
    int skip, skip_large;
    int in_place; /* -I: recvbuff == sendbuff */
    int validate; /* -c: check every element once per size */
};

struct nccl_ar_run {
    struct nccl_ar_options opt;
    int rank, nprocs;
    ncclComm_t comm;
    cudaStream_t stream;
    float *send, *recv; /* device; recv == send in place */
    float *host;        /* host image for filling and checking */
};

static void nccl_ar_die(const char *what, const char *why)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "[rank %d] nccl_allreduce: %s: %s\n", rank, what, why);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void cuda_check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        nccl_ar_die(what, cudaGetErrorString(err));
    }
}

static void nccl_check(ncclResult_t res, const char *what)
{
    if (res != ncclSuccess) {
        nccl_ar_die(what, ncclGetErrorString(res));
    }
}

/* ------------------------------------------------------------------ */
/* Options (no getopt: its state is global)                            */
/* ------------------------------------------------------------------ */

static int parse_size_t(const char *text, size_t *out)
{
    char *end;
    unsigned long long v;

    if (text == NULL || *text == '\0' || *text == '-') {
        return -1;
    }
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || v == 0 || v > SIZE_MAX / 2) {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *text, int min, int *out)
{
    char *end;
    long v;

    if (text == NULL || *text == '\0') {
        return -1;
    }
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > INT_MAX) {
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* "MAX", "MIN:MAX", "MIN:" or ":MAX", in bytes. */
static int parse_sizes(const char *text, struct nccl_ar_options *opt)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    char min_text[32];

    if (colon == NULL) {
        return parse_size_t(text, &opt->max_size);
    }
    size_t len = (size_t)(colon - text);
    if (len >= sizeof min_text || (len == 0 && colon[1] == '\0')) {
        return -1;
    }
    memcpy(min_text, text, len);
    min_text[len] = '\0';
    if (len > 0 && parse_size_t(min_text, &opt->min_size) != 0) {
        return -1;
    }
    if (colon[1] != '\0' && parse_size_t(colon + 1, &opt->max_size) != 0) {
        return -1;
    }
    return 0;
}

static void print_usage(void)
{
    printf("Usage: nccl_allreduce [options]\n"
           "  -m, --message-size [MIN:]MAX  bytes, powers of two (default "
           "%zu:%zu)\n"
           "  -i, --iterations N   timed iterations (default %d, %d above %d "
           "bytes)\n"
           "  -x, --warmup N       untimed warmup (default %d, %d above %d "
           "bytes)\n"
           "  -I, --in-place       recvbuff == sendbuff (default: out of "
           "place)\n"
           "  -c, --validation     check the sum after each size\n"
           "  -h, --help\n",
           NCCL_AR_MIN_SIZE, NCCL_AR_MAX_SIZE, NCCL_AR_ITERS,
           NCCL_AR_ITERS_LARGE, NCCL_AR_LARGE_MESSAGE, NCCL_AR_SKIP,
           NCCL_AR_SKIP_LARGE, NCCL_AR_LARGE_MESSAGE);
}

/* 0: run; 1: help printed, exit 0; -1: bad usage (message printed). */
static int parse_options(int argc, char **argv, struct nccl_ar_options *opt,
                         int print)
{
    opt->min_size = NCCL_AR_MIN_SIZE;
    opt->max_size = NCCL_AR_MAX_SIZE;
    opt->iterations = NCCL_AR_ITERS;
    opt->iterations_large = NCCL_AR_ITERS_LARGE;
    opt->skip = NCCL_AR_SKIP;
    opt->skip_large = NCCL_AR_SKIP_LARGE;
    opt->in_place = 0;
    opt->validate = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;

        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (print) {
                print_usage();
            }
            return 1;
        } else if (!strcmp(a, "-I") || !strcmp(a, "--in-place")) {
            opt->in_place = 1;
        } else if (!strcmp(a, "-c") || !strcmp(a, "--validation")) {
            opt->validate = 1;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--message-size")) {
            bad = parse_sizes(value, opt);
            i++;
        } else if (!strcmp(a, "-i") || !strcmp(a, "--iterations")) {
            bad = parse_int(value, 1, &opt->iterations);
            opt->iterations_large = opt->iterations;
            i++;
        } else if (!strcmp(a, "-x") || !strcmp(a, "--warmup")) {
            bad = parse_int(value, 0, &opt->skip);
            opt->skip_large = opt->skip;
            i++;
        } else {
            bad = 1;
        }
        if (bad) {
            if (print) {
                fprintf(stderr, "Invalid option or value [%s %s]\n\n", a,
                        value ? value : "");
                print_usage();
            }
            return -1;
        }
    }
    /* Whole floats only: round the minimum up to one element. */
    if (opt->min_size < sizeof(float)) {
        opt->min_size = sizeof(float);
    }
    if (opt->min_size > opt->max_size) {
        if (print) {
            fprintf(stderr, "Invalid Message Size [minimum %zu above maximum "
                            "%zu]\n", opt->min_size, opt->max_size);
        }
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

/* The launcher's node-local rank, or -1 (then MPI decides, below). */
static int local_rank_from_env(void)
{
    static const char *const names[] = {
        "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID", "SLURM_LOCALID", "AMPI_LOCAL_RANK",
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int v;
        if (parse_int(getenv(names[k]), 0, &v) == 0) {
            return v;
        }
    }
    return -1;
}

/* Node-local rank and size from MPI itself: NCCL needs one GPU per rank,
 * and two ranks on one GPU would fail inside ncclCommInitRank. */
static void local_rank_from_mpi(int *local_rank, int *local_size)
{
    MPI_Comm node;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
}

static void setup(struct nccl_ar_run *run)
{
    int local_rank, local_size, devices = 0;
    ncclUniqueId id;
    size_t bytes = run->opt.max_size;

    local_rank_from_mpi(&local_rank, &local_size);
    cuda_check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    if (devices < local_size) {
        char why[96];
        snprintf(why, sizeof why, "%d ranks on this node, %d GPUs",
                 local_size, devices);
        nccl_ar_die("one GPU per rank needed", why);
    }
    cuda_check(cudaSetDevice(local_rank), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&run->stream, cudaStreamNonBlocking),
               "cudaStreamCreate");

    if (run->rank == 0) {
        nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    }
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    nccl_check(ncclCommInitRank(&run->comm, run->nprocs, id, run->rank),
               "ncclCommInitRank");

    cuda_check(cudaMalloc((void **)&run->send, bytes), "cudaMalloc");
    run->recv = run->send;
    if (!run->opt.in_place) {
        cuda_check(cudaMalloc((void **)&run->recv, bytes), "cudaMalloc");
    }
    run->host = malloc(bytes);
    if (run->host == NULL) {
        nccl_ar_die("malloc", "out of memory");
    }
}

static void teardown(struct nccl_ar_run *run)
{
    nccl_check(ncclCommDestroy(run->comm), "ncclCommDestroy");
    if (run->recv != run->send) {
        cuda_check(cudaFree(run->recv), "cudaFree");
    }
    cuda_check(cudaFree(run->send), "cudaFree");
    cuda_check(cudaStreamDestroy(run->stream), "cudaStreamDestroy");
    free(run->host);
}

/* ------------------------------------------------------------------ */
/* One size                                                            */
/* ------------------------------------------------------------------ */

/* Small integers, different per rank and element, so float sums over
 * thousands of ranks stay exact and a misplaced element does not match. */
static float input_value(size_t i, int rank)
{
    return (float)(((uint32_t)i * 7u + (uint32_t)rank * 13u +
                    (uint32_t)i * (uint32_t)rank) % 1021u);
}

static void fill_inputs(struct nccl_ar_run *run, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        run->host[i] = input_value(i, run->rank);
    }
    cuda_check(cudaMemcpy(run->send, run->host, count * sizeof(float),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy to device");
    if (run->recv != run->send) {
        /* A result never written would keep this, not the sum. */
        cuda_check(cudaMemset(run->recv, 0xff, count * sizeof(float)),
                   "cudaMemset");
    }
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

static void allreduce_once(struct nccl_ar_run *run, size_t count)
{
    nccl_check(ncclAllReduce(run->send, run->recv, count, ncclFloat, ncclSum,
                             run->comm, run->stream),
               "ncclAllReduce");
    cuda_check(cudaStreamSynchronize(run->stream), "cudaStreamSynchronize");
}

/* Wrong elements of one fresh call, summed over ranks. */
static long validate(struct nccl_ar_run *run, size_t count)
{
    long mine = 0, total = 0;

    fill_inputs(run, count);
    MPI_Barrier(MPI_COMM_WORLD);
    allreduce_once(run, count);
    cuda_check(cudaMemcpy(run->host, run->recv, count * sizeof(float),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy to host");
    for (size_t i = 0; i < count; i++) {
        float want = 0.0f;
        for (int r = 0; r < run->nprocs; r++) {
            want += input_value(i, r);
        }
        mine += run->host[i] != want;
    }
    if (mine != 0) {
        fprintf(stderr, "[rank %d] nccl_allreduce: %ld wrong elements at "
                        "size %zu\n", run->rank, mine, count * sizeof(float));
    }
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* Returns the wrong elements found (0 without -c). */
static long one_size(struct nccl_ar_run *run, size_t size)
{
    const struct nccl_ar_options *opt = &run->opt;
    int large = size > NCCL_AR_LARGE_MESSAGE;
    int iterations = large ? opt->iterations_large : opt->iterations;
    int skip = large ? opt->skip_large : opt->skip;
    size_t count = size / sizeof(float);
    double timer = 0.0, mean_us, sum_us = 0.0;
    long errors = 0;

    fill_inputs(run, count);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iterations + skip; i++) {
        double t_start = MPI_Wtime();
        allreduce_once(run, count);
        double t_stop = MPI_Wtime();
        if (i >= skip) {
            timer += t_stop - t_start;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    mean_us = timer * 1e6 / iterations;
    MPI_Reduce(&mean_us, &sum_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (opt->validate) {
        errors = validate(run, count);
    }
    if (run->rank == 0) {
        double avg_us = sum_us / run->nprocs;
        /* Bytes actually reduced (whole floats), as nccl-tests counts. */
        double algbw = (double)(count * sizeof(float)) / (avg_us * 1e-6) / 1e9;
        double busbw = algbw * 2.0 * (run->nprocs - 1) / run->nprocs;
        printf("%-10zu%*.2f%*.2f", count * sizeof(float), NCCL_AR_FIELD_WIDTH,
               avg_us, NCCL_AR_FIELD_WIDTH + 4, busbw);
        if (opt->validate) {
            printf("%*s", NCCL_AR_FIELD_WIDTH, errors ? "Fail" : "Pass");
        }
        printf("\n");
        fflush(stdout);
    }
    return errors;
}

static void print_header(const struct nccl_ar_run *run)
{
    int version = 0;

    nccl_check(ncclGetVersion(&version), "ncclGetVersion");
    /* The library's own version (not the header's): X*10000 + Y*100 + Z
     * since 2.9, X*1000 + Y*100 + Z before. */
    int major = version >= 20900 ? version / 10000 : version / 1000;
    int rest = version >= 20900 ? version % 10000 : version % 1000;
    printf("# NCCL all-reduce reference (nccl_allreduce, OSU v7.4 layout), "
           "NCCL %d.%d.%d, %d ranks, %s\n",
           major, rest / 100, rest % 100, run->nprocs,
           run->opt.in_place ? "in place" : "out of place");
    printf("# Datatype: float, op: sum; busbw = algbw * 2(n-1)/n "
           "(nccl-tests), GB/s = 1e9 B/s.\n");
    printf("# Size       Avg Latency(us)   Bus Bandwidth(GB/s)");
    if (run->opt.validate) {
        printf("%*s", NCCL_AR_FIELD_WIDTH, "Validation");
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char *argv[])
{
    struct nccl_ar_run run;
    long errors = 0;
    int parsed, local_rank;

    memset(&run, 0, sizeof run);
    parsed = parse_options(argc, argv, &run.opt, 0);
    /* As OSU: pick the GPU before MPI_Init when the launcher says which
     * local rank this is, so a CUDA-aware MPI finds the context. */
    local_rank = local_rank_from_env();
    if (parsed == 0 && local_rank >= 0) {
        int devices = 0;
        if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
            (void)cudaSetDevice(local_rank % devices);
        }
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &run.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &run.nprocs);
    if (parsed != 0) {
        if (run.rank == 0) {
            parse_options(argc, argv, &run.opt, 1);
        }
        MPI_Finalize();
        return parsed > 0 ? 0 : 1;
    }
    if (run.nprocs < 2) {
        if (run.rank == 0) {
            fprintf(stderr, "This test requires at least two processes\n");
        }
        MPI_Finalize();
        return 1;
    }

    setup(&run);
    if (run.rank == 0) {
        print_header(&run);
    }
    for (size_t size = run.opt.min_size; size <= run.opt.max_size;
         size *= 2) {
        errors = one_size(&run, size);
        if (errors != 0) {
            break; /* as OSU: stop at the first size that fails */
        }
    }
    teardown(&run);
    MPI_Finalize();
    if (errors != 0) {
        if (run.rank == 0) {
            printf("DATA VALIDATION ERROR: nccl_allreduce found %ld wrong "
                   "elements\n", errors);
        }
        return 1;
    }
    return 0;
}
