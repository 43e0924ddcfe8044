/* Host backend: the entry points of kernels.h as plain loops.  Every call
 * finishes its work before returning, so the ordering contract holds
 * without any bookkeeping, and the "staging" copies are unnecessary: MPI
 * gets the face buffers directly.  No CUDA call anywhere in this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels.h"

struct jc_backend {
    jc_block_t blk;
    jc_config_t cfg;
    double *grid[2];
    int cur;
    double *send, *recv;
    char err[128];
};

static void cpu_destroy(jc_backend_t *be)
{
    if (!be)
        return;
    free(be->grid[0]);
    free(be->grid[1]);
    free(be->send);
    free(be->recv);
    free(be);
}

static jc_backend_t *cpu_create(const jc_block_t *blk, const jc_config_t *cfg, char *err, size_t errlen)
{
    jc_backend_t *be = calloc(1, sizeof(*be));
    if (!be) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    be->blk = *blk;
    be->cfg = *cfg;
    size_t cells = jc_cells_with_halo(blk->lx, blk->ly, blk->lz);
    size_t faces = blk->face_total ? blk->face_total : 1;
    be->grid[0] = malloc(cells * sizeof(double));
    be->grid[1] = malloc(cells * sizeof(double));
    be->send = malloc(faces * sizeof(double));
    be->recv = malloc(faces * sizeof(double));
    if (!be->grid[0] || !be->grid[1] || !be->send || !be->recv) {
        snprintf(err, errlen, "cannot allocate %zu cells of host memory", 2 * cells);
        cpu_destroy(be);
        return NULL;
    }
    return be;
}

static int cpu_init(jc_backend_t *be)
{
    const jc_block_t *b = &be->blk;
    for (int k = -1; k <= b->lz; k++)
        for (int j = -1; j <= b->ly; j++)
            for (int i = -1; i <= b->lx; i++) {
                double v = jc_initial_value(b->gx0 + i, b->gy0 + j, b->gz0 + k, b->nx, b->ny, b->nz);
                size_t c = jc_idx(i, j, k, b->lx, b->ly);
                be->grid[0][c] = v;
                be->grid[1][c] = v;
            }
    be->cur = 0;
    return 0;
}

/* Fused: one sweep over the longest face visiting all six, the loop shape
 * of the fused CUDA kernel; otherwise one loop per face. */
static void copy_faces(jc_backend_t *be, int to_grid)
{
    const jc_block_t *b = &be->blk;
    double *g = be->grid[be->cur];
    if (be->cfg.fuse) {
        for (size_t e = 0; e < b->face_max; e++)
            for (int f = 0; f < JC_NFACES; f++) {
                if (e >= b->face_len[f])
                    continue;
                size_t c = jc_face_cell(f, e, b->lx, b->ly, b->lz, to_grid);
                if (to_grid)
                    g[c] = be->recv[b->face_off[f] + e];
                else
                    be->send[b->face_off[f] + e] = g[c];
            }
        return;
    }
    for (int f = 0; f < JC_NFACES; f++)
        for (size_t e = 0; e < b->face_len[f]; e++) {
            size_t c = jc_face_cell(f, e, b->lx, b->ly, b->lz, to_grid);
            if (to_grid)
                g[c] = be->recv[b->face_off[f] + e];
            else
                be->send[b->face_off[f] + e] = g[c];
        }
}

static int cpu_pack(jc_backend_t *be)
{
    if (!be->cfg.ddt)
        copy_faces(be, 0);
    return 0;
}

static int cpu_unpack(jc_backend_t *be)
{
    if (!be->cfg.ddt)
        copy_faces(be, 1);
    return 0;
}

static int cpu_wait_packed(jc_backend_t *be)
{
    (void)be;
    return 0;
}

static int cpu_update(jc_backend_t *be, jc_region_t r)
{
    const jc_block_t *b = &be->blk;
    const double *in = be->grid[be->cur];
    double *out = be->grid[be->cur ^ 1];
    size_t sy = (size_t)b->lx + 2, sz = sy * ((size_t)b->ly + 2);
    if (r == JC_EXTERIOR) {
        size_t n = jc_shell_count(b->lx, b->ly, b->lz);
        for (size_t e = 0; e < n; e++) {
            int i, j, k;
            jc_shell_cell(e, b->lx, b->ly, b->lz, &i, &j, &k);
            size_t c = jc_idx(i, j, k, b->lx, b->ly);
            out[c] = jc_stencil(in, c, sy, sz);
        }
        return 0;
    }
    int lo = r == JC_INTERIOR ? 1 : 0;
    for (int k = lo; k < b->lz - lo; k++)
        for (int j = lo; j < b->ly - lo; j++) {
            size_t c = jc_idx(lo, j, k, b->lx, b->ly);
            for (int i = lo; i < b->lx - lo; i++, c++)
                out[c] = jc_stencil(in, c, sy, sz);
        }
    return 0;
}

static int cpu_swap(jc_backend_t *be)
{
    be->cur ^= 1;
    return 0;
}

static int cpu_step(jc_backend_t *be)
{
    cpu_unpack(be);
    cpu_update(be, be->cfg.overlap ? JC_EXTERIOR : JC_ALL);
    cpu_swap(be);
    return cpu_pack(be);
}

static int cpu_finish(jc_backend_t *be)
{
    (void)be;
    return 0;
}

static int cpu_copy_out(jc_backend_t *be, double *interior)
{
    const jc_block_t *b = &be->blk;
    const double *g = be->grid[be->cur];
    for (int k = 0; k < b->lz; k++)
        for (int j = 0; j < b->ly; j++) {
            memcpy(interior, g + jc_idx(0, j, k, b->lx, b->ly), (size_t)b->lx * sizeof(double));
            interior += b->lx;
        }
    return 0;
}

static void *cpu_send_buffer(jc_backend_t *be) { return be->send; }
static void *cpu_recv_buffer(jc_backend_t *be) { return be->recv; }
static double *cpu_grid(jc_backend_t *be) { return be->grid[be->cur]; }
static const char *cpu_error(jc_backend_t *be) { return be->err; }

const jc_ops_t jc_cpu_ops = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .init = cpu_init,
    .pack = cpu_pack,
    .wait_packed = cpu_wait_packed,
    .unpack = cpu_unpack,
    .update = cpu_update,
    .swap = cpu_swap,
    .step = cpu_step,
    .finish = cpu_finish,
    .copy_out = cpu_copy_out,
    .send_buffer = cpu_send_buffer,
    .recv_buffer = cpu_recv_buffer,
    .grid = cpu_grid,
    .error = cpu_error,
};
