/*
 * osu_mbw_mr: aggregate bandwidth and message rate of several pairs, as
 * OSU's osu_mbw_mr. Ranks [0, pairs) each stream a window of messages to
 * rank + pairs, which acknowledges every window; all pairs start each
 * iteration together after a barrier. Rank 0's time is used, like OSU.
 */
#include "osu_common.h"

#include <mpi.h>
#include <stdlib.h>

static const struct osu_benchmark osu_mbw_mr_benchmark = {
    "osu_mbw_mr", "Multiple Bandwidth / Message Rate Test", NULL,
    OSU_KIND_MESSAGE_RATE, 1,
};

/* Seconds this rank spent in timed iterations (0 unless a sender). */
static double osu_pairs_stream(const struct osu_run *run, char *s_buf,
                               char *r_buf, int count, int iterations,
                               int skip, MPI_Request *requests)
{
    int peer = osu_partner(run);
    int window = run->opt.window;
    double total = 0.0;

    for (int i = 0; i < iterations + skip; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (peer < 0) {
            continue; /* odd rank out: only keeps the barriers company */
        }
        if (osu_is_initiator(run)) {
            double start = MPI_Wtime();
            for (int j = 0; j < window; j++) {
                MPI_Isend(s_buf, count, MPI_CHAR, peer, OSU_TAG_BW_DATA,
                          MPI_COMM_WORLD, &requests[j]);
            }
            MPI_Waitall(window, requests, MPI_STATUSES_IGNORE);
            MPI_Recv(r_buf, 4, MPI_CHAR, peer, OSU_TAG_BW_ACK,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= skip) {
                total += MPI_Wtime() - start;
            }
        } else {
            for (int j = 0; j < window; j++) {
                MPI_Irecv(r_buf, count, MPI_CHAR, peer, OSU_TAG_BW_DATA,
                          MPI_COMM_WORLD, &requests[j]);
            }
            MPI_Waitall(window, requests, MPI_STATUSES_IGNORE);
            MPI_Send(s_buf, 4, MPI_CHAR, peer, OSU_TAG_BW_ACK,
                     MPI_COMM_WORLD);
        }
    }
    return total;
}

int main(int argc, char *argv[])
{
    struct osu_run run;
    int status = osu_begin(&run, &osu_mbw_mr_benchmark, &argc, &argv);
    char where;
    char *s_buf, *r_buf;
    MPI_Request *requests;
    long errors = 0;

    if (status != OSU_CONTINUE) {
        return status;
    }
    where = osu_placement(&run);
    s_buf = osu_buffer_alloc(where, run.opt.max_size);
    r_buf = osu_buffer_alloc(where, run.opt.max_size);
    requests = malloc(sizeof *requests * (size_t)run.opt.window);
    if (s_buf == NULL || r_buf == NULL || requests == NULL) {
        osu_fail(&run, "buffer allocation");
    }

    for (size_t size = run.opt.min_size; size <= run.opt.max_size;
         size = osu_next_size(size)) {
        int iterations, skip;
        long size_errors = 0;
        double seconds, megabytes, mbps;
        int receiver = !osu_is_initiator(&run) && osu_partner(&run) >= 0;

        osu_schedule(&run, size, &iterations, &skip);
        osu_buffer_fill_pattern(where, s_buf, size, run.rank);
        osu_buffer_set(where, r_buf, 'b', size);
        MPI_Barrier(MPI_COMM_WORLD);

        seconds = osu_pairs_stream(&run, s_buf, r_buf, (int)size, iterations,
                                   skip, requests);
        if (run.opt.validate) {
            long mine = receiver ? osu_buffer_mismatches(where, r_buf, size,
                                                         osu_partner(&run))
                                 : 0;
            size_errors = osu_total_errors(&run, mine);
        }
        megabytes =
            (double)size / 1e6 * run.pairs * iterations * run.opt.window;
        mbps = megabytes / seconds;
        osu_print_rate_row(&run, size, mbps, 1e6 * mbps / (double)size,
                           size_errors);
        errors += size_errors;
        if (size_errors != 0) {
            break;
        }
    }

    free(requests);
    osu_buffer_free(where, s_buf);
    osu_buffer_free(where, r_buf);
    return osu_end(&run, errors);
}
