/*
 * osu_latency_persistent: ping-pong latency with persistent requests, as
 * OSU's osu_latency_persistent. The send and receive are set up once per
 * message size with MPI_Send_init/MPI_Recv_init and then only started and
 * waited for; the latency is half the mean round trip, in microseconds.
 */
#include "osu_common.h"

#include <mpi.h>

static const struct osu_benchmark osu_latency_persistent_benchmark = {
    "osu_latency_persistent", "Latency Persistent Test", "Latency (us)",
    OSU_KIND_LATENCY, 0,
};

static void osu_start_and_wait(MPI_Request *request)
{
    MPI_Start(request);
    MPI_Wait(request, MPI_STATUS_IGNORE);
}

/* Mean round-trip time in seconds of 'iterations' timed exchanges. */
static double osu_persistent_ping_pong(const struct osu_run *run,
                                       char *s_buf, char *r_buf, int count,
                                       int iterations, int skip)
{
    int peer = osu_partner(run);
    MPI_Request send, recv;
    double total = 0.0;

    MPI_Send_init(s_buf, count, MPI_CHAR, peer, OSU_TAG_DATA, MPI_COMM_WORLD,
                  &send);
    MPI_Recv_init(r_buf, count, MPI_CHAR, peer, OSU_TAG_DATA, MPI_COMM_WORLD,
                  &recv);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int i = 0; i < iterations + skip; i++) {
        if (osu_is_initiator(run)) {
            double start = MPI_Wtime();
            osu_start_and_wait(&send);
            osu_start_and_wait(&recv);
            if (i >= skip) {
                total += MPI_Wtime() - start;
            }
        } else {
            osu_start_and_wait(&recv);
            osu_start_and_wait(&send);
        }
    }
    MPI_Request_free(&send);
    MPI_Request_free(&recv);
    return total / iterations;
}

int main(int argc, char *argv[])
{
    struct osu_run run;
    int status =
        osu_begin(&run, &osu_latency_persistent_benchmark, &argc, &argv);
    char where;
    char *s_buf, *r_buf;
    long errors = 0;

    if (status != OSU_CONTINUE) {
        return status;
    }
    where = osu_placement(&run);
    s_buf = osu_buffer_alloc(where, run.opt.max_size);
    r_buf = osu_buffer_alloc(where, run.opt.max_size);
    if (s_buf == NULL || r_buf == NULL) {
        osu_fail(&run, "buffer allocation");
    }

    for (size_t size = run.opt.min_size; size <= run.opt.max_size;
         size = osu_next_size(size)) {
        int iterations, skip;
        long size_errors = 0;
        double round_trip;

        osu_schedule(&run, size, &iterations, &skip);
        osu_buffer_fill_pattern(where, s_buf, size, run.rank);
        osu_buffer_set(where, r_buf, 'b', size);

        round_trip = osu_persistent_ping_pong(&run, s_buf, r_buf, (int)size,
                                              iterations, skip);
        if (run.opt.validate) {
            size_errors = osu_total_errors(
                &run, osu_buffer_mismatches(where, r_buf, size,
                                            osu_partner(&run)));
        }
        osu_print_row(&run, size, round_trip * 1e6 / 2.0, size_errors);
        errors += size_errors;
        if (size_errors != 0) {
            break;
        }
    }

    osu_buffer_free(where, s_buf);
    osu_buffer_free(where, r_buf);
    return osu_end(&run, errors);
}
