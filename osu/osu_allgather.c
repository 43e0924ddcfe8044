/*
 * osu_allgather: MPI_Allgather of MPI_CHAR messages, as OSU's
 * osu_allgather; the size is what each rank contributes.
 */
#include "osu_coll.h"

static void allgather_call(const struct osu_coll_run *run,
                           const struct osu_coll_buffers *buf, size_t size)
{
    (void)run;
    MPI_Allgather(buf->s_buf, (int)size, MPI_CHAR, buf->r_buf, (int)size,
                  MPI_CHAR, MPI_COMM_WORLD);
}

static void allgather_fill(const struct osu_coll_run *run,
                           unsigned char *send, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        send[i] = osu_coll_pattern(i, size, run->rank);
    }
}

/* Block r of the result is rank r's pattern. */
static long allgather_check(const struct osu_coll_run *run,
                            const unsigned char *send,
                            const unsigned char *recv, size_t size)
{
    long wrong = 0;

    (void)send;
    for (int r = 0; r < run->nprocs; r++) {
        const unsigned char *block = recv + (size_t)r * size;
        for (size_t i = 0; i < size; i++) {
            wrong += block[i] != osu_coll_pattern(i, size, r);
        }
    }
    return wrong;
}

static const struct osu_coll_benchmark osu_allgather_benchmark = {
    .program = "osu_allgather",
    .title = "Allgather Latency Test",
    .datatype = "MPI_CHAR",
    .element = 1,
    .send = OSU_COLL_ONE,
    .recv = OSU_COLL_PER_RANK,
    .call = allgather_call,
    .fill = allgather_fill,
    .check = allgather_check,
};

int main(int argc, char *argv[])
{
    return osu_coll_main(&osu_allgather_benchmark, argc, argv);
}
