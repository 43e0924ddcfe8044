/*
 * The sweep of the osu-style collective benchmarks: startup, buffers, the
 * timed loop as OSU 7.x times it, the -c validation and the rows.
 */
#define _POSIX_C_SOURCE 200809L

#include "osu_coll.h"
#include "osu_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Buffers: the point-to-point suite's (osu_device.c), by placement    */
/* ------------------------------------------------------------------ */

void osu_coll_fail(const struct osu_coll_run *run, const char *what)
{
    fprintf(stderr, "[rank %d] %s: %s failed\n", run->rank,
            run->bench->program, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* osu_device.c's placement letter: 'D' under -d cuda, else 'H'. */
static char osu_coll_placement(const struct osu_coll_run *run)
{
    return run->opt.use_cuda ? 'D' : 'H';
}

size_t osu_coll_bytes(const struct osu_coll_run *run,
                      enum osu_coll_extent extent, size_t size)
{
    switch (extent) {
    case OSU_COLL_ONE:
        return size;
    case OSU_COLL_PER_RANK:
        return size * (size_t)run->nprocs;
    default:
        return 0;
    }
}

/* NULL for an extent of none (a benchmark without r_buf keeps it NULL). */
static void *osu_coll_alloc(const struct osu_coll_run *run, size_t bytes)
{
    void *buf;

    if (bytes == 0) {
        return NULL;
    }
    buf = osu_buffer_alloc(osu_coll_placement(run), bytes);
    if (buf == NULL) {
        osu_coll_fail(run, "buffer allocation");
    }
    return buf;
}

/* ------------------------------------------------------------------ */
/* Data the benchmarks send and expect                                 */
/* ------------------------------------------------------------------ */

unsigned char osu_coll_pattern(size_t i, size_t size, int origin)
{
    return osu_pattern_byte(i, size, origin);
}

float osu_coll_reduce_input(size_t i, int rank)
{
    /* Below 1021 per rank: sums stay exact integers in a float for up to
     * 16000 ranks, and every rank's term depends on its rank. */
    return (float)(((uint32_t)i * 7u + (uint32_t)rank * 13u +
                    (uint32_t)i * (uint32_t)rank) % 1021u);
}

long osu_coll_check_sum(const struct osu_coll_run *run, const void *result,
                        size_t size)
{
    const unsigned char *bytes = result;
    long wrong = 0;

    for (size_t i = 0; i < size / sizeof(float); i++) {
        float got, want = 0.0f;
        memcpy(&got, bytes + i * sizeof(float), sizeof got);
        for (int r = 0; r < run->nprocs; r++) {
            want += osu_coll_reduce_input(i, r);
        }
        wrong += got != want;
    }
    return wrong;
}

/* ------------------------------------------------------------------ */
/* Startup                                                             */
/* ------------------------------------------------------------------ */

static void osu_coll_print_header(const struct osu_coll_run *run)
{
    const struct osu_coll_options *opt = &run->opt;

    printf("# AMPI-UCX osu-style MPI%s %s (%s, OSU v%s conventions)\n",
           opt->use_cuda ? "-CUDA" : "", run->bench->title,
           run->bench->program, OSU_COLL_CONVENTIONS_VERSION);
    if (opt->use_cuda) {
        printf("# Buffers on DEVICE (D)\n");
    }
    if (run->bench->is_barrier) {
        printf("# Avg Latency(us)");
    } else {
        printf("# Datatype: %s.\n", run->bench->datatype);
        printf("# Size       Avg Latency(us)");
    }
    if (opt->full) {
        printf("   Min Latency(us)   Max Latency(us)  Iterations");
    }
    if (opt->validate) {
        printf("%*s", OSU_COLL_FIELD_WIDTH, "Validation");
    }
    printf("\n");
    fflush(stdout);
}

/* osu_device.c's GPU selection, its outcome in this suite's terms (a
 * missing -DOSU_CUDA cannot get here: -d cuda is refused without it). */
static enum osu_coll_status osu_coll_select_device(int hint, char *message,
                                                   size_t message_size)
{
    struct osu_parse res = {OSU_STATUS_OK, ""};

    osu_select_device(hint, &res);
    if (res.status == OSU_STATUS_OK) {
        return OSU_COLL_OK;
    }
    snprintf(message, message_size, "%s", res.message);
    return OSU_COLL_DEVICE_FAILED;
}

/* Parses, picks the GPU (before MPI_Init, as OSU), initializes MPI and
 * agrees on one status; returns -1 to go on, else main()'s exit status
 * (MPI then finalized). */
static int osu_coll_begin(struct osu_coll_run *run,
                          const struct osu_coll_benchmark *bench, int *argc,
                          char ***argv)
{
    char message[256];
    enum osu_coll_status status;
    int mine, agreed, local_rank;

    memset(run, 0, sizeof *run);
    run->bench = bench;
    status = osu_coll_parse(bench, *argc, *argv, &run->opt, message,
                            sizeof message);
    local_rank = osu_local_rank_from_env();
    if (status == OSU_COLL_OK && run->opt.use_cuda && local_rank >= 0) {
        status = osu_coll_select_device(local_rank, message, sizeof message);
    }

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &run->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &run->nprocs);

    /* No launcher variable: world rank modulo device count. */
    if (status == OSU_COLL_OK && run->opt.use_cuda && local_rank < 0) {
        status = osu_coll_select_device(run->rank, message, sizeof message);
    }
    if (status == OSU_COLL_DEVICE_FAILED) {
        fprintf(stderr, "[rank %d] %s\n", run->rank, message);
    }
    /* A device may fail on one rank only: all take the worst path. */
    mine = (int)status;
    MPI_Allreduce(&mine, &agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (agreed == OSU_COLL_OK && run->nprocs < 2) {
        if (run->rank == 0) {
            fprintf(stderr, "This test requires at least two processes\n");
        }
        agreed = OSU_COLL_BAD_USAGE;
    } else if (run->rank == 0) {
        if (agreed == OSU_COLL_HELP) {
            osu_coll_print_usage(bench);
        } else if (agreed == OSU_COLL_VERSION) {
            printf("# AMPI-UCX osu-style MPI %s (%s, OSU v%s conventions)\n",
                   bench->title, bench->program,
                   OSU_COLL_CONVENTIONS_VERSION);
        } else if (agreed == OSU_COLL_BAD_USAGE) {
            fprintf(stderr, "%s\n\n", message);
            fflush(stderr);
            osu_coll_print_usage(bench);
        }
    }
    fflush(stdout);
    fflush(stderr);
    if (agreed != OSU_COLL_OK) {
        MPI_Finalize();
        return agreed == OSU_COLL_HELP || agreed == OSU_COLL_VERSION ? 0 : 1;
    }
    if (run->rank == 0) {
        osu_coll_print_header(run);
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* One size                                                            */
/* ------------------------------------------------------------------ */

/* Sets both buffers for a call of 'size': s_buf to the benchmark's input
 * (or 'a' bytes without a fill), r_buf to 'b' bytes (as OSU). */
static void osu_coll_prepare(const struct osu_coll_run *run,
                             const struct osu_coll_buffers *buf, size_t size,
                             unsigned char *image_s, unsigned char *image_r)
{
    const struct osu_coll_benchmark *bench = run->bench;
    size_t s_bytes = osu_coll_bytes(run, bench->send, size);
    size_t r_bytes = osu_coll_bytes(run, bench->recv, size);

    memset(image_s, 'a', s_bytes);
    bench->fill(run, image_s, size);
    osu_buffer_upload(osu_coll_placement(run), buf->s_buf, image_s, s_bytes);
    memset(image_r, 'b', r_bytes);
    osu_buffer_upload(osu_coll_placement(run), buf->r_buf, image_r, r_bytes);
}

/* One untimed call from fresh inputs; wrong elements summed over ranks
 * (every rank learns the total, so all stop together on a failure). */
static long osu_coll_validate(const struct osu_coll_run *run,
                              const struct osu_coll_buffers *buf,
                              size_t size, unsigned char *image_s,
                              unsigned char *image_r)
{
    const struct osu_coll_benchmark *bench = run->bench;
    long mine, total = 0;

    osu_coll_prepare(run, buf, size, image_s, image_r);
    MPI_Barrier(MPI_COMM_WORLD);
    bench->call(run, buf, size);
    osu_buffer_download(osu_coll_placement(run), image_s, buf->s_buf,
                        osu_coll_bytes(run, bench->send, size));
    osu_buffer_download(osu_coll_placement(run), image_r, buf->r_buf,
                        osu_coll_bytes(run, bench->recv, size));
    mine = bench->check(run, image_s, image_r, size);
    if (mine != 0) {
        fprintf(stderr, "[rank %d] %s: %ld wrong elements at size %zu\n",
                run->rank, bench->program, mine, size);
    }
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* OSU 7.x timing: each iteration timed alone (a barrier between them so
 * the next starts together), warmup not timed. Returns this rank's mean
 * latency in us. */
static double osu_coll_time(const struct osu_coll_run *run,
                            const struct osu_coll_buffers *buf, size_t size,
                            int iterations, int skip)
{
    double timer = 0.0;

    for (int i = 0; i < iterations + skip; i++) {
        double t_start = MPI_Wtime();
        run->bench->call(run, buf, size);
        double t_stop = MPI_Wtime();
        if (i >= skip) {
            timer += t_stop - t_start;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return timer * 1e6 / iterations;
}

static void osu_coll_print_row(const struct osu_coll_run *run, size_t size,
                               const double stats[3], int iterations,
                               long errors)
{
    if (run->bench->is_barrier) {
        /* OSU prints the lone value in the width of "# Avg Latency(us)". */
        printf("%*.*f", 17, OSU_COLL_FLOAT_PRECISION, stats[0]);
    } else {
        printf("%-*zu%*.*f", 10, size, OSU_COLL_FIELD_WIDTH,
               OSU_COLL_FLOAT_PRECISION, stats[0]);
    }
    if (run->opt.full) {
        printf("%*.*f%*.*f%*d", OSU_COLL_FIELD_WIDTH,
               OSU_COLL_FLOAT_PRECISION, stats[1], OSU_COLL_FIELD_WIDTH,
               OSU_COLL_FLOAT_PRECISION, stats[2], 12, iterations);
    }
    if (run->opt.validate) {
        printf("%*s", OSU_COLL_FIELD_WIDTH, errors ? "Fail" : "Pass");
    }
    printf("\n");
    fflush(stdout);
}

/* Times one size, averages over ranks on rank 0 (MPI_Reduce, as OSU),
 * validates under -c and prints; returns the wrong elements found. */
static long osu_coll_one_size(const struct osu_coll_run *run,
                              const struct osu_coll_buffers *buf, size_t size,
                              unsigned char *image_s, unsigned char *image_r)
{
    const struct osu_coll_options *opt = &run->opt;
    int large = size > OSU_COLL_LARGE_MESSAGE_SIZE;
    int iterations = large ? opt->iterations_large : opt->iterations;
    int skip = large ? opt->skip_large : opt->skip;
    double latency, stats[3] = {0.0, 0.0, 0.0}; /* avg, min, max */
    long errors = 0;

    if (!run->bench->is_barrier) {
        osu_coll_prepare(run, buf, size, image_s, image_r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    latency = osu_coll_time(run, buf, size, iterations, skip);
    MPI_Reduce(&latency, &stats[1], 1, MPI_DOUBLE, MPI_MIN, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&latency, &stats[2], 1, MPI_DOUBLE, MPI_MAX, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&latency, &stats[0], 1, MPI_DOUBLE, MPI_SUM, 0,
               MPI_COMM_WORLD);
    stats[0] /= run->nprocs;
    if (opt->validate) {
        errors = osu_coll_validate(run, buf, size, image_s, image_r);
    }
    if (run->rank == 0) {
        osu_coll_print_row(run, size, stats, iterations, errors);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return errors;
}

/* ------------------------------------------------------------------ */
/* The program                                                         */
/* ------------------------------------------------------------------ */

int osu_coll_main(const struct osu_coll_benchmark *bench, int argc,
                  char **argv)
{
    struct osu_coll_run run;
    struct osu_coll_buffers buf = {0, NULL, NULL};
    unsigned char *image_s = NULL, *image_r = NULL;
    long errors = 0;
    int status = osu_coll_begin(&run, bench, &argc, &argv);

    if (status >= 0) {
        return status;
    }
    if (bench->is_barrier) {
        osu_coll_one_size(&run, &buf, 0, NULL, NULL);
        MPI_Finalize();
        return 0;
    }

    size_t s_max = osu_coll_bytes(&run, bench->send, run.opt.max_size);
    size_t r_max = osu_coll_bytes(&run, bench->recv, run.opt.max_size);
    buf.on_device = run.opt.use_cuda;
    buf.s_buf = osu_coll_alloc(&run, s_max);
    buf.r_buf = osu_coll_alloc(&run, r_max);
    /* Host images for filling and checking; never fewer than one byte so
     * that malloc(0) returning NULL is no failure. */
    image_s = malloc(s_max + 1);
    image_r = malloc(r_max + 1);
    if (image_s == NULL || image_r == NULL) {
        osu_coll_fail(&run, "malloc");
    }

    for (size_t size = run.opt.min_size; size <= run.opt.max_size;
         size *= 2) {
        errors = osu_coll_one_size(&run, &buf, size, image_s, image_r);
        if (errors != 0) {
            break; /* as OSU: stop at the first size that fails */
        }
    }

    free(image_s);
    free(image_r);
    osu_buffer_free(osu_coll_placement(&run), buf.s_buf);
    osu_buffer_free(osu_coll_placement(&run), buf.r_buf);
    MPI_Finalize();
    if (errors != 0) {
        if (run.rank == 0) {
            printf("DATA VALIDATION ERROR: %s found %ld wrong elements\n",
                   bench->program, errors);
            fflush(stdout);
        }
        return 1;
    }
    return 0;
}
