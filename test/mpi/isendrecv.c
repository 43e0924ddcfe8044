/* isendrecv.c - MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0): ring
 * shifts (the status names the left neighbour, tag and count), a strided
 * datatype on both sides, MPI_PROC_NULL ends, and matching order: the
 * receive of an MPI_Isendrecv is posted at the call, so it takes the first
 * of two messages with the same envelope, an MPI_Irecv posted after it the
 * second. */
#include "mpitest.h"

#if MPI_VERSION >= 4 || defined(AMPI_UCX)

#define N 1000

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = mt_malloc(N * sizeof(int)), *in = mt_malloc(N * sizeof(int));
    MPI_Request rq;
    MPI_Status st;
    int count = -1;

    /* a ring shift */
    mt_fill_int(out, N, rank, right, 1);
    MPI_Isendrecv(out, N, MPI_INT, right, 11, in, N, MPI_INT, left, 11, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    if (mt_check_int(in, N, left, rank, 1) >= 0 || st.MPI_SOURCE != left || st.MPI_TAG != 11 || count != N)
        errs += mt_fail(rank, "ring shift: data, source %d, tag %d or count %d wrong", st.MPI_SOURCE, st.MPI_TAG,
                        count);

    /* in place, every other int (a vector type) */
    MPI_Datatype every_other;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < N; i++)
        in[i] = i % 2 ? -i : rank * N + i;
    MPI_Isendrecv_replace(in, 1, every_other, right, 12, left, 12, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    for (int i = 0; i < N; i++) {
        int want = i % 2 ? -i : left * N + i;
        if (in[i] != want) {
            errs += mt_fail(rank, "replace: in[%d] = %d, expected %d", i, in[i], want);
            break;
        }
    }
    MPI_Type_free(&every_other);

    /* MPI_PROC_NULL on both sides */
    MPI_Isendrecv(out, N, MPI_INT, MPI_PROC_NULL, 13, in, N, MPI_INT, MPI_PROC_NULL, 13, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    if (st.MPI_SOURCE != MPI_PROC_NULL || count != 0)
        errs += mt_fail(rank, "MPI_PROC_NULL: source %d count %d", st.MPI_SOURCE, count);

    /* matching order: the left neighbour sends 1 then 2 with one envelope */
    int first = -1, second = -1, one = 1, two = 2, dummy = 0;
    MPI_Request r2[3];
    MPI_Isendrecv(&dummy, 0, MPI_INT, MPI_PROC_NULL, 0, &first, 1, MPI_INT, left, 14, MPI_COMM_WORLD, &r2[0]);
    MPI_Irecv(&second, 1, MPI_INT, left, 14, MPI_COMM_WORLD, &r2[1]);
    MPI_Barrier(MPI_COMM_WORLD); /* both receives are posted everywhere */
    MPI_Send(&one, 1, MPI_INT, right, 14, MPI_COMM_WORLD);
    MPI_Isend(&two, 1, MPI_INT, right, 14, MPI_COMM_WORLD, &r2[2]);
    MPI_Waitall(3, r2, MPI_STATUSES_IGNORE);
    if (first != 1 || second != 2)
        errs += mt_fail(rank, "matching order: %d then %d, expected 1 then 2", first, second);

    free(out);
    free(in);
    mt_finish(errs, "isendrecv: OK");
    MPI_Finalize();
    return 0;
}

#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (mt_rank() == 0)
        printf("isendrecv: OK (skipped: MPI %d has no MPI_Isendrecv)\n", MPI_VERSION);
    MPI_Finalize();
    return 0;
}
#endif
