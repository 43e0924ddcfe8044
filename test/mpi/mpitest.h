/* mpitest.h - helpers shared by the MPI test programs in test/mpi.
 *
 * Under ampirun several MPI ranks are user-level threads of one process and
 * share its globals, so nothing here keeps state in global or static
 * variables: every helper works on its arguments only.  Only MPI calls from
 * the set the first library version implements are used. */
#ifndef MPITEST_H
#define MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Tags reserved for the helpers; tests use tags below 30000. */
#define MT_TAG_REPORT 32001
#define MT_TAG_IDLE 32002 /* never sent: only polled while delaying */

/* Print "FAIL rank R: ..." and flush at once, because a later MPI_Abort
 * would throw away buffered output.  Returns 1 so that callers can write
 * errs += mt_fail(...). */
__attribute__((format(printf, 2, 3)))
static inline int mt_fail(int rank, const char *fmt, ...)
{
    char line[640]; /* room for an MPI error string plus the call's text */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("FAIL rank %d: %s\n", rank, line);
    fflush(stdout);
    return 1;
}

/* Informational line (skipped parts etc.), flushed like failures. */
__attribute__((format(printf, 1, 2)))
static inline void mt_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* The case did not test what it is there for (e.g. a pair test on one
 * rank): "SKIP: <reason>" makes test/mpi/run.sh report it as SKIP rather
 * than PASS, even though the program still ends with its OK line. */
__attribute__((format(printf, 1, 2)))
static inline void mt_skipped(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("SKIP: ", stdout);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

static inline int mt_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int mt_size(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* Mix four small integers into a 32-bit value.  Test data is built from
 * (sender, receiver, element index, iteration/tag) through this, so a
 * message delivered to the wrong rank, in the wrong order or from an earlier
 * iteration does not compare equal. */
static inline uint32_t mt_hash(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h = a * 0x9E3779B1u;
    h ^= (b + 0x7F4A7C15u) * 0x85EBCA77u;
    h = (h ^ (h >> 15)) * 0x2C1B3C6Du;
    h ^= (c + 0x165667B1u) * 0xC2B2AE3Du;
    h = (h ^ (h >> 13)) * 0x297A2D39u;
    h ^= (d + 0x27D4EB2Fu) * 0x94D049BBu;
    h ^= h >> 16;
    return h;
}

/* A predefined datatype together with its C size; MPI_Type_size is not in
 * the set of functions the tests may rely on. */
typedef struct {
    MPI_Datatype type;
    size_t size;
    const char *name;
} mt_type;

/* Value of element idx of a message (src -> dst, key) as the datatype's C
 * representation, written to out (at least 8 bytes). */
static inline void mt_elem(const mt_type *t, int src, int dst, uint32_t key,
                           size_t idx, void *out)
{
    uint32_t h = mt_hash((uint32_t)src, (uint32_t)dst, (uint32_t)idx, key);
    if (t->size == 1) {
        unsigned char c = (unsigned char)h;
        memcpy(out, &c, 1);
    } else if (t->type == MPI_DOUBLE) {
        double d = (double)h + 0.5; /* exact in a double */
        memcpy(out, &d, sizeof d);
    } else if (t->type == MPI_LONG_LONG) {
        long long v = (long long)(((uint64_t)h << 31) ^ idx);
        memcpy(out, &v, sizeof v);
    } else {
        int v = (int)(h & 0x7fffffffu);
        memcpy(out, &v, sizeof v);
    }
}

static inline void mt_fill(void *buf, const mt_type *t, size_t count, int src,
                           int dst, uint32_t key)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < count; i++)
        mt_elem(t, src, dst, key, i, p + i * t->size);
}

/* Index of the first element that differs from what mt_fill wrote, or -1. */
static inline long mt_check(const void *buf, const mt_type *t, size_t count,
                            int src, int dst, uint32_t key)
{
    const unsigned char *p = buf;
    unsigned char want[8];
    for (size_t i = 0; i < count; i++) {
        mt_elem(t, src, dst, key, i, want);
        if (memcmp(p + i * t->size, want, t->size) != 0)
            return (long)i;
    }
    return -1;
}

/* Shorthands for the common case of MPI_INT data. */
static inline void mt_fill_int(int *buf, size_t count, int src, int dst,
                               uint32_t key)
{
    for (size_t i = 0; i < count; i++)
        buf[i] = (int)(mt_hash((uint32_t)src, (uint32_t)dst, (uint32_t)i, key)
                       & 0x7fffffffu);
}

static inline long mt_check_int(const int *buf, size_t count, int src, int dst,
                                uint32_t key)
{
    for (size_t i = 0; i < count; i++)
        if (buf[i] != (int)(mt_hash((uint32_t)src, (uint32_t)dst, (uint32_t)i,
                                    key) & 0x7fffffffu))
            return (long)i;
    return -1;
}

/* Spend about `seconds` of wall time while still entering the library, so a
 * runtime that multiplexes ranks on one thread can run the others. */
static inline void mt_delay(double seconds)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MT_TAG_IDLE, MPI_COMM_WORLD, &flag,
                   MPI_STATUS_IGNORE);
    }
}

static inline void *mt_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        printf("FAIL malloc of %zu bytes\n", bytes);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static inline void *mt_zalloc(size_t bytes)
{
    void *p = mt_malloc(bytes);
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

/* Check a receive status: source, tag and element count. */
static inline int mt_check_status(int rank, const char *what,
                                  const MPI_Status *st, MPI_Datatype type,
                                  int src, int tag, int count)
{
    int errs = 0, got = -7;
    if (st->MPI_SOURCE != src)
        errs += mt_fail(rank, "%s: status source %d, expected %d", what,
                        st->MPI_SOURCE, src);
    if (st->MPI_TAG != tag)
        errs += mt_fail(rank, "%s: status tag %d, expected %d", what,
                        st->MPI_TAG, tag);
    MPI_Get_count(st, type, &got);
    if (got != count)
        errs += mt_fail(rank, "%s: count %d, expected %d", what, got, count);
    return errs;
}

/* End of a test: a rank with errors aborts the job (others may be waiting
 * for it); the others report to rank 0, which prints ok_line once all are
 * in.  Call before MPI_Finalize. */
static inline void mt_finish(int errs, const char *ok_line)
{
    int rank = mt_rank(), size = mt_size();
    if (errs) {
        printf("FAIL rank %d: %d error(s)\n", rank, errs);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank != 0) {
        MPI_Send(&errs, 1, MPI_INT, 0, MT_TAG_REPORT, MPI_COMM_WORLD);
        return;
    }
    for (int i = 1; i < size; i++) {
        int theirs = -1;
        MPI_Recv(&theirs, 1, MPI_INT, i, MT_TAG_REPORT, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (theirs != 0) {
            printf("FAIL rank 0: rank %d reported %d error(s)\n", i, theirs);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    printf("%s\n", ok_line);
    fflush(stdout);
}

/* One collective call on MPI_COMM_WORLD in the form the including file's
 * COLL_MODE says: 0 blocking, 1 nonblocking (then MPI_Wait), 2 persistent
 * (MPI_Xxx_init, MPI_Start, MPI_Wait, MPI_Request_free). */
#define MT_COLL(blocking, nonblocking, persistent, ...)                                  \
    do {                                                                                \
        if (COLL_MODE == 0) {                                                           \
            blocking(__VA_ARGS__, MPI_COMM_WORLD);                                      \
        } else {                                                                        \
            MPI_Request rq_;                                                            \
            if (COLL_MODE == 1) {                                                       \
                nonblocking(__VA_ARGS__, MPI_COMM_WORLD, &rq_);                         \
            } else {                                                                    \
                persistent(__VA_ARGS__, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_);           \
                MPI_Start(&rq_);                                                        \
            }                                                                           \
            MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                          \
            if (COLL_MODE == 2)                                                         \
                MPI_Request_free(&rq_);                                                 \
        }                                                                               \
    } while (0)

/* Seconds on the monotonic clock. */
static inline double mt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* AMPI_NBC_PROGRESS_MIN as the library reads it (README; default 128K):
 * nonblocking collectives below it stay on the helper threads. */
static inline size_t mt_nbc_progress_min(void)
{
    const char *v = getenv("AMPI_NBC_PROGRESS_MIN");
    if (!v || !*v)
        return 128 * 1024;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    return (size_t)(n << shift);
}

/* An Ibcast of bytes as the library weighs it against AMPI_NBC_PROGRESS_MIN
 * (README): twice the message where the progress threads have CPUs of their
 * own (AMPI_PROGRESS_CPU, which ampirun sets on every process or on none;
 * the library reads process 0's). */
static inline size_t mt_nbc_bcast_weight(size_t bytes)
{
    const char *v = getenv("AMPI_PROGRESS_CPU");
    return v && *v && atoi(v) >= 0 ? 2 * bytes : bytes;
}

/* A committed vector of n ints, stride 2, resized to extent 2n ints. */
static inline MPI_Datatype mt_strided_ints(int n)
{
    MPI_Datatype v, t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

/* The data part of the nonblocking collectives' tests (coll_nb_*.c):
 * part1(comm, name, it, n, in_place) for each of the sizes, twice, on
 * MPI_COMM_WORLD and on a split communicator whose ranks come in reverse
 * order, in place on one of them each time; *it counts the rounds.  Stops
 * at the first error. */
typedef int mt_nbc_part_fn(MPI_Comm comm, const char *name, int it, size_t n, bool in_place);
static inline int mt_nbc_data(mt_nbc_part_fn *part1, const size_t *sizes, int nsizes, int *it)
{
    int errs = 0;
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank() % 2, mt_size() - mt_rank(), &split);
    for (int b = 0; b < nsizes && !errs; b++)
        for (int rep = 0; rep < 2 && !errs; rep++, (*it)++) {
            errs += part1(MPI_COMM_WORLD, "world", *it, sizes[b], rep == 1);
            errs += part1(split, "split", *it, sizes[b], rep == 0);
        }
    MPI_Comm_free(&split);
    return errs;
}

/* The whole of a v-form's data test (coll_nb_rootedv.c, coll_nb_alltoallv.c):
 * part1 at 1, 1000 and twice 40000 elements a block, two rounds a size, the
 * layout chosen by round (so the last size sees three), then ok_line. */
static inline int mt_nbc_layouts_main(int *argc, char ***argv, mt_nbc_part_fn *part1, const char *ok_line)
{
    MPI_Init(argc, argv);
    const size_t sizes[] = { 1, 1000, 40000, 40000 };
    int it = 0, errs = mt_nbc_data(part1, sizes, 4, &it);
    mt_finish(errs, ok_line);
    MPI_Finalize();
    return 0;
}

/* Whether rank 0 of those tests' progress part computes without MPI calls
 * while its collective of `bytes` is under way: in jobs of several
 * processes, where the library moves the collective on a progress thread
 * (at AMPI_NBC_PROGRESS_MIN bytes and more). */
static inline bool mt_nbc_computes(size_t bytes)
{
    const char *ls = getenv("AMPI_LOCAL_SIZE");
    return ls && atoi(ls) > 1 && mt_size() > 1 && bytes >= mt_nbc_progress_min();
}

/* The progress part of those tests: every rank but 0 starts the collective
 * (start), tells rank 0 and waits; rank 0 starts it last and, where
 * mt_nbc_computes(bytes), computes without MPI calls until done() says its
 * result buffer holds the whole result or bail_s seconds pass (a failure:
 * the data can only arrive if its process moves the collective on its own),
 * then waits too.  what names the collective in the message.  Returns the
 * errors found; the caller checks the result itself. */
typedef struct mt_nbc_progress {
    void (*start)(void *arg, MPI_Request *q);
    bool (*done)(void *arg); /* reads a buffer the progress thread writes: volatile */
    void *arg;
    size_t bytes;
    double bail_s;
    const char *what;
} mt_nbc_progress_t;
static inline int mt_nbc_progress(const mt_nbc_progress_t *p)
{
    int errs = 0, rank = mt_rank(), size = mt_size();
    MPI_Request q;
    if (rank != 0) {
        p->start(p->arg, &q);
        MPI_Send(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else {
        for (int i = 1; i < size; i++)
            MPI_Recv(NULL, 0, MPI_INT, i, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        p->start(p->arg, &q);
        if (mt_nbc_computes(p->bytes)) {
            double t0 = mt_now();
            while (!p->done(p->arg) && mt_now() - t0 < p->bail_s)
                ;
            if (!p->done(p->arg))
                errs += mt_fail(rank, "%s did not progress while rank 0 computed", p->what);
        }
    }
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    return errs;
}

#endif
