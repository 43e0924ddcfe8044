/*
 * osu_barrier: MPI_Barrier latency averaged over all ranks, as OSU's
 * osu_barrier; one "Avg Latency(us)" row, no sizes and no -c.
 */
#include "osu_coll.h"

static void barrier_call(const struct osu_coll_run *run,
                         const struct osu_coll_buffers *buf, size_t size)
{
    (void)run;
    (void)buf;
    (void)size;
    MPI_Barrier(MPI_COMM_WORLD);
}

static const struct osu_coll_benchmark osu_barrier_benchmark = {
    .program = "osu_barrier",
    .title = "Barrier Latency Test",
    .datatype = "none",
    .element = 0,
    .send = OSU_COLL_NONE,
    .recv = OSU_COLL_NONE,
    .is_barrier = 1,
    .call = barrier_call,
};

int main(int argc, char *argv[])
{
    return osu_coll_main(&osu_barrier_benchmark, argc, argv);
}
