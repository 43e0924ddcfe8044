/* jacobi3d: a 3D 7-point Jacobi proxy application (see README.md).
 *
 * One cuboid block per MPI rank, two grids swapped every iteration, six halo
 * faces exchanged with MPI_Isend/MPI_Irecv/MPI_Waitall.  Per iteration:
 *
 *     wait for the packed faces        (the one host wait)
 *     post receives and sends
 *     [-overlap: update the interior]  (needs no halo)
 *     MPI_Waitall
 *     unpack; update (exterior, or all); swap; pack the new faces
 *
 * Ranks may be user-level threads sharing a process (AMPI-style +vp), so
 * there is no mutable global or static state: all of it is in jc_run_t.
 * Only the MPI calls our library has today are used: Init, Finalize,
 * Comm_rank/size, Isend, Irecv, Waitall, Barrier, Wtime, Abort, and with
 * -ddt Type_create_subarray, Type_commit, Type_free.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "decomp.h"
#include "kernels.h"
#include "options.h"
#include "verify.h"

enum { TAG_STATS = 2000, TAG_SETUP = 2001, TAG_SETUP_GATHER = 2002 };

typedef struct jc_run {
    MPI_Comm comm;
    int rank, size;
    jc_options_t opt;
    long n[3];
    int p[3];
    jc_block_t blk;
    const jc_ops_t *ops;
    jc_backend_t *be;
    MPI_Request reqs[2 * JC_NFACES];
    MPI_Datatype face_send[JC_NFACES], face_recv[JC_NFACES]; /* -ddt */
    double t_loop, t_comm; /* seconds over the timed iterations */
} jc_run_t;

static void die(jc_run_t *run, const char *what)
{
    fprintf(stderr, "jacobi3d: rank %d: %s: %s\n", run->rank, what, run->ops->error(run->be));
    MPI_Abort(run->comm, 2);
}

/* GPU choice: the node-local rank from the launcher, else the world rank. */
static int local_rank(int world_rank)
{
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "AMPI_LOCAL_RANK"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return world_rank;
}

/* AMPI_Yield, when the MPI library has one, lets the other ranks of this PE
 * run while this one waits for its GPU, instead of blocking them all in
 * cudaStreamSynchronize.  Looked up at run time so that the program also
 * links with MPI libraries that lack it. */
static int (*find_yield(void))(void)
{
    int (*fn)(void) = NULL;
    const char *off = getenv("JACOBI_NO_YIELD");
    void *sym = (off && *off && strcmp(off, "0")) ? NULL : dlsym(RTLD_DEFAULT, "AMPI_Yield");
    if (sym)
        memcpy(&fn, &sym, sizeof(fn));
    return fn;
}

/* Tags name the direction of travel: a face sent through our face f
 * arrives at the neighbour's face f^1.  Returns the number of requests. */
static int post_exchange(jc_run_t *run)
{
    const jc_block_t *b = &run->blk;
    if (run->opt.ddt) { /* straight from and into the current grid */
        double *g = run->ops->grid(run->be);
        int nreq = 0;
        for (int f = 0; f < JC_NFACES; f++) {
            if (b->nbr[f] < 0)
                continue;
            MPI_Irecv(g, 1, run->face_recv[f], b->nbr[f], f ^ 1, run->comm, &run->reqs[nreq++]);
            MPI_Isend(g, 1, run->face_send[f], b->nbr[f], f, run->comm, &run->reqs[nreq++]);
        }
        return nreq;
    }
    double *sendbuf = run->ops->send_buffer(run->be), *recvbuf = run->ops->recv_buffer(run->be);
    int nreq = 0;
    for (int f = 0; f < JC_NFACES; f++) {
        if (b->nbr[f] < 0)
            continue;
        MPI_Irecv(recvbuf + b->face_off[f], (int)b->face_len[f], MPI_DOUBLE, b->nbr[f], f ^ 1, run->comm,
                  &run->reqs[nreq++]);
        MPI_Isend(sendbuf + b->face_off[f], (int)b->face_len[f], MPI_DOUBLE, b->nbr[f], f, run->comm,
                  &run->reqs[nreq++]);
    }
    return nreq;
}

static void iterate(jc_run_t *run)
{
    const jc_ops_t *ops = run->ops;
    jc_backend_t *be = run->be;
    const jc_options_t *o = &run->opt;
    int total = o->warmup + o->iters;
    double t_start = 0.0;
    if (ops->init(be) || ops->pack(be))
        die(run, "initialisation");
    for (int it = 0; it < total; it++) {
        if (it == o->warmup) {
            if (ops->finish(be))
                die(run, "warm-up");
            MPI_Barrier(run->comm);
            run->t_comm = 0.0;
            t_start = MPI_Wtime();
        }
        if (ops->wait_packed(be))
            die(run, "waiting for the packed faces");
        double t0 = MPI_Wtime();
        int nreq = post_exchange(run);
        double t1 = MPI_Wtime();
        if (o->overlap && ops->update(be, JC_INTERIOR))
            die(run, "interior update");
        double t2 = MPI_Wtime();
        MPI_Waitall(nreq, run->reqs, MPI_STATUSES_IGNORE);
        double t3 = MPI_Wtime();
        run->t_comm += (t1 - t0) + (t3 - t2);
        if (o->graphs) {
            if (ops->step(be))
                die(run, "graph launch");
            continue;
        }
        int skip_unpack = o->fault && it == 1;
        if ((!skip_unpack && ops->unpack(be)) || ops->update(be, o->overlap ? JC_EXTERIOR : JC_ALL) ||
            ops->swap(be) || ops->pack(be))
            die(run, "iteration");
    }
    if (ops->finish(be))
        die(run, "final wait");
    run->t_loop = MPI_Wtime() - t_start;
}

/* Rank 0 prints the per-iteration times averaged over the ranks. */
static void report(jc_run_t *run)
{
    double mine[2] = {1e3 * run->t_loop / run->opt.iters, 1e3 * run->t_comm / run->opt.iters};
    double *all = run->rank == 0 ? malloc((size_t)run->size * sizeof(mine)) : NULL;
    if (run->rank == 0 && !all)
        MPI_Abort(run->comm, 2);
    jc_gather_doubles(run->comm, mine, 2, all, TAG_STATS);
    if (run->rank != 0)
        return;
    double sum_iter = 0, sum_comm = 0, max_iter = 0;
    for (int r = 0; r < run->size; r++) {
        sum_iter += all[2 * r];
        sum_comm += all[2 * r + 1];
        if (all[2 * r] > max_iter)
            max_iter = all[2 * r];
    }
    const jc_options_t *o = &run->opt;
    char flags[64];
    snprintf(flags, sizeof(flags), "%s%s%s%s%s", o->overlap ? "+overlap" : "", o->fuse ? "+fuse" : "",
             o->graphs ? "+graphs" : "", o->ddt ? "+ddt" : "", o->overlap || o->fuse || o->graphs || o->ddt ? "" : "-");
    printf("jacobi3d mode=%s flags=%s grid=%ldx%ldx%ld decomp=%dx%dx%d ranks=%d iters=%d iter_ms=%.4f "
           "comm_ms=%.4f iter_ms_max=%.4f\n",
           jc_mode_name(o->mode), flags[0] == '+' ? flags + 1 : flags, run->n[0], run->n[1], run->n[2],
           run->p[0], run->p[1], run->p[2], run->size, o->iters, sum_iter / run->size, sum_comm / run->size,
           max_iter);
    fflush(stdout);
    free(all);
}

/* Decomposition and checks that every rank computes identically, so every
 * rank takes the same early exit.  Returns a message or NULL. */
static const char *plan(jc_run_t *run, char *msg, size_t len)
{
    const jc_options_t *o = &run->opt;
    if (o->block) {
        long unit[3] = {1, 1, 1};
        jc_choose_dims(run->size, unit, 0, run->p);
        for (int a = 0; a < 3; a++)
            run->n[a] = o->block * run->p[a];
    } else {
        memcpy(run->n, o->n, sizeof(run->n));
        if (jc_choose_dims(run->size, run->n, 1, run->p)) {
            snprintf(msg, len, "a %ldx%ldx%ld grid cannot be split into %d non-empty blocks", run->n[0],
                     run->n[1], run->n[2], run->size);
            return msg;
        }
    }
    for (int a = 0; a < 3; a++)
        if ((run->n[a] + run->p[a] - 1) / run->p[a] > INT_MAX / 2) {
            snprintf(msg, len, "blocks are too long along axis %d", a);
            return msg;
        }
    jc_block_of_rank(run->n, run->p, run->rank, &run->blk);
    for (int f = 0; f < JC_NFACES; f++)
        if (run->blk.face_len[f] > INT_MAX) {
            snprintf(msg, len, "a face of %zu cells is too large for one message", run->blk.face_len[f]);
            return msg;
        }
    if (o->verify && (double)run->n[0] * run->n[1] * run->n[2] > (double)JC_VERIFY_MAX_CELLS) {
        snprintf(msg, len, "-v runs the whole grid on rank 0: at most %ld cells", JC_VERIFY_MAX_CELLS);
        return msg;
    }
    if (o->fault && o->graphs) {
        snprintf(msg, len, "-fault does not apply to -graphs");
        return msg;
    }
#ifdef JACOBI_NO_CUDA
    if (o->mode != JC_MODE_CPU) {
        snprintf(msg, len, "mode %s needs CUDA, and this build has none (built without nvcc); use -cpu",
                 jc_mode_name(o->mode));
        return msg;
    }
    run->ops = &jc_cpu_ops;
#else
    run->ops = o->mode == JC_MODE_CPU ? &jc_cpu_ops : &jc_cuda_ops;
#endif
    return NULL;
}

/* -ddt: face f of the grid (halos included, x fastest) as a subarray: the
 * layer of interior cells next to it (send) and the halo layer beyond it
 * (receive).  Element order is the subarray's, the same at both ends. */
static void make_face_types(jc_run_t *run)
{
    const jc_block_t *b = &run->blk;
    int sizes[3] = {b->lz + 2, b->ly + 2, b->lx + 2}, l[3] = {b->lz, b->ly, b->lx};
    for (int f = 0; f < JC_NFACES; f++) {
        int dim = 2 - f / 2; /* x faces fix the last (fastest) index */
        int sub[3] = {l[0], l[1], l[2]}, s_start[3] = {1, 1, 1}, r_start[3] = {1, 1, 1};
        sub[dim] = 1;
        s_start[dim] = f % 2 ? l[dim] : 1;
        r_start[dim] = f % 2 ? l[dim] + 1 : 0;
        MPI_Type_create_subarray(3, sizes, sub, s_start, MPI_ORDER_C, MPI_DOUBLE, &run->face_send[f]);
        MPI_Type_create_subarray(3, sizes, sub, r_start, MPI_ORDER_C, MPI_DOUBLE, &run->face_recv[f]);
        MPI_Type_commit(&run->face_send[f]);
        MPI_Type_commit(&run->face_recv[f]);
    }
}

static void free_face_types(jc_run_t *run)
{
    for (int f = 0; f < JC_NFACES; f++) {
        MPI_Type_free(&run->face_send[f]);
        MPI_Type_free(&run->face_recv[f]);
    }
}

/* Backend creation can fail on some ranks only (no GPU, out of memory):
 * agree on it so that nobody is left waiting for a neighbour. */
static int create_backend(jc_run_t *run)
{
    char err[256] = "";
    jc_config_t cfg = {
        .staging = run->opt.mode == JC_MODE_HOST_STAGING,
        .fuse = run->opt.fuse,
        .graphs = run->opt.graphs,
        .overlap = run->opt.overlap,
        .ddt = run->opt.ddt,
        .local_rank = local_rank(run->rank),
        .yield = find_yield(),
    };
    run->be = run->ops->create(&run->blk, &cfg, err, sizeof(err));
    double failed = run->be ? 0.0 : 1.0;
    double *all = run->rank == 0 ? malloc((size_t)run->size * sizeof(double)) : NULL;
    int outcome[2] = {0, 0}; /* failed ranks, whether rank 0 failed */
    if (run->rank == 0 && !all)
        MPI_Abort(run->comm, 2);
    jc_gather_doubles(run->comm, &failed, 1, all, TAG_SETUP_GATHER);
    if (run->rank == 0) {
        for (int r = 0; r < run->size; r++)
            outcome[0] += all[r] != 0.0;
        outcome[1] = failed != 0.0;
        free(all);
    }
    jc_bcast_ints(run->comm, outcome, 2, TAG_SETUP);
    /* The same failure on every rank is printed once, by rank 0. */
    if (!run->be && (run->rank == 0 || !outcome[1]))
        fprintf(stderr, "jacobi3d: rank %d: mode %s: %s\n", run->rank, jc_mode_name(run->opt.mode), err);
    return outcome[0] ? -1 : 0;
}

int main(int argc, char **argv)
{
    jc_run_t run = {.comm = MPI_COMM_WORLD};
    char msg[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(run.comm, &run.rank);
    MPI_Comm_size(run.comm, &run.size);
    int rc = jc_parse_options(argc, argv, &run.opt, msg, (int)sizeof(msg));
    const char *problem = rc < 0 ? msg : rc > 0 ? NULL : plan(&run, msg, sizeof(msg));
    if (rc > 0 || problem) {
        if (run.rank == 0 && rc > 0)
            jc_print_usage(argv[0]);
        if (run.rank == 0 && problem)
            fprintf(stderr, "jacobi3d: %s\n", problem);
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    if (create_backend(&run)) {
        if (run.be)
            run.ops->destroy(run.be);
        MPI_Finalize();
        return 1;
    }
    if (run.opt.ddt)
        make_face_types(&run);
    iterate(&run);
    report(&run);
    int status = 0;
    if (run.opt.verify)
        status = jc_verify(run.comm, run.ops, run.be, run.n, run.p, run.opt.warmup + run.opt.iters) ? 1 : 0;
    if (run.opt.ddt)
        free_face_types(&run);
    run.ops->destroy(run.be);
    MPI_Finalize();
    return status;
}
