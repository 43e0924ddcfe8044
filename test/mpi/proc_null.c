/* proc_null.c - MPI_PROC_NULL as source or destination: every send mode
 * succeeds at once, receives and probes complete with source MPI_PROC_NULL,
 * tag MPI_ANY_TAG and count 0 and leave the buffer alone; Mprobe gives
 * MPI_MESSAGE_NO_PROC.  Ends with a non-periodic shift, where the ends talk
 * to MPI_PROC_NULL and the inner ranks exchange real data. */
#include "mpitest.h"

enum { LEN = 16, TAG = 5, GUARD = 0x5eed };

static int check_null_status(int rank, const char *what, const MPI_Status *st)
{
    int n = -1, errs = 0;
    MPI_Get_count(st, MPI_INT, &n);
    if (st->MPI_SOURCE != MPI_PROC_NULL)
        errs += mt_fail(rank, "%s: source %d, expected MPI_PROC_NULL", what,
                        st->MPI_SOURCE);
    if (st->MPI_TAG != MPI_ANY_TAG)
        errs += mt_fail(rank, "%s: tag %d, expected MPI_ANY_TAG", what,
                        st->MPI_TAG);
    if (n != 0)
        errs += mt_fail(rank, "%s: count %d, expected 0", what, n);
    return errs;
}

static int check_untouched(int rank, const char *what, const int *buf)
{
    for (int i = 0; i < LEN; i++)
        if (buf[i] != GUARD + i)
            return mt_fail(rank, "%s: receive buffer modified at %d", what, i);
    return 0;
}

static void guard(int *buf)
{
    for (int i = 0; i < LEN; i++)
        buf[i] = GUARD + i;
}

static int sends(int rank)
{
    int out[LEN], errs = 0, rc[8], k = 0;
    MPI_Request req[4];
    char bbuf[LEN * sizeof(int) + MPI_BSEND_OVERHEAD];
    mt_fill_int(out, LEN, rank, 0, 1);
    MPI_Buffer_attach(bbuf, (int)sizeof bbuf);
    rc[k++] = MPI_Send(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD);
    rc[k++] = MPI_Ssend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD);
    rc[k++] = MPI_Rsend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD);
    rc[k++] = MPI_Bsend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD);
    MPI_Isend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &req[0]);
    MPI_Issend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &req[1]);
    MPI_Irsend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &req[2]);
    MPI_Ibsend(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &req[3]);
    int flag = 0;
    for (int tries = 0; tries < 1000 && !flag; tries++)
        MPI_Testall(4, req, &flag, MPI_STATUSES_IGNORE);
    if (!flag)
        errs += mt_fail(rank, "nonblocking sends to MPI_PROC_NULL pending");
    for (int i = 0; i < k; i++)
        if (rc[i] != MPI_SUCCESS)
            errs += mt_fail(rank, "blocking send %d to MPI_PROC_NULL gave %d", i,
                            rc[i]);
    void *addr;
    int size;
    MPI_Buffer_detach(&addr, &size);

    /* persistent send to MPI_PROC_NULL */
    MPI_Request p;
    MPI_Send_init(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &p);
    for (int it = 0; it < 3; it++) {
        MPI_Start(&p);
        MPI_Wait(&p, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&p);
    return errs;
}

static int receives(int rank)
{
    int buf[LEN], errs = 0, flag = 0;
    MPI_Status st;
    MPI_Request req;
    MPI_Message msg;

    guard(buf);
    MPI_Recv(buf, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &st);
    errs += check_null_status(rank, "Recv", &st);
    errs += check_untouched(rank, "Recv", buf);

    MPI_Recv(buf, LEN, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD,
             &st);
    errs += check_null_status(rank, "Recv ANY_TAG", &st);

    MPI_Irecv(buf, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    errs += check_null_status(rank, "Irecv+Wait", &st);
    errs += check_untouched(rank, "Irecv", buf);

    MPI_Irecv(buf, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &req);
    for (int tries = 0; tries < 1000 && !flag; tries++)
        MPI_Test(&req, &flag, &st);
    if (!flag)
        errs += mt_fail(rank, "Irecv from MPI_PROC_NULL not complete");
    else
        errs += check_null_status(rank, "Irecv+Test", &st);

    MPI_Probe(MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &st);
    errs += check_null_status(rank, "Probe", &st);
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag)
        errs += mt_fail(rank, "Iprobe(MPI_PROC_NULL) flag false");
    errs += check_null_status(rank, "Iprobe", &st);

    MPI_Mprobe(MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &msg, &st);
    if (msg != MPI_MESSAGE_NO_PROC)
        errs += mt_fail(rank, "Mprobe(MPI_PROC_NULL): not MPI_MESSAGE_NO_PROC");
    errs += check_null_status(rank, "Mprobe", &st);
    MPI_Mrecv(buf, LEN, MPI_INT, &msg, &st);
    errs += check_null_status(rank, "Mrecv", &st);
    errs += check_untouched(rank, "Mrecv", buf);
    if (msg != MPI_MESSAGE_NULL)
        errs += mt_fail(rank, "Mrecv(NO_PROC) left the message handle");

    flag = 0;
    MPI_Improbe(MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    if (!flag || msg != MPI_MESSAGE_NO_PROC)
        errs += mt_fail(rank, "Improbe(MPI_PROC_NULL): flag %d or wrong "
                        "handle", flag);
    else {
        MPI_Imrecv(buf, LEN, MPI_INT, &msg, &req);
        MPI_Wait(&req, &st);
        errs += check_null_status(rank, "Imrecv", &st);
    }

    MPI_Request p;
    MPI_Recv_init(buf, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &p);
    MPI_Start(&p);
    MPI_Wait(&p, &st);
    errs += check_null_status(rank, "Recv_init", &st);
    MPI_Request_free(&p);
    errs += check_untouched(rank, "all receives", buf);

    int out[LEN];
    mt_fill_int(out, LEN, rank, rank, 2);
    MPI_Sendrecv(out, LEN, MPI_INT, MPI_PROC_NULL, TAG, buf, LEN, MPI_INT,
                 MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &st);
    errs += check_null_status(rank, "Sendrecv", &st);
    errs += check_untouched(rank, "Sendrecv", buf);
    MPI_Sendrecv_replace(buf, LEN, MPI_INT, MPI_PROC_NULL, TAG, MPI_PROC_NULL,
                         TAG, MPI_COMM_WORLD, &st);
    errs += check_null_status(rank, "Sendrecv_replace", &st);
    errs += check_untouched(rank, "Sendrecv_replace", buf);
    return errs;
}

/* Non-periodic shift to the right: rank 0 receives from PROC_NULL, the last
 * rank sends to PROC_NULL. */
static int shift(int rank, int size)
{
    int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int out[LEN], in[LEN], errs = 0;
    MPI_Status st;
    mt_fill_int(out, LEN, rank, right, 3);
    guard(in);
    MPI_Sendrecv(out, LEN, MPI_INT, right, TAG, in, LEN, MPI_INT, left, TAG,
                 MPI_COMM_WORLD, &st);
    if (left == MPI_PROC_NULL) {
        errs += check_null_status(rank, "shift from PROC_NULL", &st);
        errs += check_untouched(rank, "shift from PROC_NULL", in);
    } else {
        errs += mt_check_status(rank, "shift", &st, MPI_INT, left, TAG, LEN);
        if (mt_check_int(in, LEN, left, rank, 3) >= 0)
            errs += mt_fail(rank, "shift: data from %d wrong", left);
    }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;

    errs += sends(rank);
    errs += receives(rank);
    errs += shift(rank, size);

    char ok[80];
    snprintf(ok, sizeof ok, "proc_null: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
