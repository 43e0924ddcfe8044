/*
 * osu_halo_ddt: the faces of a 3D grid sent as derived datatypes straight
 * from the grid, the way stencil codes send halos. Two ranks each hold an
 * N^3 grid of doubles with a one-cell halo (x fastest) and exchange one
 * face with each other per round (MPI_Irecv into the halo layer,
 * MPI_Isend of the layer next to it, MPI_Waitall). Per grid edge N and
 * face it prints the time per exchange in microseconds, averaged over
 * the two ranks:
 *   x-sub  MPI_Type_create_subarray of the x face: N*N single doubles
 *   x-vec  the same cells as MPI_Type_vector of MPI_Type_vector
 *   y-sub  subarray of the y face: N rows of N doubles
 *   z-sub  subarray of the z face: one N*N plane (near contiguous)
 *
 *   osu_halo_ddt [-d cuda] [-c] [-m [min:]max] [-i iterations] [-x warmup]
 *
 * -d cuda puts the grids in device memory (build with -DOSU_CUDA); -m gives
 * the range of N (default 16:256, powers of two); -c checks the received
 * halo of the last round of each case. Extra ranks wait. Links with
 * osu_options.o and osu_device.o.
 */
#include "osu_internal.h"
#include "osu_halo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_XSUB, F_XVEC, F_YSUB, F_ZSUB, F_COUNT };
static const char *const face_name[F_COUNT] = {"x-sub", "x-vec", "y-sub", "z-sub"};

/* Face f of an N^3 grid with halo: the layer next to the face (send) or
 * the halo layer beyond it (receive). */
static MPI_Datatype face_type(int f, int n, int recv)
{
    int sizes[3] = {n + 2, n + 2, n + 2}, sub[3] = {n, n, n}, start[3] = {1, 1, 1};
    MPI_Datatype t, row;
    int dim = f == F_YSUB ? 1 : f == F_ZSUB ? 0 : 2;
    sub[dim] = 1;
    start[dim] = recv ? 0 : 1;
    if (f == F_XVEC) { /* column of a plane, then the planes */
        MPI_Type_vector(n, 1, n + 2, MPI_DOUBLE, &row);
        MPI_Type_create_hvector(n, 1, (MPI_Aint)(n + 2) * (n + 2) * (MPI_Aint)sizeof(double), row, &t);
        MPI_Type_free(&row);
        MPI_Datatype shifted;
        /* the first cell: (i, j, k) = (start, 1, 1) */
        MPI_Aint at = (MPI_Aint)sizeof(double) * ((MPI_Aint)start[2] + (n + 2) + (MPI_Aint)(n + 2) * (n + 2));
        int one = 1;
        MPI_Type_create_hindexed(1, &one, &at, t, &shifted);
        MPI_Type_free(&t);
        t = shifted;
    } else {
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    }
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct osu_halo_options o = { .where = 'H', .iterations = 100, .skip = 10, .min = 16, .max = 256 };
    if (osu_halo_parse(argc, argv, "osu_halo_ddt [-d cuda] [-c] [-m [min:]max] [-i iterations] [-x warmup]", 2,
                       1024, &o, rank) ||
        size < 2) {
        if (size < 2 && rank == 0)
            fprintf(stderr, "osu_halo_ddt needs two ranks\n");
        MPI_Finalize();
        return 1;
    }
    if (o.where == 'D') {
        struct osu_parse res = { OSU_STATUS_OK, "" };
        osu_select_device(osu_local_rank_from_env(), &res);
        if (res.status != OSU_STATUS_OK) {
            fprintf(stderr, "osu_halo_ddt: %s\n", res.message);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (rank == 0) {
        printf("# AMPI-UCX osu-style halo exchange of derived-datatype faces (osu_halo_ddt), %c %c\n", o.where,
               o.where);
        printf("# %-6s %6s %12s %14s\n", "face", "N", "bytes", "Latency(us)");
        fflush(stdout);
    }
    int errors = 0;
    for (long long n = o.min; n <= o.max; n *= 2) {
        size_t cells = (size_t)(n + 2) * (n + 2) * (n + 2), bytes = cells * sizeof(double);
        double *host = NULL, *grid = NULL;
        if (rank < 2) {
            host = malloc(bytes);
            grid = osu_buffer_alloc(o.where, bytes);
            if (!host || !grid)
                MPI_Abort(MPI_COMM_WORLD, 1);
            for (size_t c = 0; c < cells; c++)
                host[c] = rank * 1e9 + (double)c;
        }
        for (int f = 0; f < F_COUNT; f++) {
            MPI_Datatype st = face_type(f, (int)n, 0), rt = face_type(f, (int)n, 1);
            int tsize;
            MPI_Type_size(st, &tsize);
            double t = 0;
            if (rank < 2) {
                int peer = 1 - rank;
                osu_buffer_upload(o.where, grid, host, bytes);
                for (int it = 0; it < o.skip + o.iterations; it++) {
                    if (it == o.skip)
                        t = MPI_Wtime();
                    MPI_Request rq[2];
                    MPI_Irecv(grid, 1, rt, peer, f, MPI_COMM_WORLD, &rq[0]);
                    MPI_Isend(grid, 1, st, peer, f, MPI_COMM_WORLD, &rq[1]);
                    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
                }
                t = (MPI_Wtime() - t) * 1e6 / o.iterations;
                if (o.validate) { /* the halo layer holds the peer's cells next to its face */
                    double *got = malloc(bytes);
                    osu_buffer_download(o.where, got, grid, bytes);
                    int bad = 0;
                    for (long long a = 1; a <= n && !bad; a++)
                        for (long long b = 1; b <= n && !bad; b++) {
                            long long i = 0, j = 0, k = 0, si = 1, sj = 1, sk = 1;
                            if (f == F_XSUB || f == F_XVEC) {
                                i = 0; j = a; k = b; si = 1; sj = a; sk = b;
                            } else if (f == F_YSUB) {
                                i = a; j = 0; k = b; si = a; sj = 1; sk = b;
                            } else {
                                i = a; j = b; k = 0; si = a; sj = b; sk = 1;
                            }
                            size_t c = (size_t)(i + (n + 2) * (j + (n + 2) * k));
                            size_t sc = (size_t)(si + (n + 2) * (sj + (n + 2) * sk));
                            if (got[c] != peer * 1e9 + (double)sc)
                                bad = 1;
                        }
                    if (bad) {
                        fprintf(stderr, "osu_halo_ddt: rank %d: wrong halo for %s N=%lld\n", rank, face_name[f], n);
                        errors++;
                    }
                    free(got);
                }
            }
            double sum = 0;
            MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                printf("%-8s %6lld %12d %14.2f\n", face_name[f], n, tsize, sum / 2);
                fflush(stdout);
            }
            MPI_Type_free(&st);
            MPI_Type_free(&rt);
        }
        if (rank < 2) {
            osu_buffer_free(o.where, grid);
            free(host);
        }
    }
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 1 : 0;
}
