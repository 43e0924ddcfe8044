/*
 * osu_reduce: MPI_Reduce (MPI_SUM of MPI_FLOAT) to rank 0, as OSU's
 * osu_reduce; sizes in bytes, from one float up.
 */
#include "osu_coll.h"

static void reduce_call(const struct osu_coll_run *run,
                        const struct osu_coll_buffers *buf, size_t size)
{
    (void)run;
    MPI_Reduce(buf->s_buf, buf->r_buf, (int)(size / sizeof(float)),
               MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
}

static void reduce_fill(const struct osu_coll_run *run, unsigned char *send,
                        size_t size)
{
    float *values = (float *)(void *)send;

    for (size_t i = 0; i < size / sizeof(float); i++) {
        values[i] = osu_coll_reduce_input(i, run->rank);
    }
}

/* Only the root receives the sum. */
static long reduce_check(const struct osu_coll_run *run,
                         const unsigned char *send, const unsigned char *recv,
                         size_t size)
{
    (void)send;
    return run->rank == 0 ? osu_coll_check_sum(run, recv, size) : 0;
}

static const struct osu_coll_benchmark osu_reduce_benchmark = {
    .program = "osu_reduce",
    .title = "Reduce Latency Test",
    .datatype = "MPI_FLOAT",
    .element = sizeof(float),
    .send = OSU_COLL_ONE,
    .recv = OSU_COLL_ONE,
    .call = reduce_call,
    .fill = reduce_fill,
    .check = reduce_check,
};

int main(int argc, char *argv[])
{
    return osu_coll_main(&osu_reduce_benchmark, argc, argv);
}
