/*
 * Startup, shutdown, roles, the per-size sweep, the shared exchanges and
 * output rows of the AMPI-UCX osu-style suite;
 * see osu_common.h. Options live in osu_options.c, buffers and GPU
 * selection in osu_device.c.
 */
#include "osu_internal.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags of the agreement messages; no benchmark message is in flight then. */
#define OSU_TAG_COMBINE_UP   900
#define OSU_TAG_COMBINE_DOWN 901

/* Returned by osu_begin() when the benchmark should go on. */
#define OSU_CONTINUE (-1)

/*
 * Sum (or maximum) of one value per rank, handed back to every rank. Built
 * from point-to-point calls alone, so that a point-to-point suite runs on an
 * MPI library that has no collectives yet. Used outside timed loops only.
 */
static long osu_combine_over_ranks(long mine, int take_maximum)
{
    int rank, nprocs;
    long result = mine;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (rank != 0) {
        MPI_Send(&mine, 1, MPI_LONG, 0, OSU_TAG_COMBINE_UP, MPI_COMM_WORLD);
        MPI_Recv(&result, 1, MPI_LONG, 0, OSU_TAG_COMBINE_DOWN,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return result;
    }
    for (int peer = 1; peer < nprocs; peer++) {
        long value;
        MPI_Recv(&value, 1, MPI_LONG, peer, OSU_TAG_COMBINE_UP,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (take_maximum) {
            result = value > result ? value : result;
        } else {
            result += value;
        }
    }
    for (int peer = 1; peer < nprocs; peer++) {
        MPI_Send(&result, 1, MPI_LONG, peer, OSU_TAG_COMBINE_DOWN,
                 MPI_COMM_WORLD);
    }
    return result;
}

/* ------------------------------------------------------------------ */
/* Startup and shutdown                                                */
/* ------------------------------------------------------------------ */

static void osu_print_header(const struct osu_run *run)
{
    const struct osu_benchmark *bench = run->bench;
    const struct osu_options *opt = &run->opt;

    printf("# AMPI-UCX osu-style MPI%s %s (%s, OSU v%s conventions)\n",
           opt->use_cuda ? "-CUDA" : "", bench->title, bench->program,
           OSU_CONVENTIONS_VERSION);
    if (opt->use_cuda) {
        printf("# Send Buffer on %s and Receive Buffer on %s\n",
               opt->src == 'D' ? "DEVICE (D)" : "HOST (H)",
               opt->dst == 'D' ? "DEVICE (D)" : "HOST (H)");
    }
    if (bench->kind == OSU_KIND_MESSAGE_RATE) {
        printf("# [ pairs: %d ] [ window size: %d ]\n", run->pairs,
               opt->window);
        printf("%-*s%*s", 10, "# Size", OSU_FIELD_WIDTH, "MB/s");
        if (opt->print_rate) {
            printf("%*s", OSU_FIELD_WIDTH, "Messages/s");
        }
    } else {
        printf("%-*s%*s", 10, "# Size", OSU_FIELD_WIDTH, bench->column);
    }
    if (opt->validate) {
        printf("%*s", OSU_FIELD_WIDTH, "Validation");
    }
    printf("\n# Datatype: MPI_CHAR.\n");
    fflush(stdout);
}

/* Prints what the agreed status calls for; returns main()'s exit status,
 * or OSU_CONTINUE. */
static int osu_report_status(const struct osu_run *run, int agreed,
                             const struct osu_parse *mine)
{
    if (mine->status == OSU_STATUS_DEVICE_FAILED) {
        fprintf(stderr, "[rank %d] %s\n", run->rank, mine->message);
    }
    if (run->rank == 0) {
        switch (agreed) {
        case OSU_STATUS_HELP:
            osu_print_usage(run->bench);
            break;
        case OSU_STATUS_VERSION:
            printf("# AMPI-UCX osu-style MPI %s (%s, OSU v%s conventions)\n",
                   run->bench->title, run->bench->program,
                   OSU_CONVENTIONS_VERSION);
            break;
        case OSU_STATUS_NO_CUDA:
            fprintf(stderr, "%s\n", mine->message);
            break;
        case OSU_STATUS_BAD_USAGE:
            fprintf(stderr, "%s\n\n", mine->message);
            fflush(stderr);
            osu_print_usage(run->bench);
            break;
        default:
            break;
        }
        fflush(stdout);
        fflush(stderr);
    }
    switch (agreed) {
    case OSU_STATUS_OK:
        return OSU_CONTINUE;
    case OSU_STATUS_HELP:
    case OSU_STATUS_VERSION:
        return 0;
    default:
        return 1;
    }
}

/* Sets run->pairs; returns 0, or 1 after rank 0 explained the problem. */
static int osu_check_process_count(struct osu_run *run)
{
    const char *problem = NULL;

    if (!run->bench->multi_pair) {
        run->pairs = 1;
        if (run->nprocs != 2) {
            problem = "This test requires exactly two processes";
        }
    } else {
        run->pairs = run->opt.pairs ? run->opt.pairs : run->nprocs / 2;
        if (run->nprocs < 2) {
            problem = "This test requires at least two processes";
        } else if (run->pairs > run->nprocs / 2) {
            problem = "Invalid Number of Pairs: more than processes / 2";
        }
    }
    if (problem != NULL && run->rank == 0) {
        fprintf(stderr, "%s\n", problem);
        fflush(stderr);
    }
    return problem != NULL;
}

/*
 * Parses options, selects the GPU before MPI_Init as OSU does, calls
 * MPI_Init, checks the process count and prints the header on rank 0.
 * Returns OSU_CONTINUE, or the exit status main() must return (MPI is then
 * already finalized: -h, bad usage, no CUDA support, wrong process count).
 */
static int osu_begin(struct osu_run *run, const struct osu_benchmark *bench,
                     int *argc, char ***argv)
{
    struct osu_parse parse;
    int agreed, exit_status, local_rank;

    memset(run, 0, sizeof *run);
    run->bench = bench;
    osu_parse_options(bench, *argc, *argv, &run->opt, &parse);

    /* OSU selects the GPU before MPI_Init, from the launcher's local rank.
     * (use_cuda is only ever set in builds with -DOSU_CUDA.) */
    local_rank = osu_local_rank_from_env();
    if (parse.status == OSU_STATUS_OK && run->opt.use_cuda &&
        local_rank >= 0) {
        osu_select_device(local_rank, &parse);
    }

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &run->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &run->nprocs);

    /* No launcher variable: fall back to world rank modulo device count. */
    if (parse.status == OSU_STATUS_OK && run->opt.use_cuda &&
        local_rank < 0) {
        osu_select_device(run->rank, &parse);
    }

    /* Options are the same everywhere but a device may fail on one rank
     * only: agree on the worst status so every rank takes the same path. */
    agreed = (int)osu_combine_over_ranks((long)parse.status, 1);
    exit_status = osu_report_status(run, agreed, &parse);
    if (exit_status == OSU_CONTINUE && osu_check_process_count(run)) {
        exit_status = 1;
    }
    if (exit_status != OSU_CONTINUE) {
        MPI_Finalize();
        return exit_status;
    }
    if (run->rank == 0) {
        osu_print_header(run);
    }
    return OSU_CONTINUE;
}

/* Finalizes MPI; returns main()'s exit status (1 if validation failed). */
static int osu_end(const struct osu_run *run, long validation_errors)
{
    MPI_Finalize();
    if (validation_errors != 0) {
        if (run->rank == 0) {
            printf("DATA VALIDATION ERROR: %s found %ld wrong bytes\n",
                   run->bench->program, validation_errors);
            fflush(stdout);
        }
        return 1;
    }
    return 0;
}

void osu_fail(const struct osu_run *run, const char *what)
{
    fprintf(stderr, "[rank %d] %s: %s failed\n", run->rank,
            run->bench->program, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ------------------------------------------------------------------ */
/* Roles and schedule                                                  */
/* ------------------------------------------------------------------ */

int osu_partner(const struct osu_run *run)
{
    if (!run->bench->multi_pair) {
        return run->rank == 0 ? 1 : 0;
    }
    if (run->rank < run->pairs) {
        return run->rank + run->pairs;
    }
    if (run->rank < 2 * run->pairs) {
        return run->rank - run->pairs;
    }
    return -1;
}

int osu_is_initiator(const struct osu_run *run)
{
    return run->bench->multi_pair ? run->rank < run->pairs : run->rank == 0;
}

char osu_placement(const struct osu_run *run)
{
    return osu_is_initiator(run) ? run->opt.src : run->opt.dst;
}

/* Iterations and warmup count for one message size (OSU's large rule). */
static void osu_schedule(const struct osu_run *run, size_t size,
                         int *iterations, int *skip)
{
    int large = size > OSU_LARGE_MESSAGE_SIZE;
    *iterations = large ? run->opt.iterations_large : run->opt.iterations;
    *skip = large ? run->opt.skip_large : run->opt.skip;
}

/* Next size of the sweep: 0, 1, 2, 4, ... */
static size_t osu_next_size(size_t size)
{
    return size ? 2 * size : 1;
}

/* ------------------------------------------------------------------ */
/* The sweep over message sizes                                        */
/* ------------------------------------------------------------------ */

/* Aborts (through osu_fail) when any buffer cannot be had. */
static void osu_buffers_alloc(const struct osu_run *run,
                              struct osu_buffers *buf)
{
    size_t window = (size_t)run->opt.window;

    memset(buf, 0, sizeof *buf);
    buf->where = osu_placement(run);
    buf->s_buf = osu_buffer_alloc(buf->where, run->opt.max_size);
    buf->r_buf = osu_buffer_alloc(buf->where, run->opt.max_size);
    if (run->bench->kind != OSU_KIND_LATENCY) {
        buf->sends = malloc(sizeof *buf->sends * window);
        buf->recvs = malloc(sizeof *buf->recvs * window);
    }
    if (buf->s_buf == NULL || buf->r_buf == NULL ||
        (run->bench->kind != OSU_KIND_LATENCY &&
         (buf->sends == NULL || buf->recvs == NULL))) {
        osu_fail(run, "buffer allocation");
    }
}

static void osu_buffers_free(struct osu_buffers *buf)
{
    free(buf->sends);
    free(buf->recvs);
    osu_buffer_free(buf->where, buf->s_buf);
    osu_buffer_free(buf->where, buf->r_buf);
}

/* Wrong bytes received for one size, summed over all ranks. */
static long osu_validate(const struct osu_run *run,
                         const struct osu_buffers *buf, size_t size)
{
    int partner = osu_partner(run);
    long mine = 0;

    /* A rank left out of every pair received nothing; under
     * receivers_validate neither did an initiator (acknowledgements only). */
    if (partner >= 0 &&
        !(run->bench->receivers_validate && osu_is_initiator(run))) {
        mine = osu_buffer_mismatches(buf->where, buf->r_buf, size, partner);
    }
    return osu_combine_over_ranks(mine, 0);
}

/* All sizes of the sweep; returns the wrong bytes found under -c. */
static long osu_sweep(const struct osu_run *run)
{
    const struct osu_benchmark *bench = run->bench;
    struct osu_buffers buf;
    long errors = 0;

    osu_buffers_alloc(run, &buf);
    for (size_t size = run->opt.min_size; size <= run->opt.max_size;
         size = osu_next_size(size)) {
        int iterations, skip;
        long size_errors = 0;
        double seconds;

        osu_schedule(run, size, &iterations, &skip);
        osu_buffer_fill_pattern(buf.where, buf.s_buf, size, run->rank);
        osu_buffer_set(buf.where, buf.r_buf, 'b', size);
        if (!bench->exchange_synchronizes) {
            MPI_Barrier(MPI_COMM_WORLD);
        }

        seconds = bench->exchange(run, &buf, (int)size, iterations, skip);
        if (run->opt.validate) {
            size_errors = osu_validate(run, &buf, size);
        }
        bench->report(run, size, iterations, seconds, size_errors);
        errors += size_errors;
        if (size_errors != 0) {
            break; /* OSU stops the sweep at the first failing size */
        }
    }
    osu_buffers_free(&buf);
    return errors;
}

int osu_main(const struct osu_benchmark *bench, int argc, char **argv)
{
    struct osu_run run;
    int status = osu_begin(&run, bench, &argc, &argv);

    if (status != OSU_CONTINUE) {
        return status;
    }
    return osu_end(&run, osu_sweep(&run));
}

/* ------------------------------------------------------------------ */
/* Exchanges shared by several programs                                */
/* ------------------------------------------------------------------ */

/* Multi-pair programs start every round with a barrier, so that all pairs
 * contend together; returns whether this rank takes part in the round. */
static int osu_round_begins(const struct osu_run *run, int peer)
{
    if (!run->bench->multi_pair) {
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return peer >= 0; /* odd rank out: only keeps the barriers company */
}

/* One message of a ping-pong: a blocking call, or a persistent request
 * started and waited for when there is one. Inlined into the loop below. */
static void osu_ping_pong_leg(int sending, MPI_Request *persistent,
                              char *buf, int count, int peer)
{
    if (persistent != NULL) {
        MPI_Start(persistent);
        MPI_Wait(persistent, MPI_STATUS_IGNORE);
    } else if (sending) {
        MPI_Send(buf, count, MPI_CHAR, peer, OSU_TAG_DATA, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, count, MPI_CHAR, peer, OSU_TAG_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
}

/* Mean round-trip seconds of this rank's timed exchanges (0 if none);
 * send/recv are persistent requests, or NULL for MPI_Send/MPI_Recv. */
static double osu_ping_pong_rounds(const struct osu_run *run, char *s_buf,
                                   char *r_buf, int count, int iterations,
                                   int skip, MPI_Request *send,
                                   MPI_Request *recv)
{
    int peer = osu_partner(run);
    double total = 0.0;

    for (int i = 0; i < iterations + skip; i++) {
        if (!osu_round_begins(run, peer)) {
            continue;
        }
        if (osu_is_initiator(run)) {
            double start = MPI_Wtime();
            osu_ping_pong_leg(1, send, s_buf, count, peer);
            osu_ping_pong_leg(0, recv, r_buf, count, peer);
            if (i >= skip) {
                total += MPI_Wtime() - start;
            }
        } else {
            osu_ping_pong_leg(0, recv, r_buf, count, peer);
            osu_ping_pong_leg(1, send, s_buf, count, peer);
        }
    }
    return total / iterations;
}

double osu_ping_pong(const struct osu_run *run, const struct osu_buffers *buf,
                     int count, int iterations, int skip)
{
    return osu_ping_pong_rounds(run, buf->s_buf, buf->r_buf, count,
                                iterations, skip, NULL, NULL);
}

double osu_ping_pong_persistent(const struct osu_run *run, MPI_Request *send,
                                MPI_Request *recv, int iterations, int skip)
{
    return osu_ping_pong_rounds(run, NULL, NULL, 0, iterations, skip, send,
                                recv);
}

void osu_isend_window(const struct osu_run *run, const char *buf, int count,
                      int peer, int tag, MPI_Request *requests)
{
    for (int j = 0; j < run->opt.window; j++) {
        MPI_Isend(buf, count, MPI_CHAR, peer, tag, MPI_COMM_WORLD,
                  &requests[j]);
    }
}

void osu_irecv_window(const struct osu_run *run, char *buf, int count,
                      int peer, int tag, MPI_Request *requests)
{
    for (int j = 0; j < run->opt.window; j++) {
        MPI_Irecv(buf, count, MPI_CHAR, peer, tag, MPI_COMM_WORLD,
                  &requests[j]);
    }
}

double osu_stream_windows(const struct osu_run *run,
                          const struct osu_buffers *buf, int count,
                          int iterations, int skip)
{
    int peer = osu_partner(run);
    int window = run->opt.window;
    double total = 0.0;

    for (int i = 0; i < iterations + skip; i++) {
        if (!osu_round_begins(run, peer)) {
            continue;
        }
        if (osu_is_initiator(run)) {
            double start = MPI_Wtime();
            osu_isend_window(run, buf->s_buf, count, peer, OSU_TAG_BW_DATA,
                             buf->sends);
            MPI_Waitall(window, buf->sends, MPI_STATUSES_IGNORE);
            MPI_Recv(buf->r_buf, 4, MPI_CHAR, peer, OSU_TAG_BW_ACK,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= skip) {
                total += MPI_Wtime() - start;
            }
        } else {
            osu_irecv_window(run, buf->r_buf, count, peer, OSU_TAG_BW_DATA,
                             buf->recvs);
            MPI_Waitall(window, buf->recvs, MPI_STATUSES_IGNORE);
            MPI_Send(buf->s_buf, 4, MPI_CHAR, peer, OSU_TAG_BW_ACK,
                     MPI_COMM_WORLD);
        }
    }
    return total;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                */
/* ------------------------------------------------------------------ */

static void osu_finish_row(const struct osu_run *run, long errors)
{
    if (run->opt.validate) {
        printf("%*s", OSU_FIELD_WIDTH, errors ? "Fail" : "Pass");
    }
    printf("\n");
    fflush(stdout);
}

void osu_print_row(const struct osu_run *run, size_t size, double value,
                   long errors)
{
    if (run->rank != 0) {
        return;
    }
    printf("%-*zu%*.*f", 10, size, OSU_FIELD_WIDTH, OSU_FLOAT_PRECISION,
           value);
    osu_finish_row(run, errors);
}

void osu_report_latency(const struct osu_run *run, size_t size,
                        int iterations, double round_trip, long errors)
{
    (void)iterations; /* round_trip is already a mean */
    osu_print_row(run, size, round_trip * 1e6 / 2.0, errors);
}

void osu_print_rate_row(const struct osu_run *run, size_t size, double mbps,
                        double rate, long errors)
{
    if (run->rank != 0) {
        return;
    }
    printf("%-*zu%*.*f", 10, size, OSU_FIELD_WIDTH, OSU_FLOAT_PRECISION, mbps);
    if (run->opt.print_rate) {
        printf("%*.*f", OSU_FIELD_WIDTH, OSU_FLOAT_PRECISION, rate);
    }
    osu_finish_row(run, errors);
}
