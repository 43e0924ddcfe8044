/*
 * osu_halo_persistent: a halo exchange through persistent requests, the
 * pattern of stencil codes. The ranks form a periodic grid of 1, 2 or 3
 * dimensions (MPI_Dims_create) for 2, 4 or 6 neighbours (-n); per message
 * size every rank sets up one MPI_Send_init and one MPI_Recv_init per
 * neighbour, then times rounds of Startall(receives), Startall(sends),
 * Waitall. Prints the time per exchange in microseconds, averaged over the
 * ranks. Any number of ranks per process works (ampirun +vp).
 *
 *   osu_halo_persistent [-d cuda] [-c] [-n 2|4|6] [-m [min:]max]
 *                       [-i iterations] [-x warmup]
 *
 * -d cuda puts every buffer in device memory (build with -DOSU_CUDA); -c
 * checks every received halo of the last round of each size. Links with
 * osu_options.o and osu_device.o (buffers, patterns, GPU selection).
 */
#include "osu_internal.h"
#include "osu_halo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HALO_MAX_NEIGHBOURS 6

struct halo {
    int n;                               /* neighbours */
    int to[HALO_MAX_NEIGHBOURS];         /* rank we send direction k to */
    int from[HALO_MAX_NEIGHBOURS];       /* rank whose direction-k message we get */
    void *s[HALO_MAX_NEIGHBOURS], *r[HALO_MAX_NEIGHBOURS];
    MPI_Request req[2 * HALO_MAX_NEIGHBOURS]; /* receives, then sends */
};

/* Direction k = 2*d + (0: down, 1: up) of dimension d; the message we get
 * in slot k comes from the opposite neighbour, which sent it as direction
 * k too (tag k), so every pair of ranks agrees on tags even when a short
 * dimension makes both neighbours the same rank. */
static void find_neighbours(struct halo *h, int rank, int size)
{
    int ndims = h->n / 2, dims[3] = { 0, 0, 0 }, coord[3], stride[3];
    MPI_Dims_create(size, ndims, dims);
    for (int d = ndims - 1, s = 1; d >= 0; d--) {
        stride[d] = s;
        coord[d] = rank / s % dims[d];
        s *= dims[d];
    }
    for (int k = 0; k < h->n; k++) {
        int d = k / 2, step = k % 2 ? 1 : -1;
        int up = (coord[d] + step + dims[d]) % dims[d], down = (coord[d] - step + dims[d]) % dims[d];
        h->to[k] = rank + (up - coord[d]) * stride[d];
        h->from[k] = rank + (down - coord[d]) * stride[d];
    }
}

/* The sender id of a halo in the data pattern: its rank and direction. */
static int origin(int rank, int k) { return rank * HALO_MAX_NEIGHBOURS + k; }

/* Seconds per exchange on this rank, and (-c) the wrong bytes seen. */
static double run_size(struct halo *h, const struct osu_halo_options *o, int rank, size_t size, long *errors)
{
    int iters = o->iterations > 0 ? o->iterations : size > 8192 ? 100 : 1000;
    int skip = o->skip >= 0 ? o->skip : size > 8192 ? 10 : 100;
    for (int k = 0; k < h->n; k++) {
        osu_buffer_fill_pattern(o->where, h->s[k], size, origin(rank, k));
        osu_buffer_set(o->where, h->r[k], 'b', size);
        MPI_Recv_init(h->r[k], (int)size, MPI_CHAR, h->from[k], k, MPI_COMM_WORLD, &h->req[k]);
        MPI_Send_init(h->s[k], (int)size, MPI_CHAR, h->to[k], k, MPI_COMM_WORLD, &h->req[h->n + k]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0;
    for (int it = 0; it < skip + iters; it++) {
        if (it == skip)
            t0 = MPI_Wtime();
        MPI_Startall(h->n, h->req);
        MPI_Startall(h->n, h->req + h->n);
        MPI_Waitall(2 * h->n, h->req, MPI_STATUSES_IGNORE);
    }
    double t = (MPI_Wtime() - t0) / iters;
    for (int k = 0; k < 2 * h->n; k++)
        MPI_Request_free(&h->req[k]);
    *errors = 0;
    if (o->validate)
        for (int k = 0; k < h->n; k++)
            *errors += osu_buffer_mismatches(o->where, h->r[k], size, origin(h->from[k], k));
    return t;
}

int main(int argc, char **argv)
{
    struct osu_halo_options o;
    struct halo h;
    int rank, size, bad, status = 0;
    int local = osu_local_rank_from_env();
    struct osu_parse dev = { OSU_STATUS_OK, "" };
    const char *usage = "osu_halo_persistent [-d cuda] [-c] [-n 2|4|6] [-m [min:]max] [-i iterations] [-x warmup]";
    o = (struct osu_halo_options){ .where = 'H', .neighbours = 6, .iterations = -1, .skip = -1, .min = 1,
                                   .max = 1 << 20 };
    bad = osu_halo_parse(argc, argv, usage, 1, 1LL << 32, &o, 1); /* (printed by rank 0 below) */
    if (!bad && o.where == 'D' && local >= 0)
        osu_select_device(local, &dev); /* before MPI_Init, as OSU does */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bad) {
        osu_halo_parse(argc, argv, usage, 1, 1LL << 32, &o, rank);
        MPI_Finalize();
        return 1;
    }
    if (o.where == 'D' && local < 0)
        osu_select_device(rank, &dev);
    int failed = dev.status != OSU_STATUS_OK, any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed) {
        if (failed)
            fprintf(stderr, "osu_halo_persistent rank %d: %s\n", rank, dev.message);
        MPI_Finalize();
        return 1;
    }
    h.n = o.neighbours;
    find_neighbours(&h, rank, size);
    for (int k = 0; k < h.n; k++) {
        h.s[k] = osu_buffer_alloc(o.where, (size_t)o.max);
        h.r[k] = osu_buffer_alloc(o.where, (size_t)o.max);
        if (!h.s[k] || !h.r[k])
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        printf("# OSU-style Halo Exchange Persistent Test\n");
        printf("# %d ranks, %d neighbours each, %s buffers\n", size, h.n, o.where == 'D' ? "device" : "host");
        printf("%-10s%18s\n", "# Size", "Avg time per exchange (us)");
        fflush(stdout);
    }
    for (size_t s = (size_t)o.min; s <= (size_t)o.max && !status; s *= 2) {
        long errors, all_errors;
        double t = run_size(&h, &o, rank, s, &errors), sum;
        MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%-10zu%18.2f%s\n", s, sum / size * 1e6, o.validate ? (all_errors ? "  Fail" : "  Pass") : "");
            fflush(stdout);
        }
        status = all_errors != 0;
    }
    for (int k = 0; k < h.n; k++) {
        osu_buffer_free(o.where, h.s[k]);
        osu_buffer_free(o.where, h.r[k]);
    }
    MPI_Finalize();
    return status;
}
