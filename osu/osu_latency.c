/*
 * osu_latency: blocking ping-pong between two ranks, as OSU's osu_latency.
 * Rank 0 sends and waits for the echo; the latency printed is half the
 * mean round-trip time of the timed iterations, in microseconds.
 */
#include "osu_common.h"

static const struct osu_benchmark osu_latency_benchmark = {
    .program = "osu_latency",
    .title = "Latency Test",
    .column = "Latency (us)",
    .kind = OSU_KIND_LATENCY,
    .exchange = osu_ping_pong,
    .report = osu_report_latency,
};

int main(int argc, char *argv[])
{
    return osu_main(&osu_latency_benchmark, argc, argv);
}
