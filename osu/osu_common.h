/*
 * Shared pieces of the AMPI-UCX osu-style point-to-point suite: option
 * parsing, buffer placement (host or CUDA device), the per-size sweep, the
 * exchanges several programs share, header and row printing.
 *
 * The suite follows the conventions of the OSU micro-benchmarks 7.x (options,
 * defaults, timing method, output layout) so its numbers compare 1:1 with
 * OSU's own binaries, but every line is written here.
 *
 * A program is one static struct osu_benchmark (its exchange and report
 * callbacks) and a main() that hands it to osu_main().
 *
 * No mutable globals anywhere: under AMPI several MPI ranks are user-level
 * threads of one process, so all state lives in a struct osu_run owned by each
 * rank's main().
 */
#ifndef OSU_COMMON_H
#define OSU_COMMON_H

#include <mpi.h>

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

struct osu_run;

/* Buffers one rank uses for the whole sweep, allocated by osu_main(). */
struct osu_buffers {
    char where;                 /* 'H' host or 'D' device (osu_placement) */
    char *s_buf, *r_buf;        /* max_size bytes each (at least 64) */
    MPI_Request *sends, *recvs; /* -W entries each; NULL for latency kinds */
};

/*
 * Timed exchanges of one message size: iterations + skip rounds of 'count'
 * bytes, the first 'skip' untimed. Returns the seconds that the program's
 * report turns into its printed value; only rank 0's result is printed.
 */
typedef double osu_exchange_fn(const struct osu_run *run,
                               const struct osu_buffers *buf, int count,
                               int iterations, int skip);
/* Prints (on rank 0) the row of one size from rank 0's exchange result. */
typedef void osu_report_fn(const struct osu_run *run, size_t size,
                           int iterations, double seconds, long errors);

/* Static description of one program of the suite. */
struct osu_benchmark {
    const char *program; /* e.g. "osu_latency" */
    const char *title;   /* e.g. "Latency Test" */
    const char *column;  /* e.g. "Latency (us)"; unused for message rate */
    enum osu_kind kind;
    int multi_pair;      /* ranks [0,pairs) talk to [pairs,2*pairs); every
                            exchange round then starts with a barrier */
    osu_exchange_fn *exchange;
    osu_report_fn *report;
    /* The exchange sets up first and then barriers itself, so the sweep
     * leaves out its barrier before each size. */
    int exchange_synchronizes;
    /* Initiators' r_buf only ever gets acknowledgements: -c checks the
     * receivers' buffers alone. */
    int receivers_validate;
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

/*
 * The whole program: parses options, selects the GPU, MPI_Init, header,
 * then for every size of the sweep fills the buffers, (barrier,) runs
 * bench->exchange, validates under -c and calls bench->report; stops at the
 * first size that fails validation, finalizes MPI. Returns main()'s status.
 */
int osu_main(const struct osu_benchmark *bench, int argc, char **argv);

/* Partner rank of this rank, or -1 for a rank left out of every pair. */
int osu_partner(const struct osu_run *run);
/* Whether this rank starts the exchange (rank 0, or the first half). */
int osu_is_initiator(const struct osu_run *run);
/* 'H' or 'D': where this rank's buffers live (SRC for initiators). */
char osu_placement(const struct osu_run *run);

/* ---- exchanges shared by several programs (osu_exchange_fn shaped) ---- */

/* Blocking ping-pong on OSU_TAG_DATA; the mean round trip in seconds. */
double osu_ping_pong(const struct osu_run *run, const struct osu_buffers *buf,
                     int count, int iterations, int skip);
/* The same ping-pong with persistent requests already set up for it:
 * each message is an MPI_Start and an MPI_Wait. */
double osu_ping_pong_persistent(const struct osu_run *run, MPI_Request *send,
                                MPI_Request *recv, int iterations, int skip);
/* Initiators stream a window of sends and wait for a 4-byte acknowledgement
 * that the partner sends once it has the whole window; seconds timed. */
double osu_stream_windows(const struct osu_run *run,
                          const struct osu_buffers *buf, int count,
                          int iterations, int skip);
/* Post -W non-blocking sends (receives) of buf to peer into requests. */
void osu_isend_window(const struct osu_run *run, const char *buf, int count,
                      int peer, int tag, MPI_Request *requests);
void osu_irecv_window(const struct osu_run *run, char *buf, int count,
                      int peer, int tag, MPI_Request *requests);

/* Report of the latency programs: half the mean round trip, in us. */
void osu_report_latency(const struct osu_run *run, size_t size,
                        int iterations, double round_trip, long errors);

/* Rank 0 prints one "%-10zu%20.2f" row, plus "Pass"/"Fail" under -c. */
void osu_print_row(const struct osu_run *run, size_t size, double value,
                   long errors);
/* Rank 0 prints a message-rate row: size, MB/s and (with -R 1) msgs/s. */
void osu_print_rate_row(const struct osu_run *run, size_t size, double mbps,
                        double rate, long errors);

/* Aborts every rank with a message; for failures only one rank sees. */
void osu_fail(const struct osu_run *run, const char *what);

#endif /* OSU_COMMON_H */
