/* stale_request.c - a copy of a request handle kept after the request was
 * retired is no longer a request: with MPI_ERRORS_RETURN every call given
 * such a copy returns MPI_ERR_REQUEST and changes nothing (no second
 * release of the request, which used to show as a double free at exit).
 * Cases: Wait, Test, Request_free, Request_get_status, Waitall, Waitany,
 * Testsome, Cancel and Start on copies of requests completed by Wait, by
 * Test, by Waitall, and of one freed with Request_free while it still ran.
 * Each rank exchanges with its ring neighbours, and the data is checked.
 * (A stale handle whose request's memory already serves a new request of
 * the rank names that request: handles are addresses.) */
#include "mpitest.h"

enum { TAG = 11, N = 64 };

static int expect_req_error(int rank, const char *what, int err)
{
    int cls = MPI_SUCCESS;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &cls);
    if (cls != MPI_ERR_REQUEST)
        return mt_fail(rank, "%s on a stale request returned %d (class %d), expected MPI_ERR_REQUEST", what, err,
                       cls);
    return 0;
}

/* One exchange with the ring neighbours; returns the receive's handle and
 * keeps the send's in *send. */
static MPI_Request exchange(int *sbuf, int *rbuf, int rank, int size, int round, MPI_Request *send)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request recv;
    mt_fill_int(sbuf, N, rank, to, (uint32_t)round);
    MPI_Irecv(rbuf, N, MPI_INT, from, TAG + round, MPI_COMM_WORLD, &recv);
    MPI_Isend(sbuf, N, MPI_INT, to, TAG + round, MPI_COMM_WORLD, send);
    return recv;
}

static int check_data(int rank, int size, const int *rbuf, int round)
{
    int from = (rank + size - 1) % size;
    long bad = mt_check_int(rbuf, N, from, rank, (uint32_t)round);
    return bad >= 0 ? mt_fail(rank, "round %d: element %ld wrong", round, bad) : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0, flag = 0, idx = 0, outcount = 0, indices[2];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int sbuf[N], rbuf[N];
    MPI_Status st;

    /* completed by Wait */
    MPI_Request send, recv = exchange(sbuf, rbuf, rank, size, 0, &send);
    MPI_Request send_copy = send, recv_copy = recv;
    MPI_Wait(&recv, &st);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    errs += check_data(rank, size, rbuf, 0);
    if (recv != MPI_REQUEST_NULL || send != MPI_REQUEST_NULL)
        errs += mt_fail(rank, "Wait did not set the handles to MPI_REQUEST_NULL");
    errs += expect_req_error(rank, "MPI_Wait", MPI_Wait(&recv_copy, MPI_STATUS_IGNORE));
    errs += expect_req_error(rank, "MPI_Test", MPI_Test(&send_copy, &flag, MPI_STATUS_IGNORE));
    errs += expect_req_error(rank, "MPI_Request_free", MPI_Request_free(&recv_copy));
    errs += expect_req_error(rank, "MPI_Request_get_status", MPI_Request_get_status(send_copy, &flag, &st));
    errs += expect_req_error(rank, "MPI_Cancel", MPI_Cancel(&recv_copy));
    errs += expect_req_error(rank, "MPI_Start", MPI_Start(&recv_copy));

    /* completed by Test */
    recv = exchange(sbuf, rbuf, rank, size, 1, &send);
    recv_copy = recv;
    flag = 0;
    while (!flag)
        MPI_Test(&recv, &flag, MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    errs += check_data(rank, size, rbuf, 1);
    errs += expect_req_error(rank, "MPI_Wait after Test", MPI_Wait(&recv_copy, MPI_STATUS_IGNORE));

    /* completed by Waitall; a stale handle among live ones in Waitany and
     * Testsome leaves the live ones alone.  The live ones start first: a
     * retired request's memory serves the rank's next request (handles are
     * addresses), and a stale handle then names that one. */
    int sbuf2[N], rbuf2[N];
    MPI_Request live[2], pair[2];
    live[0] = exchange(sbuf2, rbuf2, rank, size, 3, &live[1]);
    pair[0] = exchange(sbuf, rbuf, rank, size, 2, &pair[1]);
    MPI_Request pair_copy[2] = { pair[0], pair[1] };
    MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
    errs += check_data(rank, size, rbuf, 2);
    errs += expect_req_error(rank, "MPI_Waitall", MPI_Waitall(2, pair_copy, MPI_STATUSES_IGNORE));
    MPI_Request mixed[2] = { live[0], pair_copy[1] };
    errs += expect_req_error(rank, "MPI_Waitany", MPI_Waitany(2, mixed, &idx, MPI_STATUS_IGNORE));
    errs += expect_req_error(rank, "MPI_Testsome", MPI_Testsome(2, mixed, &outcount, indices, MPI_STATUSES_IGNORE));
    if (mixed[0] != live[0])
        errs += mt_fail(rank, "a call that failed on a stale handle changed a live one");
    MPI_Waitall(2, live, MPI_STATUSES_IGNORE);
    errs += check_data(rank, size, rbuf2, 3);

    /* Request_free while the receive may still run: the copy is stale at once */
    recv = exchange(sbuf, rbuf, rank, size, 4, &send);
    MPI_Request freed_copy = send;
    MPI_Request_free(&send);
    errs += expect_req_error(rank, "MPI_Wait after Request_free", MPI_Wait(&freed_copy, MPI_STATUS_IGNORE));
    MPI_Wait(&recv, MPI_STATUS_IGNORE);
    errs += check_data(rank, size, rbuf, 4);
    /* the freed send completes before anyone reuses its buffer */
    MPI_Barrier(MPI_COMM_WORLD);

    mt_finish(errs, "stale_request: stale handles give MPI_ERR_REQUEST OK");
    MPI_Finalize();
    return 0;
}
