/*
 * osu_bcast: MPI_Bcast of MPI_CHAR messages from rank 0, as OSU's
 * osu_bcast; the latency averaged over all ranks.
 */
#include "osu_coll.h"

static void bcast_call(const struct osu_coll_run *run,
                       const struct osu_coll_buffers *buf, size_t size)
{
    (void)run;
    MPI_Bcast(buf->s_buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* The root sends its pattern; the others keep 'a' bytes to be overwritten. */
static void bcast_fill(const struct osu_coll_run *run, unsigned char *send,
                       size_t size)
{
    if (run->rank != 0) {
        return;
    }
    for (size_t i = 0; i < size; i++) {
        send[i] = osu_coll_pattern(i, size, 0);
    }
}

/* One buffer: after the call every rank holds the root's pattern. */
static long bcast_check(const struct osu_coll_run *run,
                        const unsigned char *send, const unsigned char *recv,
                        size_t size)
{
    long wrong = 0;

    (void)run;
    (void)recv;
    for (size_t i = 0; i < size; i++) {
        wrong += send[i] != osu_coll_pattern(i, size, 0);
    }
    return wrong;
}

static const struct osu_coll_benchmark osu_bcast_benchmark = {
    .program = "osu_bcast",
    .title = "Broadcast Latency Test",
    .datatype = "MPI_CHAR",
    .element = 1,
    .send = OSU_COLL_ONE,
    .recv = OSU_COLL_NONE,
    .call = bcast_call,
    .fill = bcast_fill,
    .check = bcast_check,
};

int main(int argc, char *argv[])
{
    return osu_coll_main(&osu_bcast_benchmark, argc, argv);
}
