/*
 * osu_latency_persistent: ping-pong latency with persistent requests, as
 * OSU's osu_latency_persistent. The send and receive are set up once per
 * message size with MPI_Send_init/MPI_Recv_init and then only started and
 * waited for; the latency is half the mean round trip, in microseconds.
 */
#include "osu_common.h"

/* Mean round-trip time in seconds of 'iterations' timed exchanges. The
 * barrier comes after the set-up, so that it is not part of the timing. */
static double osu_persistent_ping_pong(const struct osu_run *run,
                                       const struct osu_buffers *buf,
                                       int count, int iterations, int skip)
{
    int peer = osu_partner(run);
    MPI_Request send, recv;
    double round_trip;

    MPI_Send_init(buf->s_buf, count, MPI_CHAR, peer, OSU_TAG_DATA,
                  MPI_COMM_WORLD, &send);
    MPI_Recv_init(buf->r_buf, count, MPI_CHAR, peer, OSU_TAG_DATA,
                  MPI_COMM_WORLD, &recv);
    MPI_Barrier(MPI_COMM_WORLD);

    round_trip =
        osu_ping_pong_persistent(run, &send, &recv, iterations, skip);
    MPI_Request_free(&send);
    MPI_Request_free(&recv);
    return round_trip;
}

static const struct osu_benchmark osu_latency_persistent_benchmark = {
    .program = "osu_latency_persistent",
    .title = "Latency Persistent Test",
    .column = "Latency (us)",
    .kind = OSU_KIND_LATENCY,
    .exchange = osu_persistent_ping_pong,
    .report = osu_report_latency,
    .exchange_synchronizes = 1,
};

int main(int argc, char *argv[])
{
    return osu_main(&osu_latency_persistent_benchmark, argc, argv);
}
