/*
 * osu_allreduce: MPI_Allreduce (MPI_SUM of MPI_FLOAT), as OSU's
 * osu_allreduce; sizes in bytes, from one float up.
 */
#include "osu_coll.h"

static void allreduce_call(const struct osu_coll_run *run,
                           const struct osu_coll_buffers *buf, size_t size)
{
    (void)run;
    MPI_Allreduce(buf->s_buf, buf->r_buf, (int)(size / sizeof(float)),
                  MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void allreduce_fill(const struct osu_coll_run *run,
                           unsigned char *send, size_t size)
{
    float *values = (float *)(void *)send;

    for (size_t i = 0; i < size / sizeof(float); i++) {
        values[i] = osu_coll_reduce_input(i, run->rank);
    }
}

/* Every rank receives the sum. */
static long allreduce_check(const struct osu_coll_run *run,
                            const unsigned char *send,
                            const unsigned char *recv, size_t size)
{
    (void)send;
    return osu_coll_check_sum(run, recv, size);
}

static const struct osu_coll_benchmark osu_allreduce_benchmark = {
    .program = "osu_allreduce",
    .title = "Allreduce Latency Test",
    .datatype = "MPI_FLOAT",
    .element = sizeof(float),
    .send = OSU_COLL_ONE,
    .recv = OSU_COLL_ONE,
    .call = allreduce_call,
    .fill = allreduce_fill,
    .check = allreduce_check,
};

int main(int argc, char *argv[])
{
    return osu_coll_main(&osu_allreduce_benchmark, argc, argv);
}
