#include "decomp.h"

int jc_choose_dims(int nranks, const long n[3], int fit, int p[3])
{
    double best = -1.0;
    for (int px = 1; px <= nranks; px++) {
        if (nranks % px)
            continue;
        for (int py = 1; py <= nranks / px; py++) {
            if ((nranks / px) % py)
                continue;
            int pz = nranks / px / py;
            if (fit && (px > n[0] || py > n[1] || pz > n[2]))
                continue;
            /* Summed over all blocks, the xy faces add up to nx*ny per layer
             * of blocks along z, and likewise for the other two orientations. */
            double area = (double)n[0] * n[1] * pz + (double)n[1] * n[2] * px + (double)n[0] * n[2] * py;
            if (best < 0 || area < best) {
                best = area;
                p[0] = px;
                p[1] = py;
                p[2] = pz;
            }
        }
    }
    return best < 0 ? -1 : 0;
}

int jc_rank_of(const int p[3], int ix, int iy, int iz)
{
    return iz + p[2] * (iy + p[1] * ix);
}

/* First global cell of part `i` of `parts` along an axis of n cells. */
static long part_start(long n, int parts, int i)
{
    return n * (long)i / parts; /* n, i < 2^31: no overflow */
}

void jc_block_of_rank(const long n[3], const int p[3], int rank, jc_block_t *blk)
{
    int c[3];
    c[2] = rank % p[2];
    c[1] = rank / p[2] % p[1];
    c[0] = rank / p[2] / p[1];
    long lo[3], len[3];
    for (int a = 0; a < 3; a++) {
        lo[a] = part_start(n[a], p[a], c[a]);
        len[a] = part_start(n[a], p[a], c[a] + 1) - lo[a];
    }
    *blk = (jc_block_t){0};
    blk->lx = (int)len[0];
    blk->ly = (int)len[1];
    blk->lz = (int)len[2];
    blk->gx0 = lo[0];
    blk->gy0 = lo[1];
    blk->gz0 = lo[2];
    blk->nx = n[0];
    blk->ny = n[1];
    blk->nz = n[2];
    /* Face f lies across axis f/2, on the low side when f is even. */
    size_t face_cells[3] = {(size_t)len[1] * len[2], (size_t)len[0] * len[2], (size_t)len[0] * len[1]};
    size_t off = 0;
    for (int f = 0; f < JC_NFACES; f++) {
        int a = f / 2, step = f % 2 ? 1 : -1;
        int nc[3] = {c[0], c[1], c[2]};
        nc[a] += step;
        if (nc[a] < 0 || nc[a] >= p[a]) {
            blk->nbr[f] = -1;
            continue;
        }
        blk->nbr[f] = jc_rank_of(p, nc[0], nc[1], nc[2]);
        blk->face_off[f] = off;
        blk->face_len[f] = face_cells[a];
        off += face_cells[a];
        if (face_cells[a] > blk->face_max)
            blk->face_max = face_cells[a];
    }
    blk->face_total = off;
}
