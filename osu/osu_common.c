/*
 * Startup, shutdown, roles and output rows of the AMPI-UCX osu-style suite;
 * see osu_common.h. Options live in osu_options.c, buffers and GPU
 * selection in osu_device.c.
 */
#include "osu_internal.h"

#include <mpi.h>

#include <stdio.h>
#include <string.h>

/* Tags of the agreement messages; no benchmark message is in flight then. */
#define OSU_TAG_COMBINE_UP   900
#define OSU_TAG_COMBINE_DOWN 901

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

int osu_begin(struct osu_run *run, const struct osu_benchmark *bench,
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

int osu_end(struct osu_run *run, long validation_errors)
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

void osu_schedule(const struct osu_run *run, size_t size, int *iterations,
                  int *skip)
{
    int large = size > OSU_LARGE_MESSAGE_SIZE;
    *iterations = large ? run->opt.iterations_large : run->opt.iterations;
    *skip = large ? run->opt.skip_large : run->opt.skip;
}

size_t osu_next_size(size_t size)
{
    return size ? 2 * size : 1;
}
long osu_total_errors(const struct osu_run *run, long local_errors)
{
    (void)run;
    return osu_combine_over_ranks(local_errors, 0);
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
