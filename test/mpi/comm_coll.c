/* comm_coll.c - collectives on derived communicators.
 *
 * Bcast (root 0 and the last rank), Allreduce (sum, max), Allgather,
 * Alltoall, Reduce and Gather on: a split into three colors ordered by
 * descending world rank, a dup of MPI_COMM_WORLD, a dup of that split, and
 * a Comm_create of the even world ranks.  Counts 1, 1000 and 20000 (past the eager limit).  Every
 * input is a hash of (world rank of the contributor, index, case), so each
 * rank computes every expected result from the communicator's member list
 * (obtained independently, from the split arguments).  Between the cases
 * each rank posts a wildcard receive on the parent communicator that must
 * still be empty afterwards: collective traffic never matches it. */
#include "mpitest.h"

enum { TAG_NEVER = 99 };

static int val(int world, size_t i, int key) { return (int)(mt_hash((uint32_t)world, (uint32_t)i, (uint32_t)key, 7) % 1000u); }

typedef struct {
    MPI_Comm comm;
    const char *name;
    int me_world, rank, size;
    const int *world; /* world rank of each member */
} cc_t;

static int fail_at(const cc_t *t, const char *what, int count, size_t i, long got, long want)
{
    return mt_fail(t->me_world, "%s on %s, count %d: element %zu is %ld, expected %ld", what, t->name, count, i, got,
                   want);
}

static int run_cases(const cc_t *t, int count, int key)
{
    int errs = 0, n = t->size;
    size_t cnt = (size_t)count;
    int *a = mt_malloc(cnt * sizeof *a), *b = mt_malloc(cnt * (size_t)n * sizeof *b);
    int *c = mt_malloc(cnt * (size_t)n * sizeof *c);

    for (int root = 0; root < n; root += n - 1 > 0 ? n - 1 : 1) {
        for (size_t i = 0; i < cnt; i++)
            a[i] = t->rank == root ? val(t->world[root], i, key) : -1;
        MPI_Bcast(a, count, MPI_INT, root, t->comm);
        for (size_t i = 0; i < cnt; i++)
            if (a[i] != val(t->world[root], i, key)) {
                errs += fail_at(t, "Bcast", count, i, a[i], val(t->world[root], i, key));
                break;
            }
        if (n == 1)
            break;
    }

    for (size_t i = 0; i < cnt; i++)
        a[i] = val(t->me_world, i, key + 1);
    MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, t->comm);
    MPI_Allreduce(a, c, count, MPI_INT, MPI_MAX, t->comm);
    for (size_t i = 0; i < cnt; i++) {
        long sum = 0, max = -1;
        for (int r = 0; r < n; r++) {
            int v = val(t->world[r], i, key + 1);
            sum += v;
            max = v > max ? v : max;
        }
        if (b[i] != sum || c[i] != max) {
            errs += fail_at(t, b[i] != sum ? "Allreduce sum" : "Allreduce max", count, i, b[i] != sum ? b[i] : c[i],
                            b[i] != sum ? sum : max);
            break;
        }
    }

    MPI_Reduce(a, b, count, MPI_INT, MPI_SUM, n - 1, t->comm);
    if (t->rank == n - 1)
        for (size_t i = 0; i < cnt; i++) {
            long sum = 0;
            for (int r = 0; r < n; r++)
                sum += val(t->world[r], i, key + 1);
            if (b[i] != sum) {
                errs += fail_at(t, "Reduce", count, i, b[i], sum);
                break;
            }
        }

    MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, t->comm);
    MPI_Gather(a, count, MPI_INT, c, count, MPI_INT, 0, t->comm);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < cnt; i++) {
            int want = val(t->world[r], i, key + 1);
            if (b[(size_t)r * cnt + i] != want) {
                errs += fail_at(t, "Allgather", count, (size_t)r * cnt + i, b[(size_t)r * cnt + i], want);
                r = n;
                break;
            }
            if (t->rank == 0 && c[(size_t)r * cnt + i] != want) {
                errs += fail_at(t, "Gather", count, (size_t)r * cnt + i, c[(size_t)r * cnt + i], want);
                r = n;
                break;
            }
        }

    /* alltoall: block for r carries hash(me, r); count capped for memory */
    size_t blk = cnt < 2000 ? cnt : 2000;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < blk; i++)
            b[(size_t)r * blk + i] = (int)(mt_hash((uint32_t)t->me_world, (uint32_t)t->world[r], (uint32_t)i,
                                                   (uint32_t)key) & 0x7fffffff);
    MPI_Alltoall(b, (int)blk, MPI_INT, c, (int)blk, MPI_INT, t->comm);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < blk; i++) {
            int want = (int)(mt_hash((uint32_t)t->world[r], (uint32_t)t->me_world, (uint32_t)i, (uint32_t)key) &
                             0x7fffffff);
            if (c[(size_t)r * blk + i] != want) {
                errs += fail_at(t, "Alltoall", (int)blk, (size_t)r * blk + i, c[(size_t)r * blk + i], want);
                r = n;
                break;
            }
        }
    free(a);
    free(b);
    free(c);
    return errs;
}

/* Runs every case on t while a wildcard receive waits on `parent`. */
static int run_all(const cc_t *t, MPI_Comm parent, int key)
{
    int errs = 0, never = -1, flag = 0;
    MPI_Request rq;
    MPI_Irecv(&never, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, parent, &rq);
    int counts[3] = { 1, 1000, 20000 };
    for (int k = 0; k < 3; k++)
        errs += run_cases(t, counts[k], key + 10 * k);
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    if (flag)
        errs += mt_fail(t->me_world, "collectives on %s matched a wildcard receive on the parent", t->name);
    /* release the receive: a message of our own */
    int prank;
    MPI_Comm_rank(parent, &prank);
    MPI_Send(&prank, 1, MPI_INT, prank, TAG_NEVER, parent);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (never != prank)
        errs += mt_fail(t->me_world, "the wildcard receive on the parent got %d, expected %d", never, prank);
    return errs;
}

static cc_t describe(MPI_Comm comm, const char *name, int me, const int *world)
{
    cc_t t = { comm, name, me, -1, -1, world };
    MPI_Comm_rank(comm, &t.rank);
    MPI_Comm_size(comm, &t.size);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), size = mt_size(), errs = 0;
    int *ident = mt_malloc((size_t)size * sizeof *ident), *members = mt_malloc((size_t)size * sizeof *members);
    int *evens = mt_malloc((size_t)size * sizeof *evens);
    for (int i = 0; i < size; i++)
        ident[i] = i;
    int nm = 0, ne = 0;
    for (int r = size - 1; r >= 0; r--) /* my color, descending world rank */
        if (r % 3 == me % 3)
            members[nm++] = r;
    for (int r = 0; r < size; r += 2)
        evens[ne++] = r;

    MPI_Comm split, dup, splitdup, even = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, me % 3, size - me, &split);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(split, &splitdup);
    MPI_Group wg, eg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, ne, evens, &eg);
    MPI_Comm_create(MPI_COMM_WORLD, eg, &even);

    cc_t ts = describe(split, "split", me, members);
    if (ts.size != nm || members[ts.rank] != me)
        errs += mt_fail(me, "split: rank %d size %d, expected size %d", ts.rank, ts.size, nm);
    if (!errs) {
        cc_t td = describe(dup, "dup", me, ident), tsd = describe(splitdup, "dup of split", me, members);
        errs += run_all(&ts, MPI_COMM_WORLD, 1);
        errs += run_all(&td, MPI_COMM_WORLD, 2);
        errs += run_all(&tsd, split, 3);
        if (even != MPI_COMM_NULL) {
            cc_t te = describe(even, "create of evens", me, evens);
            errs += run_all(&te, dup, 4);
        }
    }
    if (even != MPI_COMM_NULL)
        MPI_Comm_free(&even);
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);
    MPI_Comm_free(&splitdup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    free(ident), free(members), free(evens);
    /* mt_finish reports on MPI_COMM_WORLD: not before every wildcard
     * receive on it is done */
    MPI_Barrier(MPI_COMM_WORLD);
    mt_finish(errs, "comm_coll OK");
    MPI_Finalize();
    return 0;
}
