/* probe.c - Probe/Iprobe/Mprobe/Improbe/Mrecv/Imrecv with specific and
 * wildcard source and tag, between rank pairs (even sends, odd probes), and
 * Probe/Mprobe of messages a rank sends to itself.  Checks that probing
 * does not consume a message, that a matched (Mprobe) message is no longer
 * visible to probes, Get_count/Get_elements with MPI_INT, Get_count giving
 * MPI_UNDEFINED for a size that is not a multiple of the type, and that
 * Iprobe/Improbe say "nothing" once everything was received. */
#include "mpitest.h"

enum { TAG1 = 30, TAG2, TAG3, TAG4, TAG5, TAG6, TAG_ACK, TAG_LAST, TAG_SELF };
enum { N1 = 10, N2 = 7, N3A = 5, N3B = 9, N4 = 1 << 16, N5 = 1000,
       N6 = 1 << 18, NSEND = 7 };

static int check_env(int rank, const char *what, const MPI_Status *st,
                     MPI_Datatype type, int src, int tag, int count)
{
    return mt_check_status(rank, what, st, type, src, tag, count);
}

static int check_ints(int rank, const char *what, const int *buf, int n,
                      int src, uint32_t key)
{
    long bad = mt_check_int(buf, (size_t)n, src, rank, key);
    return bad < 0 ? 0 : mt_fail(rank, "%s: data wrong at int %ld", what, bad);
}

static void sender(int rank, int peer)
{
    int *m1 = mt_malloc(N1 * sizeof(int)), *m3a = mt_malloc(N3A * sizeof(int));
    int *m3b = mt_malloc(N3B * sizeof(int)), *m4 = mt_malloc(N4 * sizeof(int));
    int *m6 = mt_malloc(N6 * sizeof(int));
    double *m5 = mt_malloc(N5 * sizeof(double));
    char m2[N2];
    MPI_Request req[NSEND];
    const mt_type dbl = {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"};
    const mt_type chr = {MPI_CHAR, 1, "MPI_CHAR"};

    mt_fill_int(m1, N1, rank, peer, 1);
    mt_fill(m2, &chr, N2, rank, peer, 2);
    mt_fill_int(m3a, N3A, rank, peer, 3);
    mt_fill_int(m3b, N3B, rank, peer, 4);
    mt_fill_int(m4, N4, rank, peer, 5);
    mt_fill(m5, &dbl, N5, rank, peer, 6);
    mt_fill_int(m6, N6, rank, peer, 7);
    MPI_Isend(m1, N1, MPI_INT, peer, TAG1, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(m2, N2, MPI_CHAR, peer, TAG2, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(m3a, N3A, MPI_INT, peer, TAG3, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(m3b, N3B, MPI_INT, peer, TAG3, MPI_COMM_WORLD, &req[3]);
    MPI_Isend(m4, N4, MPI_INT, peer, TAG4, MPI_COMM_WORLD, &req[4]);
    MPI_Isend(m5, N5, MPI_DOUBLE, peer, TAG5, MPI_COMM_WORLD, &req[5]);
    MPI_Isend(m6, N6, MPI_INT, peer, TAG6, MPI_COMM_WORLD, &req[6]);
    MPI_Waitall(NSEND, req, MPI_STATUSES_IGNORE);

    int ack;
    MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Send(NULL, 0, MPI_INT, peer, TAG_LAST, MPI_COMM_WORLD);
    free(m1); free(m3a); free(m3b); free(m4); free(m5); free(m6);
}

static int receiver(int rank, int peer)
{
    int errs = 0, flag = 0, n = -1;
    MPI_Status st, st2;
    MPI_Message msg;

    /* 1: Probe twice (not consumed), counts, then Recv */
    int m1[N1];
    MPI_Probe(peer, TAG1, MPI_COMM_WORLD, &st);
    errs += check_env(rank, "Probe msg1", &st, MPI_INT, peer, TAG1, N1);
    MPI_Get_elements(&st, MPI_INT, &n);
    if (n != N1)
        errs += mt_fail(rank, "Get_elements(MPI_INT) %d, expected %d", n, N1);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st2);
    errs += check_env(rank, "second Probe msg1", &st2, MPI_INT, peer, TAG1,
                      N1);
    MPI_Recv(m1, N1, MPI_INT, peer, TAG1, MPI_COMM_WORLD, &st);
    errs += check_ints(rank, "msg1", m1, N1, peer, 1);

    /* 2: Iprobe with wildcards; 7 chars are not a whole number of ints */
    char m2[N2];
    const mt_type chr = {MPI_CHAR, 1, "MPI_CHAR"};
    do
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    while (!flag);
    errs += check_env(rank, "Iprobe msg2", &st, MPI_CHAR, peer, TAG2, N2);
    MPI_Get_count(&st, MPI_INT, &n);
    if (n != MPI_UNDEFINED)
        errs += mt_fail(rank, "Get_count(MPI_INT) of 7 bytes gave %d, not "
                        "MPI_UNDEFINED", n);
    MPI_Recv(m2, N2, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
    if (mt_check(m2, &chr, N2, peer, rank, 2) >= 0)
        errs += mt_fail(rank, "msg2: data wrong");

    /* 3: Mprobe takes msg3a out of matching; Iprobe then sees msg3b */
    int m3a[N3A], m3b[N3B];
    MPI_Mprobe(MPI_ANY_SOURCE, TAG3, MPI_COMM_WORLD, &msg, &st);
    errs += check_env(rank, "Mprobe msg3a", &st, MPI_INT, peer, TAG3, N3A);
    do
        MPI_Iprobe(peer, TAG3, MPI_COMM_WORLD, &flag, &st2);
    while (!flag);
    errs += check_env(rank, "Iprobe after Mprobe", &st2, MPI_INT, peer, TAG3,
                      N3B);
    MPI_Mrecv(m3a, N3A, MPI_INT, &msg, &st);
    if (msg != MPI_MESSAGE_NULL)
        errs += mt_fail(rank, "Mrecv did not reset the message handle");
    errs += check_env(rank, "Mrecv msg3a", &st, MPI_INT, peer, TAG3, N3A);
    errs += check_ints(rank, "msg3a", m3a, N3A, peer, 3);
    MPI_Recv(m3b, N3B, MPI_INT, peer, TAG3, MPI_COMM_WORLD, &st);
    errs += check_ints(rank, "msg3b", m3b, N3B, peer, 4);

    /* 4: Improbe specific source, any tag; Imrecv of 256 KiB */
    int *m4 = mt_malloc(N4 * sizeof(int));
    MPI_Request req;
    do
        MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    while (!flag);
    errs += check_env(rank, "Improbe msg4", &st, MPI_INT, peer, TAG4, N4);
    MPI_Imrecv(m4, N4, MPI_INT, &msg, &req);
    if (msg != MPI_MESSAGE_NULL)
        errs += mt_fail(rank, "Imrecv did not reset the message handle");
    MPI_Wait(&req, &st);
    errs += check_env(rank, "Imrecv msg4", &st, MPI_INT, peer, TAG4, N4);
    errs += check_ints(rank, "msg4", m4, N4, peer, 5);
    free(m4);

    /* 5: Improbe with wildcards, doubles, Mrecv */
    const mt_type dbl = {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"};
    double *m5 = mt_malloc(N5 * sizeof(double));
    do
        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg,
                    &st);
    while (!flag);
    errs += check_env(rank, "Improbe msg5", &st, MPI_DOUBLE, peer, TAG5, N5);
    MPI_Mrecv(m5, N5, MPI_DOUBLE, &msg, &st);
    if (mt_check(m5, &dbl, N5, peer, rank, 6) >= 0)
        errs += mt_fail(rank, "msg5: data wrong");
    free(m5);

    /* 6: size a buffer from Probe, for a 1 MiB message */
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    errs += check_env(rank, "Probe msg6", &st, MPI_INT, peer, TAG6, N6);
    if (n == N6) {
        int *m6 = mt_malloc((size_t)n * sizeof(int));
        MPI_Recv(m6, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 &st);
        errs += check_ints(rank, "msg6", m6, N6, peer, 7);
        free(m6);
    }

    /* everything consumed: probes must find nothing until we ack */
    MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag)
        errs += mt_fail(rank, "Iprobe found a message (tag %d) after all "
                        "were received", st.MPI_TAG);
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    if (flag)
        errs += mt_fail(rank, "Improbe found a message after all were "
                        "received");
    int ack = 1;
    MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
    MPI_Probe(peer, TAG_LAST, MPI_COMM_WORLD, &st);
    errs += check_env(rank, "Probe of empty message", &st, MPI_INT, peer,
                      TAG_LAST, 0);
    MPI_Recv(NULL, 0, MPI_INT, peer, TAG_LAST, MPI_COMM_WORLD, &st);
    return errs;
}

/* Probe and Mprobe of messages to ourselves. */
static int self_probe(int rank)
{
    int out[3], in[3], errs = 0;
    MPI_Request req[2];
    MPI_Status st;
    MPI_Message msg;
    mt_fill_int(out, 3, rank, rank, 9);
    MPI_Isend(out, 3, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 2, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req[1]);
    MPI_Probe(rank, TAG_SELF, MPI_COMM_WORLD, &st);
    errs += check_env(rank, "self Probe", &st, MPI_INT, rank, TAG_SELF, 3);
    MPI_Mprobe(rank, TAG_SELF, MPI_COMM_WORLD, &msg, &st);
    errs += check_env(rank, "self Mprobe", &st, MPI_INT, rank, TAG_SELF, 3);
    MPI_Mrecv(in, 3, MPI_INT, &msg, &st);
    errs += check_ints(rank, "self Mrecv", in, 3, rank, 9);
    MPI_Mprobe(MPI_ANY_SOURCE, TAG_SELF, MPI_COMM_WORLD, &msg, &st);
    errs += check_env(rank, "second self Mprobe", &st, MPI_INT, rank, TAG_SELF,
                      2);
    MPI_Mrecv(in, 2, MPI_INT, &msg, &st);
    errs += check_ints(rank, "second self Mrecv", in, 2, rank, 9);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;

    errs += self_probe(rank);
    /* the receivers' wildcard probes must only see their partner's messages */
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer < size) {
        if (rank % 2 == 0)
            sender(rank, peer);
        else
            errs += receiver(rank, peer);
    } else if (size == 1) {
        mt_skipped("probe: 1 rank, the pair tests need 2");
    }

    char ok[80];
    snprintf(ok, sizeof ok, "probe: %d ranks OK", size);
    mt_finish(errs, ok);
    MPI_Finalize();
    return 0;
}
