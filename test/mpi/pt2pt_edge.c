/* pt2pt_edge.c - point-to-point corners of MPI 3.1 the library got wrong:
 * buffered sends fit a buffer of exactly their packed sizes plus
 * MPI_BSEND_OVERHEAD each (3.6.1), also at an odd address; MPI_BOTTOM with
 * a struct type of absolute addresses sends and receives (4.1.12), to self
 * and to the next rank; a receive of nothing from MPI_PROC_NULL may name
 * MPI_DATATYPE_NULL. */
#include "mpitest.h"

#include <stdbool.h>

static int test_bsend_exact(int rank, int size)
{
    int errs = 0, to = (rank + 1) % size, from = (rank + size - 1) % size;
    int a[5] = { rank, 1, 2, 3, 4 }, b[3] = { 7, 8, rank }, ra[5], rb[3];
    int sa, sb;
    MPI_Pack_size(5, MPI_INT, MPI_COMM_WORLD, &sa);
    MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &sb);
    int total = sa + sb + 2 * MPI_BSEND_OVERHEAD;
    char *raw = mt_malloc((size_t)total + 1), *buf = raw + 1; /* not aligned */
    MPI_Buffer_attach(buf, total);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e1 = MPI_Bsend(a, 5, MPI_INT, to, 1, MPI_COMM_WORLD);
    int e2 = MPI_Bsend(b, 3, MPI_INT, to, 2, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (e1 || e2)
        errs += mt_fail(rank, "Bsend into a buffer of exactly 2 x (size + MPI_BSEND_OVERHEAD): errors %d %d", e1, e2);
    if (!e1)
        MPI_Recv(ra, 5, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!e2)
        MPI_Recv(rb, 3, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if ((!e1 && (ra[0] != from || ra[4] != 4)) || (!e2 && (rb[0] != 7 || rb[2] != from)))
        errs += mt_fail(rank, "Bsend data from %d: %d %d / %d %d", from, ra[0], ra[4], rb[0], rb[2]);
    void *back;
    int bsize;
    MPI_Buffer_detach(&back, &bsize);
    if (back != buf || bsize != total)
        errs += mt_fail(rank, "Buffer_detach gave %p %d, attached %p %d", back, bsize, (void *)buf, total);
    free(raw);
    return errs;
}

/* A struct of one vector (every other char) at the absolute address of
 * buf: count 2 of it from MPI_BOTTOM is buf[0, 2, 4] and buf[5, 7, 9]. */
static MPI_Datatype at_address(char *buf)
{
    MPI_Datatype v, s;
    MPI_Aint addr;
    int one = 1;
    MPI_Type_vector(3, 1, 2, MPI_CHAR, &v);
    MPI_Get_address(buf, &addr);
    MPI_Type_create_struct(1, &one, &addr, &v, &s);
    MPI_Type_commit(&s);
    MPI_Type_free(&v);
    return s;
}

static int test_bottom(int rank, int size)
{
    int errs = 0, to = (rank + 1) % size, from = (rank + size - 1) % size;
    char src[16], dst[16], flat[6];
    const int pick[6] = { 0, 2, 4, 5, 7, 9 };
    for (int i = 0; i < 16; i++)
        src[i] = (char)(rank * 16 + i), dst[i] = -1;
    MPI_Datatype ts = at_address(src), td = at_address(dst);
    MPI_Sendrecv(MPI_BOTTOM, 2, ts, 0, 3, flat, 6, MPI_CHAR, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    for (int i = 0; i < 6; i++)
        if (flat[i] != src[pick[i]]) {
            errs += mt_fail(rank, "MPI_BOTTOM to self: byte %d is %d, expected %d", i, flat[i], src[pick[i]]);
            break;
        }
    MPI_Sendrecv(MPI_BOTTOM, 2, ts, to, 4, MPI_BOTTOM, 2, td, from, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 16; i++) {
        bool picked = false;
        for (int k = 0; k < 6; k++)
            picked |= pick[k] == i;
        char want = picked ? (char)(from * 16 + i) : -1;
        if (dst[i] != want) {
            errs += mt_fail(rank, "MPI_BOTTOM from %d: byte %d is %d, expected %d", from, i, dst[i], want);
            break;
        }
    }
    MPI_Type_free(&ts);
    MPI_Type_free(&td);
    return errs;
}

static int test_proc_null_type(int rank)
{
    int errs = 0;
    MPI_Request q;
    MPI_Status st;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e1 = MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &q);
    if (!e1)
        MPI_Wait(&q, &st);
    int e2 = MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (e1 || e2 || st.MPI_SOURCE != MPI_PROC_NULL)
        errs += mt_fail(rank, "receive of nothing from MPI_PROC_NULL with MPI_DATATYPE_NULL: errors %d %d", e1, e2);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    errs += test_bsend_exact(rank, size);
    errs += test_bottom(rank, size);
    errs += test_proc_null_type(rank);
    mt_finish(errs, "pt2pt_edge OK");
    MPI_Finalize();
    return 0;
}
