/*
 * osu_bibw: bidirectional bandwidth between two ranks, as OSU's osu_bibw.
 * Both ranks post a window of receives, then a window of sends, and wait
 * for all of them; the rate counts the bytes moved in both directions, in
 * MB/s (1e6 bytes/s), timed on rank 0.
 */
#include "osu_common.h"

#include <mpi.h>
#include <stdlib.h>

static const struct osu_benchmark osu_bibw_benchmark = {
    "osu_bibw", "Bi-Directional Bandwidth Test", "Bandwidth (MB/s)",
    OSU_KIND_BANDWIDTH, 0,
};

/* Seconds spent in the timed iterations, measured on rank 0. */
static double osu_exchange_windows(const struct osu_run *run, char *s_buf,
                                   char *r_buf, int count, int iterations,
                                   int skip, MPI_Request *sends,
                                   MPI_Request *recvs)
{
    int peer = osu_partner(run);
    int window = run->opt.window;
    int initiator = osu_is_initiator(run);
    /* Rank 0 receives on tag 10 and sends on tag 100; rank 1 the reverse. */
    int recv_tag = initiator ? OSU_TAG_BIBW_BACK : OSU_TAG_BW_DATA;
    int send_tag = initiator ? OSU_TAG_BW_DATA : OSU_TAG_BIBW_BACK;
    double total = 0.0;

    for (int i = 0; i < iterations + skip; i++) {
        double start = MPI_Wtime();
        for (int j = 0; j < window; j++) {
            MPI_Irecv(r_buf, count, MPI_CHAR, peer, recv_tag, MPI_COMM_WORLD,
                      &recvs[j]);
        }
        for (int j = 0; j < window; j++) {
            MPI_Isend(s_buf, count, MPI_CHAR, peer, send_tag, MPI_COMM_WORLD,
                      &sends[j]);
        }
        if (initiator) {
            MPI_Waitall(window, sends, MPI_STATUSES_IGNORE);
            MPI_Waitall(window, recvs, MPI_STATUSES_IGNORE);
        } else {
            MPI_Waitall(window, recvs, MPI_STATUSES_IGNORE);
            MPI_Waitall(window, sends, MPI_STATUSES_IGNORE);
        }
        if (i >= skip) {
            total += MPI_Wtime() - start;
        }
    }
    return total;
}

int main(int argc, char *argv[])
{
    struct osu_run run;
    int status = osu_begin(&run, &osu_bibw_benchmark, &argc, &argv);
    char where;
    char *s_buf, *r_buf;
    MPI_Request *sends, *recvs;
    long errors = 0;

    if (status != OSU_CONTINUE) {
        return status;
    }
    where = osu_placement(&run);
    s_buf = osu_buffer_alloc(where, run.opt.max_size);
    r_buf = osu_buffer_alloc(where, run.opt.max_size);
    sends = malloc(sizeof *sends * (size_t)run.opt.window);
    recvs = malloc(sizeof *recvs * (size_t)run.opt.window);
    if (s_buf == NULL || r_buf == NULL || sends == NULL || recvs == NULL) {
        osu_fail(&run, "buffer allocation");
    }

    for (size_t size = run.opt.min_size; size <= run.opt.max_size;
         size = osu_next_size(size)) {
        int iterations, skip;
        long size_errors = 0;
        double seconds, megabytes;

        osu_schedule(&run, size, &iterations, &skip);
        osu_buffer_fill_pattern(where, s_buf, size, run.rank);
        osu_buffer_set(where, r_buf, 'b', size);
        MPI_Barrier(MPI_COMM_WORLD);

        seconds = osu_exchange_windows(&run, s_buf, r_buf, (int)size,
                                       iterations, skip, sends, recvs);
        if (run.opt.validate) {
            size_errors = osu_total_errors(
                &run, osu_buffer_mismatches(where, r_buf, size,
                                            osu_partner(&run)));
        }
        megabytes = (double)size / 1e6 * iterations * run.opt.window * 2;
        osu_print_row(&run, size, megabytes / seconds, size_errors);
        errors += size_errors;
        if (size_errors != 0) {
            break;
        }
    }

    free(sends);
    free(recvs);
    osu_buffer_free(where, s_buf);
    osu_buffer_free(where, r_buf);
    return osu_end(&run, errors);
}
