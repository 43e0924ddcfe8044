/* rma_basic.c - windows of every flavor, their attributes, and put/get under
 * every synchronization mode, data checked.
 *
 * Each rank owns N ints.  Under each mode every rank writes a pattern naming
 * (writer, target, index, round) into its right neighbour's window and reads
 * its left neighbour's window back, with contiguous and strided (vector)
 * target types; the receiving side checks every element. */
#include "mpitest.h"

enum { N = 64 };

static int val(int writer, int target, int i, int round) { return writer * 100000 + target * 1000 + i + round * 7; }

static int check_win(int rank, const int *b, int writer, int round, const char *what)
{
    int errs = 0;
    for (int i = 0; i < N; i++)
        if (b[i] != val(writer, rank, i, round)) {
            errs += mt_fail(rank, "%s: element %d is %d, expected %d", what, i, b[i], val(writer, rank, i, round));
            break;
        }
    return errs;
}

/* Fill my window for round, let the neighbours read/write it under `mode`. */
static int exchange(MPI_Win win, int *base, const char *mode, int round)
{
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int src[N], got[N];
    for (int i = 0; i < N; i++)
        src[i] = val(rank, right, i, round);
    memset(got, 0xff, sizeof got);
    MPI_Group wg, ng;
    int nb[2] = { left, right };
    MPI_Win_get_group(win, &wg);
    MPI_Group_incl(wg, left == right ? 1 : 2, nb, &ng);

    /* phase 1: put into the right neighbour */
    if (!strcmp(mode, "fence")) {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
        MPI_Win_fence(0, win);
    } else if (!strcmp(mode, "pscw")) {
        MPI_Win_post(ng, 0, win);
        MPI_Win_start(ng, 0, win);
        MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
    } else if (!strcmp(mode, "lock")) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        MPI_Put(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win);
        MPI_Win_flush(right, win);
        MPI_Put(src + N / 2, N / 2, MPI_INT, right, N / 2, N / 2, MPI_INT, win);
        MPI_Win_unlock(right, win);
        MPI_Barrier(MPI_COMM_WORLD);
    } else { /* lock_all with requests */
        MPI_Request rq[2];
        MPI_Win_lock_all(0, win);
        MPI_Rput(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win, &rq[0]);
        MPI_Rput(src + N / 2, N / 2, MPI_INT, right, N / 2, N / 2, MPI_INT, win, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Win_flush_all(win);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    char what[64];
    snprintf(what, sizeof what, "%s put round %d", mode, round);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* my own window, read locally */
    errs += check_win(rank, base, left, round, what);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* phase 2: get the left neighbour's window (written by its own left) */
    if (!strcmp(mode, "fence")) {
        MPI_Win_fence(0, win);
        MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, win);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    } else if (!strcmp(mode, "pscw")) {
        MPI_Win_post(ng, MPI_MODE_NOPUT, win);
        MPI_Win_start(ng, 0, win);
        MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
    } else if (!strcmp(mode, "lock")) {
        MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
        MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, win);
        MPI_Win_unlock(left, win);
    } else {
        MPI_Request rq;
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Rget(got, N, MPI_INT, left, 0, N, MPI_INT, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Win_unlock_all(win);
    }
    int leftleft = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        if (got[i] != val(leftleft, left, i, round)) {
            errs += mt_fail(rank, "%s get round %d: element %d is %d, expected %d", mode, round, i, got[i],
                            val(leftleft, left, i, round));
            break;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&ng);
    MPI_Group_free(&wg);
    return errs;
}

/* Strided target: every other int of the right neighbour, and back. */
static int strided(MPI_Win win, int *base)
{
    int rank = mt_rank(), size = mt_size(), errs = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int src[N / 2], got[N];
    for (int i = 0; i < N / 2; i++)
        src[i] = 5000 + rank * 10 + i;
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        base[i] = -1;
    MPI_Win_fence(0, win);
    MPI_Put(src, N / 2, MPI_INT, right, 0, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        int want = i % 2 ? -1 : 5000 + left * 10 + i / 2;
        if (base[i] != want) {
            errs += mt_fail(rank, "strided put: element %d is %d, expected %d", i, base[i], want);
            break;
        }
    }
    /* strided origin, contiguous target: the even elements come back packed */
    memset(got, 0, sizeof got);
    MPI_Get(got, 1, vec, right, 0, N / 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        int j = i / 2; /* target element j lands in got[2j] */
        int want = i % 2 ? 0 : (j % 2 ? -1 : 5000 + rank * 10 + j / 2);
        if (got[i] != want) {
            errs += mt_fail(rank, "strided get: element %d is %d, expected %d", i, got[i], want);
            break;
        }
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Type_free(&vec);
    return errs;
}

static int attrs(MPI_Win win, void *base, MPI_Aint size, int unit, int flavor)
{
    int rank = mt_rank(), errs = 0, flag;
    void *b;
    MPI_Aint *s;
    int *u, *f, *m;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag);
    if (!flag || b != base)
        errs += mt_fail(rank, "MPI_WIN_BASE %p, expected %p", b, base);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag);
    if (!flag || *s != size)
        errs += mt_fail(rank, "MPI_WIN_SIZE %ld, expected %ld", (long)*s, (long)size);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &u, &flag);
    if (!flag || *u != unit)
        errs += mt_fail(rank, "MPI_WIN_DISP_UNIT %d, expected %d", *u, unit);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &f, &flag);
    if (!flag || *f != flavor)
        errs += mt_fail(rank, "MPI_WIN_CREATE_FLAVOR %d, expected %d", *f, flavor);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &m, &flag);
    if (!flag || *m != MPI_WIN_UNIFIED)
        errs += mt_fail(rank, "MPI_WIN_MODEL %d", *m);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_set_name(win, "halo window");
    MPI_Win_get_name(win, name, &len);
    if (strcmp(name, "halo window") || len != 11)
        errs += mt_fail(rank, "window name '%s' (%d)", name, len);
    MPI_Group g;
    int gs;
    MPI_Win_get_group(win, &g);
    MPI_Group_size(g, &gs);
    if (gs != mt_size())
        errs += mt_fail(rank, "window group of %d", gs);
    MPI_Group_free(&g);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = mt_rank(), size = mt_size(), errs = 0;
    const char *modes[] = { "fence", "pscw", "lock", "lock_all" };

    /* MPI_Win_create on user memory */
    int *mem = mt_zalloc(N * sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    errs += attrs(win, mem, N * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_CREATE);
    for (int m = 0; m < 4; m++)
        errs += exchange(win, mem, modes[m], m);
    errs += strided(win, mem);
    MPI_Win_free(&win);
    if (win != MPI_WIN_NULL)
        errs += mt_fail(rank, "MPI_Win_free left the handle");

    /* MPI_Win_allocate */
    int *abase;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abase, &win);
    errs += attrs(win, abase, N * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_ALLOCATE);
    for (int m = 0; m < 4; m++)
        errs += exchange(win, abase, modes[m], 10 + m);
    MPI_Win_free(&win);

    /* MPI_Win_allocate_shared: my neighbour's memory is a load away */
    int *sbase;
    MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &sbase, &win);
    errs += attrs(win, sbase, N * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_SHARED);
    for (int m = 0; m < 4; m++)
        errs += exchange(win, sbase, modes[m], 20 + m);
    {
        MPI_Aint qs;
        int qu;
        int *rb;
        int right = (rank + 1) % size;
        MPI_Win_shared_query(win, right, &qs, &qu, &rb);
        if (qs != N * (MPI_Aint)sizeof(int) || qu != (int)sizeof(int))
            errs += mt_fail(rank, "shared_query: size %ld unit %d", (long)qs, qu);
        MPI_Win_fence(0, win);
        sbase[0] = 777000 + rank;
        MPI_Win_fence(0, win);
        if (rb[0] != 777000 + right)
            errs += mt_fail(rank, "shared memory of rank %d reads %d", right, rb[0]);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }
    MPI_Win_free(&win);

    /* MPI_Win_create_dynamic: the displacement is the target's address */
    int *dmem = mt_zalloc(N * sizeof(int));
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, dmem, N * sizeof(int));
    MPI_Aint mine, *addrs = mt_malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(dmem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int src[N];
        for (int i = 0; i < N; i++)
            src[i] = val(rank, right, i, 30);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        MPI_Put(src, N, MPI_INT, right, addrs[right], N, MPI_INT, win);
        MPI_Win_unlock(right, win);
        MPI_Barrier(MPI_COMM_WORLD);
        errs += check_win(rank, dmem, left, 30, "dynamic put");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, dmem);
    MPI_Win_free(&win);

    free(addrs);
    free(dmem);
    free(mem);
    mt_finish(errs, "rma_basic OK");
    MPI_Finalize();
    return 0;
}
