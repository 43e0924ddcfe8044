/*
 * osu_bw: unidirectional bandwidth between two ranks, as OSU's osu_bw.
 * Each iteration rank 0 posts a window of non-blocking sends, waits for
 * them, then waits for a 4-byte acknowledgement that rank 1 sends once it
 * has received the whole window. Bandwidth is in MB/s (1e6 bytes/s).
 */
#include "osu_common.h"

static void osu_bw_report(const struct osu_run *run, size_t size,
                          int iterations, double seconds, long errors)
{
    double megabytes = (double)size / 1e6 * iterations * run->opt.window;
    osu_print_row(run, size, megabytes / seconds, errors);
}

static const struct osu_benchmark osu_bw_benchmark = {
    .program = "osu_bw",
    .title = "Bandwidth Test",
    .column = "Bandwidth (MB/s)",
    .kind = OSU_KIND_BANDWIDTH,
    .exchange = osu_stream_windows,
    .report = osu_bw_report,
    .receivers_validate = 1,
};

int main(int argc, char *argv[])
{
    return osu_main(&osu_bw_benchmark, argc, argv);
}
