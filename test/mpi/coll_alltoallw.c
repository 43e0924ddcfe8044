/* coll_alltoallw.c - MPI_Alltoallw and MPI_Ialltoallw with mixed datatypes.
 *
 * Between every pair S -> J travel m(S, J) ints (some pairs none), as
 * MPI_INT elements or as elements of a vector type (2 ints, stride 2: 3 ints
 * of extent, the middle one a gap), chosen differently on the two sides
 * (sender: by J, receiver: by S), so packing and unpacking meet in every
 * combination.  Blocks lie at byte displacements in reverse peer order with
 * gaps; everything outside the received data must keep the sentinel.
 * Values name (S, J, position, call), so a block from the wrong peer, in the
 * wrong place or from an earlier call does not compare equal.  Runs:
 * blocking, nonblocking (the vector type freed before completion) and
 * MPI_IN_PLACE (symmetric counts, as MPI requires). */
#include "mpitest.h"

#define REG 12 /* ints per peer region: up to 6 ints, 9 of span as vectors */
#define SENT (-1)

static int val(int s, int j, int t, uint32_t key) { return (int)(mt_hash((uint32_t)s, (uint32_t)j, (uint32_t)t, key) & 0x7fffffff); }
/* ints from S to J: 0, 2, 4 or 6; symmetric for the in-place run */
static int ints(int s, int j, int sym) { return (s + j) % 5 == 4 ? 0 : 2 * (1 + (sym ? s + j : s + 2 * j) % 3); }
/* int index of the t-th int of the data: MPI_INT, or the vector type */
static int place(int vec, int t) { return vec ? 3 * (t / 2) + 2 * (t % 2) : t; }

typedef struct {
    int n, me, mode; /* mode: 0 blocking, 1 nonblocking, 2 in place */
    int *sb, *rb, *want;
    int *sc, *rc;
    int *sd, *rd; /* bytes */
    MPI_Datatype *st, *rt;
} run_t;

static int region(int n, int peer) { return (n - 1 - peer) * REG; }

static int check_run(run_t *x, MPI_Datatype vec, uint32_t key)
{
    int n = x->n, me = x->me, sym = x->mode == 2, errs = 0;
    size_t len = (size_t)n * REG;
    for (size_t i = 0; i < len; i++)
        x->sb[i] = 777, x->rb[i] = x->want[i] = SENT;
    for (int p = 0; p < n; p++) {
        /* sending to p: vector elements when p is odd */
        int m = ints(me, p, sym), svec = p % 2 && !sym, soff = region(n, p) + 1 + p % 2;
        x->sc[p] = svec ? m / 2 : m, x->st[p] = svec ? vec : MPI_INT;
        x->sd[p] = soff * (int)sizeof(int);
        for (int t = 0; t < m; t++)
            x->sb[soff + place(svec, t)] = val(me, p, t, key);
        /* receiving from p: vector elements when p is even */
        int mr = ints(p, me, sym), rvec = p % 2 == 0, roff = p * REG + 1 + p % 3;
        x->rc[p] = rvec ? mr / 2 : mr, x->rt[p] = rvec ? vec : MPI_INT;
        x->rd[p] = roff * (int)sizeof(int);
        for (int t = 0; t < mr; t++) {
            x->want[roff + place(rvec, t)] = val(p, me, t, key);
            if (sym) /* in place: what goes to p lies where p's data will arrive */
                x->rb[roff + place(rvec, t)] = val(me, p, t, key);
        }
    }
    if (x->mode == 0) {
        MPI_Alltoallw(x->sb, x->sc, x->sd, x->st, x->rb, x->rc, x->rd, x->rt, MPI_COMM_WORLD);
    } else if (x->mode == 1) {
        MPI_Datatype mine; /* a type of our own, freed while the call runs */
        MPI_Type_vector(2, 1, 2, MPI_INT, &mine);
        MPI_Type_commit(&mine);
        for (int p = 0; p < n; p++) {
            x->st[p] = x->st[p] == vec ? mine : x->st[p];
            x->rt[p] = x->rt[p] == vec ? mine : x->rt[p];
        }
        MPI_Request req;
        MPI_Ialltoallw(x->sb, x->sc, x->sd, x->st, x->rb, x->rc, x->rd, x->rt, MPI_COMM_WORLD, &req);
        MPI_Type_free(&mine);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, x->rb, x->rc, x->rd, x->rt, MPI_COMM_WORLD);
    }
    static const char *const mode_name[3] = { "MPI_Alltoallw", "MPI_Ialltoallw", "MPI_Alltoallw(in place)" };
    for (size_t i = 0; i < len && !errs; i++)
        if (x->rb[i] != x->want[i])
            errs += mt_fail(me, "%s: rb[%zu] (from rank %zu) = %d, expected %d", mode_name[x->mode], i, i / REG,
                            x->rb[i], x->want[i]);
    return errs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = mt_rank(), n = mt_size(), errs = 0;
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    size_t len = (size_t)n * REG;
    run_t x = { .n = n, .me = me };
    x.sb = mt_malloc(len * sizeof(int)), x.rb = mt_malloc(len * sizeof(int)), x.want = mt_malloc(len * sizeof(int));
    x.sc = mt_malloc((size_t)n * sizeof(int)), x.rc = mt_malloc((size_t)n * sizeof(int));
    x.sd = mt_malloc((size_t)n * sizeof(int)), x.rd = mt_malloc((size_t)n * sizeof(int));
    x.st = mt_malloc((size_t)n * sizeof(MPI_Datatype)), x.rt = mt_malloc((size_t)n * sizeof(MPI_Datatype));
    int runs = 2;
#ifdef OPEN_MPI
    /* Open MPI 4.1's coll/self (one rank) scales Alltoallw's byte
     * displacements by the extent and writes out of bounds; with
     * --mca coll ^self this test passes there */
    if (n == 1) {
        mt_note("skipped: Open MPI's coll/self alltoallw misreads byte displacements");
        runs = 0;
    }
#endif
    for (int iter = 0; iter < runs; iter++)
        for (x.mode = 0; x.mode < 3; x.mode++)
            errs += check_run(&x, vec, (uint32_t)(10 * iter + x.mode));
    free(x.sb), free(x.rb), free(x.want), free(x.sc), free(x.rc), free(x.sd), free(x.rd), free(x.st), free(x.rt);
    MPI_Type_free(&vec);
    mt_finish(errs, "coll_alltoallw OK");
    MPI_Finalize();
    return 0;
}
