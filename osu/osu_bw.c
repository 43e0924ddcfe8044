/*
 * osu_bw: unidirectional bandwidth between two ranks, as OSU's osu_bw.
 * Each iteration rank 0 posts a window of non-blocking sends, waits for
 * them, then waits for a 4-byte acknowledgement that rank 1 sends once it
 * has received the whole window. Bandwidth is in MB/s (1e6 bytes/s).
 */
#include "osu_common.h"

#include <mpi.h>
#include <stdlib.h>

static const struct osu_benchmark osu_bw_benchmark = {
    "osu_bw", "Bandwidth Test", "Bandwidth (MB/s)", OSU_KIND_BANDWIDTH, 0,
};

/* Seconds spent in the timed iterations, measured on rank 0. */
static double osu_stream_window(const struct osu_run *run, char *s_buf,
                                char *r_buf, int count, int iterations,
                                int skip, MPI_Request *requests)
{
    int peer = osu_partner(run);
    int window = run->opt.window;
    double total = 0.0;

    for (int i = 0; i < iterations + skip; i++) {
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
    int status = osu_begin(&run, &osu_bw_benchmark, &argc, &argv);
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
        double seconds, megabytes;

        osu_schedule(&run, size, &iterations, &skip);
        osu_buffer_fill_pattern(where, s_buf, size, run.rank);
        osu_buffer_set(where, r_buf, 'b', size);
        MPI_Barrier(MPI_COMM_WORLD);

        seconds = osu_stream_window(&run, s_buf, r_buf, (int)size,
                                    iterations, skip, requests);
        if (run.opt.validate) {
            /* Only the receiver's buffer holds data; the sender's got the
             * acknowledgement. */
            long mine = osu_is_initiator(&run)
                            ? 0
                            : osu_buffer_mismatches(where, r_buf, size,
                                                    osu_partner(&run));
            size_errors = osu_total_errors(&run, mine);
        }
        megabytes = (double)size / 1e6 * iterations * run.opt.window;
        osu_print_row(&run, size, megabytes / seconds, size_errors);
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
