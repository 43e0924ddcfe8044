/* Geometry and arithmetic shared by the host loops, the CUDA kernels and the
 * serial reference.  Everything that decides a value lives here, once, so
 * the GPU result, the distributed CPU result and the reference are computed
 * by the same expressions in the same order and can be compared exactly.
 *
 * A block holds lx*ly*lz interior cells plus one halo layer on every side,
 * stored x fastest; interior coordinates run 0..l-1, halo cells sit at -1
 * and l.  The cells just outside the global domain are fixed boundary
 * values; halo cells between blocks are refreshed by the exchange.
 */
#ifndef JACOBI_STENCIL_H
#define JACOBI_STENCIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define JC_HD __host__ __device__
#else
#define JC_HD
#endif

enum { JC_XM, JC_XP, JC_YM, JC_YP, JC_ZM, JC_ZP, JC_NFACES };

/* Plain data describing one rank's block; passed by value to kernels. */
typedef struct jc_block {
    int lx, ly, lz;              /* interior cells */
    long gx0, gy0, gz0;          /* global coordinates of interior cell (0,0,0) */
    long nx, ny, nz;             /* global grid */
    int nbr[JC_NFACES];          /* neighbour rank per face, -1 at the domain boundary */
    size_t face_off[JC_NFACES];  /* element offset of each face in the packed buffers */
    size_t face_len[JC_NFACES];  /* elements per face; 0 where there is no neighbour */
    size_t face_total;           /* elements in a packed buffer (all faces) */
    size_t face_max;             /* longest face, for the fused kernels' thread count */
} jc_block_t;

static inline JC_HD size_t jc_idx(int i, int j, int k, int lx, int ly)
{
    return (size_t)(i + 1) + (size_t)(lx + 2) * ((size_t)(j + 1) + (size_t)(ly + 2) * (size_t)(k + 1));
}

static inline JC_HD size_t jc_cells_with_halo(int lx, int ly, int lz)
{
    return (size_t)(lx + 2) * (size_t)(ly + 2) * (size_t)(lz + 2);
}

/* Deterministic start values from integer hashing (exact on every device):
 * boundary cells in [2,3), interior cells in [0.5,1.5).  No symmetry, so a
 * face sent to the wrong place or in the wrong order changes the result. */
static inline JC_HD double jc_initial_value(long gx, long gy, long gz, long nx, long ny, long nz)
{
    uint64_t h = (uint64_t)(gx + 1) * 73856093u ^ (uint64_t)(gy + 1) * 19349663u ^
                 (uint64_t)(gz + 1) * 83492791u;
    double frac = (double)(h % 1021u) / 1021.0;
    int outside = gx < 0 || gy < 0 || gz < 0 || gx >= nx || gy >= ny || gz >= nz;
    return outside ? 2.0 + frac : 0.5 + frac;
}

/* The 7-point update.  One expression, left to right, then one division:
 * nothing for a compiler to contract into an FMA, so host and GPU agree
 * bit for bit.  Every caller goes through jc_stencil7 (kernels that keep
 * the z neighbours in registers pass them in) to keep that order. */
static inline JC_HD double jc_stencil7(double c, double xm, double xp, double ym, double yp, double zm, double zp)
{
    return (c + xm + xp + ym + yp + zm + zp) / 7.0;
}

static inline JC_HD double jc_stencil(const double *in, size_t c, size_t sy, size_t sz)
{
    return jc_stencil7(in[c], in[c - 1], in[c + 1], in[c - sy], in[c + sy], in[c - sz], in[c + sz]);
}

static inline JC_HD int jc_min2(int a) { return a < 2 ? a : 2; }
static inline JC_HD int jc_pos(int a) { return a > 0 ? a : 0; }

/* The exterior is every interior cell within one cell of the block's
 * surface: the cells that need halo data.  Count and map e -> (i,j,k) as
 * three slabs (z planes, then y rows, then x columns) so nothing is done
 * twice, also for blocks only one or two cells thick. */
static inline JC_HD size_t jc_shell_count(int lx, int ly, int lz)
{
    return (size_t)lx * ly * lz - (size_t)jc_pos(lx - 2) * jc_pos(ly - 2) * jc_pos(lz - 2);
}

static inline JC_HD void jc_shell_cell(size_t e, int lx, int ly, int lz, int *i, int *j, int *k)
{
    size_t zplanes = (size_t)jc_min2(lz) * lx * ly;
    if (e < zplanes) {
        size_t t = e / lx;
        *i = (int)(e % lx);
        *j = (int)(t % ly);
        *k = t / ly == 0 ? 0 : lz - 1;
        return;
    }
    e -= zplanes;
    int ny2 = jc_min2(ly);
    size_t yrows = (size_t)ny2 * lx * jc_pos(lz - 2);
    if (e < yrows) {
        size_t t = e / lx;
        *i = (int)(e % lx);
        *j = t % ny2 == 0 ? 0 : ly - 1;
        *k = 1 + (int)(t / ny2);
        return;
    }
    e -= yrows;
    int nx2 = jc_min2(lx);
    int my = jc_pos(ly - 2);
    size_t t = e / nx2;
    *i = e % nx2 == 0 ? 0 : lx - 1;
    *j = 1 + (int)(t % my);
    *k = 1 + (int)(t / my);
}

/* Element e of face f: halo = 0 gives the outermost interior layer (what is
 * sent), halo = 1 the halo layer beyond it (where the neighbour's face goes).
 * Both neighbours order a face by the same two global axes, so the sender's
 * element e lands on the receiver's element e. */
static inline JC_HD size_t jc_face_cell(int f, size_t e, int lx, int ly, int lz, int halo)
{
    int i, j, k;
    if (f == JC_XM || f == JC_XP) {
        j = (int)(e % ly);
        k = (int)(e / ly);
        i = f == JC_XM ? 0 - halo : lx - 1 + halo;
    } else if (f == JC_YM || f == JC_YP) {
        i = (int)(e % lx);
        k = (int)(e / lx);
        j = f == JC_YM ? 0 - halo : ly - 1 + halo;
    } else {
        i = (int)(e % lx);
        j = (int)(e / lx);
        k = f == JC_ZM ? 0 - halo : lz - 1 + halo;
    }
    return jc_idx(i, j, k, lx, ly);
}

#endif
