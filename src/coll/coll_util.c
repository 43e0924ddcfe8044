/* Small helpers shared by the collectives, and their host scratch space.
 *
 * Scratch space: collectives need about the message size on every call.  A
 * fresh malloc above glibc's mmap threshold (128 KiB) maps new pages, which
 * the kernel zero-fills on first touch, on every call: for a 256 KiB
 * reduction that cost as much as the transfer.  So each rank keeps the
 * largest few blocks it has released (at most SLOTS, CACHE_BYTES in all)
 * and hands them out again (best fit).
 * A block in use belongs to its caller only (it leaves the cache), so the
 * helper threads of a rank's nonblocking collectives never share one.
 * Everything runs on the single PE of the process (as coll_nb.c assumes):
 * no locks.  The cached blocks are freed by coll_scratch_fini at the end. */
#include "coll/coll.h"

#include <stdlib.h>

void *coll_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        util_fatal("out of memory: %zu bytes of collective scratch space", bytes);
    return p;
}

static int check_vec(const void *buf, const int *counts, const int *displs, int n, MPI_Datatype dt, bool gaps_ok)
{
    if (!counts || (displs == NULL && n > 0))
        return MPI_ERR_ARG;
    if (!dt_valid(dt))
        return MPI_ERR_TYPE;
    if (!gaps_ok && !dt_is_predefined(dt) &&
        (!dt_is_contig(dt) || dt_contig_offset(dt) != 0 || dt_extent(dt) != (ptrdiff_t)dt_size(dt)))
        return MPI_ERR_UNSUPPORTED_OPERATION; /* see coll_check_type */
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
        if (counts[i] > 0 && dt_size(dt) > 0 && ((!buf && dt_is_predefined(dt)) || buf == MPI_IN_PLACE))
            return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int coll_check_vec(const void *buf, const int *counts, const int *displs, int n, MPI_Datatype dt)
{
    return check_vec(buf, counts, displs, n, dt, false);
}

int coll_check_vec_nc(const void *buf, const int *counts, const int *displs, int n, MPI_Datatype dt)
{
    return check_vec(buf, counts, displs, n, dt, coll_nc_type(dt));
}

#define SLOTS 4                        /* cached blocks per rank */
#define CACHE_BYTES ((size_t)64 << 20) /* at most this much cached per rank */
#define HEADER 64                      /* keeps the caller's part 64-byte aligned */

typedef struct block {
    size_t cap; /* usable bytes after the header */
} block_t;

typedef struct cache {
    void *blocks[SLOTS]; /* caller pointers (header in front), NULL: empty */
} cache_t;

static cache_t *caches; /* core_proc.nlocal of them, made on first release */

static block_t *header_of(void *p) { return (block_t *)((char *)p - HEADER); }

/* Rounds a request up to a multiple of 1/8 of its power of two (at least
 * 4 KiB), so blocks fit requests of slightly different sizes while wasting
 * at most 12.5%. */
static size_t round_cap(size_t bytes)
{
    size_t step = 4096;
    while (step * 8 < bytes)
        step *= 2;
    return (bytes + step - 1) / step * step;
}

/* The cache of the rank running now; NULL outside any rank. */
static cache_t *my_cache(bool make)
{
    p2p_rank_t *r = p2p_self();
    if (!r)
        return NULL;
    if (!caches) {
        if (!make)
            return NULL;
        caches = calloc((size_t)core_proc.nlocal, sizeof *caches);
        if (!caches)
            return NULL; /* no cache: blocks go straight back to the system */
    }
    return &caches[r->core.world - core_proc.first];
}

void *coll_host_scratch(size_t bytes)
{
    cache_t *c = my_cache(false);
    int best = -1;
    for (int i = 0; c && i < SLOTS; i++) {
        void *b = c->blocks[i];
        if (b && header_of(b)->cap >= bytes && (best < 0 || header_of(b)->cap < header_of(c->blocks[best])->cap))
            best = i;
    }
    if (best >= 0) {
        void *p = c->blocks[best];
        c->blocks[best] = NULL;
        return p;
    }
    size_t cap = round_cap(bytes);
    void *raw = NULL;
    if (posix_memalign(&raw, HEADER, HEADER + cap))
        util_fatal("out of memory: %zu bytes of collective scratch space", bytes);
    ((block_t *)raw)->cap = cap;
    return (char *)raw + HEADER;
}

void coll_host_scratch_free(void *p)
{
    if (!p)
        return;
    /* p and the cached blocks, largest first; the cache keeps what fits */
    cache_t *c = my_cache(true);
    void *all[SLOTS + 1];
    int n = 0;
    all[n++] = p;
    for (int i = 0; c && i < SLOTS; i++)
        if (c->blocks[i]) {
            all[n++] = c->blocks[i];
            c->blocks[i] = NULL;
        }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && header_of(all[j])->cap > header_of(all[j - 1])->cap; j--) {
            void *t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
        }
    size_t kept = 0;
    int slot = 0;
    for (int i = 0; i < n; i++) {
        size_t cap = header_of(all[i])->cap;
        if (c && slot < SLOTS && cap <= CACHE_BYTES - kept) {
            c->blocks[slot++] = all[i];
            kept += cap;
        } else {
            free(header_of(all[i]));
        }
    }
}

void coll_scratch_fini(void)
{
    if (!caches)
        return;
    for (int r = 0; r < core_proc.nlocal; r++)
        for (int i = 0; i < SLOTS; i++)
            if (caches[r].blocks[i])
                free(header_of(caches[r].blocks[i]));
    free(caches);
    caches = NULL;
}
