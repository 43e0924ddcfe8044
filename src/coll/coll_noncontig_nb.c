/* Nonblocking and persistent collectives on derived datatypes whose data is
 * not one block of size bytes at the buffer.
 *
 * As the blocking forms (coll_noncontig.c), they run on packed copies and
 * MPI_BYTE counts, but the packing happens on the helper thread that runs
 * the collective (coll_nb.c), at each start: MPI lets the library read the
 * send buffer and write the receive buffer at any time until completion,
 * and a persistent request's buffers may hold new data at every start.
 * The algorithm runs under the collective's own tag, so outstanding
 * collectives never take each other's messages (which the blocking forms'
 * fixed tags could not promise here). */
#include "coll/coll_nb.h"
#include "coll/coll_nc.h"

bool coll_nb_nc(const coll_nb_args_t *a)
{
    return (a->sdt != MPI_DATATYPE_NULL && a->sbuf != MPI_IN_PLACE && coll_nc_type(a->sdt)) ||
           (a->rdt != MPI_DATATYPE_NULL && a->rbuf != MPI_IN_PLACE && coll_nc_type(a->rdt));
}

/* b's side takes the packed blocks of p in place of the user's. */
static void use_packed(const coll_nc_pack_t *p, bool vector, const void **buf, int *count, const int **counts,
                       const int **displs, MPI_Datatype *dt)
{
    *buf = p->packed;
    *dt = MPI_BYTE;
    if (vector) {
        *counts = p->bcounts;
        *displs = p->boffs;
    } else {
        *count = p->bcounts[0];
    }
}

int coll_nc_nb_run(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag, coll_nb_fn *fn, bool send_many,
                   bool recv_many)
{
    bool pack_s = a->sdt != MPI_DATATYPE_NULL && a->sbuf != MPI_IN_PLACE && coll_nc_type(a->sdt);
    bool pack_r = a->rdt != MPI_DATATYPE_NULL && a->rbuf != MPI_IN_PLACE && coll_nc_type(a->rdt);
    int ns = send_many ? c->size : 1, nr = recv_many ? c->size : 1;
    coll_nc_side_t ss = { (char *)a->sbuf, a->scounts, a->sdispls, a->scount, a->sdt };
    coll_nc_side_t rs = { a->rbuf, a->rcounts, a->rdispls, a->rcount, a->rdt };
    coll_nc_pack_t sp = { 0 }, rp = { 0 };
    coll_nb_args_t b = *a;
    int err = coll_nc_prepare_sides(&ss, pack_s ? ns : 0, &sp, &rs, pack_r ? nr : 0, &rp);
    if (!err && pack_s) {
        for (int i = 0; i < ns; i++)
            coll_nc_pack(&ss, i, sp.packed, sp.boffs);
        use_packed(&sp, a->scounts != NULL, &b.sbuf, &b.scount, &b.scounts, &b.sdispls, &b.sdt);
    }
    if (!err && pack_r) {
        /* in place, the receive buffer holds what this rank sends: its own
         * block (gather, allgather) or every block (alltoall) */
        if (a->sbuf == MPI_IN_PLACE)
            for (int i = 0; i < nr; i++)
                if (send_many || i == c->rank)
                    coll_nc_pack(&rs, i, rp.packed, rp.boffs);
        const void *rbuf;
        use_packed(&rp, a->rcounts != NULL, &rbuf, &b.rcount, &b.rcounts, &b.rdispls, &b.rdt);
        b.rbuf = (void *)rbuf;
    }
    if (!err)
        err = fn(r, c, &b, tag);
    if (!err && pack_r)
        for (int i = 0; i < nr; i++)
            coll_nc_unpack(&rs, i, rp.packed, rp.bcounts, rp.boffs);
    coll_nc_release(&sp);
    coll_nc_release(&rp);
    return err;
}

int coll_nc_nb_bcast(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    coll_nc_side_t s = { a->rbuf, NULL, NULL, a->rcount, a->rdt };
    coll_nc_pack_t p = { 0 };
    bool root = c->rank == a->root;
    int err = coll_nc_prepare(&s, 1, &p);
    if (!err && root)
        coll_nc_pack(&s, 0, p.packed, p.boffs);
    if (!err)
        err = coll_bcast(r, c, p.packed, p.total, a->root, tag);
    if (!err && !root)
        coll_nc_unpack(&s, 0, p.packed, p.bcounts, p.boffs);
    coll_nc_release(&p);
    return err;
}
