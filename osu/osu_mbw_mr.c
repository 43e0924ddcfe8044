/*
 * osu_mbw_mr: aggregate bandwidth and message rate of several pairs, as
 * OSU's osu_mbw_mr. Ranks [0, pairs) each stream a window of messages to
 * rank + pairs, which acknowledges every window; all pairs start each
 * iteration together after a barrier. Rank 0's time is used, like OSU.
 */
#include "osu_common.h"

static void osu_mbw_mr_report(const struct osu_run *run, size_t size,
                              int iterations, double seconds, long errors)
{
    double megabytes =
        (double)size / 1e6 * run->pairs * iterations * run->opt.window;
    double mbps = megabytes / seconds;
    osu_print_rate_row(run, size, mbps, 1e6 * mbps / (double)size, errors);
}

static const struct osu_benchmark osu_mbw_mr_benchmark = {
    .program = "osu_mbw_mr",
    .title = "Multiple Bandwidth / Message Rate Test",
    .column = NULL,
    .kind = OSU_KIND_MESSAGE_RATE,
    .multi_pair = 1,
    .exchange = osu_stream_windows,
    .report = osu_mbw_mr_report,
    .receivers_validate = 1,
};

int main(int argc, char *argv[])
{
    return osu_main(&osu_mbw_mr_benchmark, argc, argv);
}
