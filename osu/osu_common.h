/*
 * Shared pieces of the AMPI-UCX osu-style point-to-point suite: option
 * parsing, buffer placement (host or CUDA device), header and row printing.
 *
 * The suite follows the conventions of the OSU micro-benchmarks 7.x (options,
 * defaults, timing method, output layout) so its numbers compare 1:1 with
 * OSU's own binaries, but every line is written here.
 *
 * No mutable globals anywhere: under AMPI several MPI ranks are user-level
 * threads of one process, so all state lives in a struct osu_run owned by each
 * rank's main().
 */
#ifndef OSU_COMMON_H
#define OSU_COMMON_H

#include <stddef.h>

/* OSU release whose conventions (defaults, output layout) we follow. */
#define OSU_CONVENTIONS_VERSION "7.4"

#define OSU_FIELD_WIDTH     20
#define OSU_FLOAT_PRECISION 2

/* Messages larger than this use the "large" iteration and warmup counts. */
#define OSU_LARGE_MESSAGE_SIZE 8192
#define OSU_DEFAULT_MAX_SIZE   ((size_t)1 << 22)
#define OSU_DEFAULT_WINDOW     64

/* Tags as OSU uses them, so traces of both suites look alike. */
#define OSU_TAG_DATA      1
#define OSU_TAG_BW_DATA   100
#define OSU_TAG_BW_ACK    101
#define OSU_TAG_BIBW_BACK 10

/* What is measured decides the defaults (OSU's LAT vs BW subtypes). */
enum osu_kind {
    OSU_KIND_LATENCY,   /* min size 0, 10000/1000 iterations */
    OSU_KIND_BANDWIDTH, /* min size 1, 100/20 iterations, -W window */
    OSU_KIND_MESSAGE_RATE, /* as bandwidth, plus -p pairs and -R rate */
};

/* Static description of one program of the suite. */
struct osu_benchmark {
    const char *program; /* e.g. "osu_latency" */
    const char *title;   /* e.g. "Latency Test" */
    const char *column;  /* e.g. "Latency (us)"; unused for message rate */
    enum osu_kind kind;
    int multi_pair;      /* ranks [0,pairs) talk to [pairs,2*pairs) */
};

struct osu_options {
    int use_cuda;        /* -d cuda, or a 'D' placement */
    char src, dst;       /* placement letters: 'H' host, 'D' device */
    size_t min_size, max_size;
    int iterations, iterations_large;
    int skip, skip_large;
    int window;          /* -W, bandwidth kinds only */
    int pairs;           /* -p, message rate only; 0 means nprocs/2 */
    int print_rate;      /* -R 0|1, message rate only */
    int validate;        /* -c: check received bytes after each size */
};

/* Everything one rank's main() carries around. */
struct osu_run {
    const struct osu_benchmark *bench;
    struct osu_options opt;
    int rank, nprocs;
    int pairs;           /* communicating pairs; 1 for two-rank tests */
};

/* Sentinel returned by osu_begin() when the benchmark should go on. */
#define OSU_CONTINUE (-1)

/*
 * Parses options, selects the GPU before MPI_Init as OSU does, calls
 * MPI_Init, checks the process count and prints the header on rank 0.
 * Returns OSU_CONTINUE, or the exit status main() must return (MPI is then
 * already finalized: -h, bad usage, no CUDA support, wrong process count).
 */
int osu_begin(struct osu_run *run, const struct osu_benchmark *bench,
              int *argc, char ***argv);

/* Finalizes MPI; returns main()'s exit status (1 if validation failed). */
int osu_end(struct osu_run *run, long validation_errors);

/* Partner rank of this rank, or -1 for a rank left out of every pair. */
int osu_partner(const struct osu_run *run);
/* Whether this rank starts the exchange (rank 0, or the first half). */
int osu_is_initiator(const struct osu_run *run);
/* 'H' or 'D': where this rank's buffers live (SRC for initiators). */
char osu_placement(const struct osu_run *run);

/* Iterations and warmup count for one message size (OSU's large rule). */
void osu_schedule(const struct osu_run *run, size_t size, int *iterations,
                  int *skip);
/* Next size of the sweep: 0, 1, 2, 4, ... */
size_t osu_next_size(size_t size);

/* Buffers of at least 'bytes' (never fewer than 64) in host or device
 * memory; NULL on failure, after a message on stderr. */
void *osu_buffer_alloc(char placement, size_t bytes);
void osu_buffer_free(char placement, void *buf);
/* Writes the pattern that 'sender' sends for messages of 'size' bytes. */
void osu_buffer_fill_pattern(char placement, void *buf, size_t size,
                             int sender);
/* Sets every byte to 'value' (receive buffers start as 'b', as in OSU). */
void osu_buffer_set(char placement, void *buf, int value, size_t bytes);
/* Counts bytes that differ from what 'sender' sends for 'size' bytes. */
long osu_buffer_mismatches(char placement, const void *buf, size_t size,
                           int sender);

/* Sums per-rank error counts over all ranks (every rank gets the total),
 * with point-to-point calls only: the suite needs no collective but
 * MPI_Barrier. */
long osu_total_errors(const struct osu_run *run, long local_errors);

/* Rank 0 prints one "%-10zu%20.2f" row, plus "Pass"/"Fail" under -c. */
void osu_print_row(const struct osu_run *run, size_t size, double value,
                   long errors);
/* Rank 0 prints a message-rate row: size, MB/s and (with -R 1) msgs/s. */
void osu_print_rate_row(const struct osu_run *run, size_t size, double mbps,
                        double rate, long errors);

/* Aborts every rank with a message; for failures only one rank sees. */
void osu_fail(const struct osu_run *run, const char *what);

#endif /* OSU_COMMON_H */
