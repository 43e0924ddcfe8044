/*
 * osu_alltoall: MPI_Alltoall of MPI_CHAR messages, as OSU's osu_alltoall;
 * the size is what each rank sends to each rank.
 */
#include "osu_coll.h"

static void alltoall_call(const struct osu_coll_run *run,
                          const struct osu_coll_buffers *buf, size_t size)
{
    (void)run;
    MPI_Alltoall(buf->s_buf, (int)size, MPI_CHAR, buf->r_buf, (int)size,
                 MPI_CHAR, MPI_COMM_WORLD);
}

/* The pattern of a block names both its source and its destination, so
 * a block delivered to the wrong rank or slot does not match. */
static int alltoall_origin(const struct osu_coll_run *run, int source,
                           int destination)
{
    return source * run->nprocs + destination;
}

static void alltoall_fill(const struct osu_coll_run *run, unsigned char *send,
                          size_t size)
{
    for (int d = 0; d < run->nprocs; d++) {
        unsigned char *block = send + (size_t)d * size;
        int origin = alltoall_origin(run, run->rank, d);
        for (size_t i = 0; i < size; i++) {
            block[i] = osu_coll_pattern(i, size, origin);
        }
    }
}

static long alltoall_check(const struct osu_coll_run *run,
                           const unsigned char *send,
                           const unsigned char *recv, size_t size)
{
    long wrong = 0;

    (void)send;
    for (int s = 0; s < run->nprocs; s++) {
        const unsigned char *block = recv + (size_t)s * size;
        int origin = alltoall_origin(run, s, run->rank);
        for (size_t i = 0; i < size; i++) {
            wrong += block[i] != osu_coll_pattern(i, size, origin);
        }
    }
    return wrong;
}

static const struct osu_coll_benchmark osu_alltoall_benchmark = {
    .program = "osu_alltoall",
    .title = "All-to-All Personalized Exchange Latency Test",
    .datatype = "MPI_CHAR",
    .element = 1,
    .send = OSU_COLL_PER_RANK,
    .recv = OSU_COLL_PER_RANK,
    .call = alltoall_call,
    .fill = alltoall_fill,
    .check = alltoall_check,
};

int main(int argc, char *argv[])
{
    return osu_coll_main(&osu_alltoall_benchmark, argc, argv);
}
