/*
 * Shared pieces of the AMPI-UCX osu-style collective benchmarks
 * (osu_allreduce, osu_bcast, osu_reduce, osu_allgather, osu_alltoall,
 * osu_barrier): options, buffers (host or CUDA device), the timed sweep, the
 * -c validation and the output rows.
 *
 * Kept apart from osu_common.c on purpose: the point-to-point suite may only
 * rely on point-to-point and a barrier, the collective suite needs the
 * collectives anyway (it agrees on statuses and averages with them). What
 * both need alike (integer parsing, the launcher's local rank, GPU
 * selection, host/device buffers, the data pattern) lives once, in the
 * point-to-point side's osu_options.c and osu_device.c (osu_internal.h):
 * link those two with osu_coll.c and osu_coll_options.c.
 *
 * Follows OSU micro-benchmarks 7.x collective conventions (defaults, timing,
 * output layout); every line is written here. No mutable globals: under AMPI
 * several ranks are user-level threads of one process, so each rank's main()
 * owns its struct osu_coll_run.
 */
#ifndef OSU_COLL_H
#define OSU_COLL_H

#include <mpi.h>

#include <stddef.h>

#define OSU_COLL_CONVENTIONS_VERSION "7.4"

/* OSU 7.x collective rows are 18 wide per column (12 for iterations), to
 * line up with its literal "# Size       Avg Latency(us)" header; the
 * point-to-point suite's 20 would not. */
#define OSU_COLL_FIELD_WIDTH     18
#define OSU_COLL_FLOAT_PRECISION 2

/* OSU's collective defaults (COLL_LOOP_* / COLL_SKIP_*, MAX_MSG_SIZE_COLL). */
#define OSU_COLL_LARGE_MESSAGE_SIZE 8192
#define OSU_COLL_DEFAULT_MAX_SIZE   ((size_t)1 << 20)
#define OSU_COLL_ITERATIONS         1000
#define OSU_COLL_ITERATIONS_LARGE   100
#define OSU_COLL_SKIP               100
#define OSU_COLL_SKIP_LARGE         10

/* How large a buffer is, relative to the message size of a row. */
enum osu_coll_extent {
    OSU_COLL_NONE,     /* not used */
    OSU_COLL_ONE,      /* one message */
    OSU_COLL_PER_RANK, /* one message per rank of the communicator */
};

struct osu_coll_options {
    int use_cuda; /* -d cuda: both buffers in device memory */
    int full;     /* -f: min, max and iterations columns */
    int validate; /* -c: check the result after each size */
    size_t min_size, max_size;
    int iterations, iterations_large;
    int skip, skip_large;
};

struct osu_coll_benchmark;

/* Everything one rank's main() carries around. */
struct osu_coll_run {
    const struct osu_coll_benchmark *bench;
    struct osu_coll_options opt;
    int rank, nprocs;
};

/* Buffers of one rank for the whole sweep (allocated for max_size). */
struct osu_coll_buffers {
    int on_device;
    void *s_buf, *r_buf; /* r_buf is NULL when the benchmark has none */
};

/* The collective of one timed iteration, 'size' bytes per message. */
typedef void osu_coll_call_fn(const struct osu_coll_run *run,
                              const struct osu_coll_buffers *buf,
                              size_t size);
/* -c: writes this rank's input into a host image of s_buf (s_bytes). */
typedef void osu_coll_fill_fn(const struct osu_coll_run *run,
                              unsigned char *send, size_t size);
/* -c: counts wrong result elements in host copies of both buffers after
 * one call that started from the fill. */
typedef long osu_coll_check_fn(const struct osu_coll_run *run,
                               const unsigned char *send,
                               const unsigned char *recv, size_t size);

/* Static description of one program. */
struct osu_coll_benchmark {
    const char *program; /* e.g. "osu_allreduce" */
    const char *title;   /* e.g. "Allreduce Latency Test" */
    const char *datatype; /* printed in the "# Datatype:" line */
    size_t element;      /* bytes per element: sizes start at it */
    enum osu_coll_extent send, recv;
    int is_barrier;      /* no sizes, no -m / -c, one "Avg Latency" row */
    osu_coll_call_fn *call;
    osu_coll_fill_fn *fill;
    osu_coll_check_fn *check;
};

/*
 * The whole program: options, GPU selection, MPI_Init, header, then for
 * every size: fill, barrier, timed loop (a barrier after each iteration,
 * as OSU), rank averages by MPI_Reduce, -c validation, the row. Returns
 * main()'s exit status (1 on bad usage or failed validation).
 */
int osu_coll_main(const struct osu_coll_benchmark *bench, int argc,
                  char **argv);

/* Bytes of a buffer of the given extent for messages of 'size'. */
size_t osu_coll_bytes(const struct osu_coll_run *run,
                      enum osu_coll_extent extent, size_t size);

/* Byte i of the message that 'origin' sends at 'size' (a hash of all
 * three, so shifted, truncated, stale or misrouted data does not match). */
unsigned char osu_coll_pattern(size_t i, size_t size, int origin);
/* Element i of rank 'rank's reduction input: a small integer, so float
 * sums of up to thousands of ranks are exact. */
float osu_coll_reduce_input(size_t i, int rank);
/* Mismatches of a float-sum result against the sum over all ranks. */
long osu_coll_check_sum(const struct osu_coll_run *run, const void *result,
                        size_t size);

/* Aborts every rank after a message, for failures only one rank sees. */
void osu_coll_fail(const struct osu_coll_run *run, const char *what);

/* ---- osu_coll_options.c ---- */

enum osu_coll_status {
    OSU_COLL_OK = 0,
    OSU_COLL_HELP,
    OSU_COLL_VERSION,
    OSU_COLL_BAD_USAGE,
    OSU_COLL_DEVICE_FAILED,
};

/* Parses argv into opt (defaults first); on anything but OSU_COLL_OK
 * 'message' says why (for bad usage and missing CUDA support). */
enum osu_coll_status osu_coll_parse(const struct osu_coll_benchmark *bench,
                                    int argc, char **argv,
                                    struct osu_coll_options *opt,
                                    char *message, size_t message_size);
void osu_coll_print_usage(const struct osu_coll_benchmark *bench);

#endif /* OSU_COLL_H */
