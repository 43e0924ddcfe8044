/*
 * osu_multi_lat: ping-pong latency of several pairs at once, as OSU's
 * osu_multi_lat. Rank r < pairs exchanges with r + pairs; a barrier starts
 * every iteration so all pairs contend together. Like OSU 7.x, the latency
 * printed is rank 0's: half its mean round trip, in microseconds.
 */
#include "osu_common.h"

static const struct osu_benchmark osu_multi_lat_benchmark = {
    .program = "osu_multi_lat",
    .title = "Multi Latency Test",
    .column = "Latency (us)",
    .kind = OSU_KIND_LATENCY,
    .multi_pair = 1,
    .exchange = osu_ping_pong,
    .report = osu_report_latency,
};

int main(int argc, char *argv[])
{
    return osu_main(&osu_multi_lat_benchmark, argc, argv);
}
