/*
 * osu_bibw: bidirectional bandwidth between two ranks, as OSU's osu_bibw.
 * Both ranks post a window of receives, then a window of sends, and wait
 * for all of them; the rate counts the bytes moved in both directions, in
 * MB/s (1e6 bytes/s), timed on rank 0.
 */
#include "osu_common.h"

/* Seconds spent in the timed iterations, measured on rank 0. */
static double osu_exchange_windows(const struct osu_run *run,
                                   const struct osu_buffers *buf, int count,
                                   int iterations, int skip)
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
        osu_irecv_window(run, buf->r_buf, count, peer, recv_tag, buf->recvs);
        osu_isend_window(run, buf->s_buf, count, peer, send_tag, buf->sends);
        if (initiator) {
            MPI_Waitall(window, buf->sends, MPI_STATUSES_IGNORE);
            MPI_Waitall(window, buf->recvs, MPI_STATUSES_IGNORE);
        } else {
            MPI_Waitall(window, buf->recvs, MPI_STATUSES_IGNORE);
            MPI_Waitall(window, buf->sends, MPI_STATUSES_IGNORE);
        }
        if (i >= skip) {
            total += MPI_Wtime() - start;
        }
    }
    return total;
}

static void osu_bibw_report(const struct osu_run *run, size_t size,
                            int iterations, double seconds, long errors)
{
    /* Both directions: twice the bytes of osu_bw. */
    double megabytes =
        (double)size / 1e6 * iterations * run->opt.window * 2;
    osu_print_row(run, size, megabytes / seconds, errors);
}

static const struct osu_benchmark osu_bibw_benchmark = {
    .program = "osu_bibw",
    .title = "Bi-Directional Bandwidth Test",
    .column = "Bandwidth (MB/s)",
    .kind = OSU_KIND_BANDWIDTH,
    .exchange = osu_exchange_windows,
    .report = osu_bibw_report,
};

int main(int argc, char *argv[])
{
    return osu_main(&osu_bibw_benchmark, argc, argv);
}
