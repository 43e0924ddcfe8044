/* node_layout.c - MPI_COMM_TYPE_SHARED names the ranks of one node, and
 * messages between every pair of ranks (same process, same node, other
 * node) arrive intact.
 *
 * Each rank learns its host name; the ranks of its shared communicator must
 * be exactly the ranks of the world that report the same host name (the
 * test bed gives every node its own UTS namespace).  Then every rank sends a
 * patterned buffer of several sizes (eager, rendezvous, CMA-sized) to every
 * other rank and checks what it receives.  Prints "node_layout OK". */
#include "../mpi/mpitest.h"

#include <unistd.h>

#define HOST_LEN 64

static int check_shared_comm(int rank, int size, const char *hosts)
{
    int errs = 0;
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return mt_fail(rank, "MPI_Comm_split_type failed");
    int nsize, nrank;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_rank(node, &nrank);
    int expect = 0;
    for (int r = 0; r < size; r++)
        expect += strcmp(hosts + (size_t)r * HOST_LEN, hosts + (size_t)rank * HOST_LEN) == 0;
    if (nsize != expect)
        errs += mt_fail(rank, "shared communicator has %d ranks, %d ranks share host %s", nsize, expect,
                        hosts + (size_t)rank * HOST_LEN);
    /* its members are those ranks, in world order (key = world rank) */
    int *members = mt_malloc(sizeof(int) * (size_t)nsize);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node);
    for (int i = 0; i < nsize; i++) {
        if (strcmp(hosts + (size_t)members[i] * HOST_LEN, hosts + (size_t)rank * HOST_LEN) != 0)
            errs += mt_fail(rank, "world rank %d in my shared communicator runs on %s, I on %s", members[i],
                            hosts + (size_t)members[i] * HOST_LEN, hosts + (size_t)rank * HOST_LEN);
        if (i > 0 && members[i] <= members[i - 1])
            errs += mt_fail(rank, "shared communicator out of world order at %d", i);
    }
    if (members[nrank] != rank)
        errs += mt_fail(rank, "my place in the shared communicator is %d, holding world rank %d", nrank,
                        members[nrank]);
    free(members);
    MPI_Comm_free(&node);
    return errs;
}

static int exchange_all_pairs(int rank, int size)
{
    static const size_t sizes[] = { 1, 4096, 65536, 1 << 20 };
    int errs = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        for (int shift = 1; shift < size; shift++) {
            int to = (rank + shift) % size, from = (rank - shift + size) % size;
            unsigned char *out = mt_malloc(n), *in = mt_malloc(n);
            for (size_t i = 0; i < n; i++)
                out[i] = (unsigned char)(rank * 31 + to * 7 + i * 13 + s);
            memset(in, 0xee, n);
            MPI_Status st;
            MPI_Sendrecv(out, (int)n, MPI_BYTE, to, (int)s, in, (int)n, MPI_BYTE, from, (int)s, MPI_COMM_WORLD,
                         &st);
            for (size_t i = 0; i < n; i++)
                if (in[i] != (unsigned char)(from * 31 + rank * 7 + i * 13 + s)) {
                    errs += mt_fail(rank, "%zu bytes from rank %d: byte %zu is %d", n, from, i, in[i]);
                    break;
                }
            errs += mt_check_status(rank, "sendrecv", &st, MPI_BYTE, from, (int)s, (int)n);
            free(out);
            free(in);
        }
    }
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char me[HOST_LEN] = { 0 };
    gethostname(me, sizeof me - 1);
    char *hosts = mt_zalloc((size_t)size * HOST_LEN);
    MPI_Allgather(me, HOST_LEN, MPI_CHAR, hosts, HOST_LEN, MPI_CHAR, MPI_COMM_WORLD);
    int errs = check_shared_comm(rank, size, hosts);
    errs += exchange_all_pairs(rank, size);
    free(hosts);
    mt_finish(errs, "node_layout OK");
    MPI_Finalize();
    return 0;
}
