/* Block placement: see rank_place.h. */
#include "rank/rank_place.h"

int rank_place_first(int v, int p, int proc)
{
    int q = v / p, r = v % p;
    /* every process before proc holds q ranks, and min(proc, r) of them one more */
    return proc * q + (proc < r ? proc : r);
}

int rank_place_count(int v, int p, int proc)
{
    return v / p + (proc < v % p ? 1 : 0);
}

int rank_place_proc(int v, int p, int rank)
{
    int q = v / p, r = v % p;
    int big = r * (q + 1); /* ranks held by the r processes with q+1 ranks */
    if (rank < big)
        return rank / (q + 1);
    /* rank >= big implies q > 0 (else big == v), so the division is safe */
    return r + (rank - big) / q;
}
