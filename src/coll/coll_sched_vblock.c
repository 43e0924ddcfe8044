/* The blocks of a v-buffer as the v-forms' schedules move them
 * (coll_sched_impl.h): MPI_Igatherv, MPI_Iscatterv, MPI_Ialltoallv. */
#include "coll/coll_sched_impl.h"
#include "coll/coll_nc.h"

bool sched_vblocks(const core_comm_t *c, sched_vblock_t *b, const void *buf, const int *counts, const int *displs,
                   MPI_Datatype dt, int self, size_t *total, int *taken)
{
    int n = c->size;
    bool nc = coll_nc_type(dt), dev = false, any = coll_sched_wanted(c, SIZE_MAX);
    size_t elem = nc ? dt_size(dt) : coll_elem(dt), min = coll_sched_min(), sum = 0;
    ptrdiff_t ext = dt_extent(dt);
    *taken = 0;
    for (int i = 0; i < n; i++) {
        /* the rule the member at the other end applies to this block (coll_sched.h) */
        bool sched = any && i != self && coll_block_bytes(counts[i], dt) * (size_t)n >= min;
        b[i] = (sched_vblock_t){ .at = (ptrdiff_t)sum, .len = (size_t)counts[i] * elem,
                                 .uat = (ptrdiff_t)displs[i] * ext, .count = counts[i], .sched = sched };
        sum += b[i].len;
        *taken += sched;
        if (b[i].len && !dev && !nc) /* a buffer is device memory or not as a whole */
            dev = p2p_is_device((const char *)buf + b[i].uat, b[i].len);
    }
    *total = sum;
    if (!nc && !dev)
        for (int i = 0; i < n; i++)
            b[i].at = b[i].uat;
    return nc || dev;
}

void sched_vpack(const sched_vblock_t *b, int n, const void *ubuf, MPI_Datatype dt, char *host)
{
    bool nc = coll_nc_type(dt);
    for (int i = 0; i < n; i++) {
        const char *from = (const char *)ubuf + b[i].uat;
        if (!b[i].len)
            continue;
        if (nc)
            coll_nc_pack_buf(from, b[i].count, dt, host + b[i].at);
        else
            coll_copy(host + b[i].at, from, b[i].len);
    }
}

void sched_vunpack(const sched_vblock_t *b, int n, int skip, const char *host, void *ubuf, MPI_Datatype dt)
{
    bool nc = coll_nc_type(dt);
    for (int i = 0; i < n; i++) {
        char *to = (char *)ubuf + b[i].uat;
        if (!b[i].len || i == skip)
            continue;
        if (nc)
            coll_nc_unpack_buf(host + b[i].at, b[i].len, to, b[i].count, dt);
        else
            coll_copy(to, host + b[i].at, b[i].len);
    }
}

sched_t *sched_split(p2p_rank_t *r, core_comm_t *c, sched_step_fn *step, coll_nb_fn *helper, void *extra,
                     MPI_Request *request, p2p_req_t **part, int *part_err, int *err)
{
    uint32_t seq = coll_nb_next_seq(r, c);
    coll_nb_args_t a = { .root = c->rank, .extra = extra };
    *part = NULL;
    *part_err = MPI_ERR_NO_MEM;
    *err = coll_nb_start_tag(r, c, helper, &a, coll_nb_tag(seq), request);
    if (*err)
        return NULL;
    MPI_Request sq;
    sched_t *s = sched_new_seq(r, c, step, &sq, part_err, &seq);
    if (s)
        *part = sq;
    return s;
}

int sched_part_wait(p2p_req_t *part, int part_err)
{
    if (!part)
        return part_err;
    p2p_wait_complete(part);
    int err = part->status.MPI_ERROR;
    p2p_req_release(part);
    return err;
}
