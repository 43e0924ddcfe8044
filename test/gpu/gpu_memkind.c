/* gpu_memkind.c - every pair of memory kinds, many messages in flight.
 *
 * Kinds: pageable host (malloc), pinned host (cudaMallocHost), device
 * (cudaMalloc), stream-ordered pool memory (cudaMallocAsync from the
 * device's default pool and from a pool of our own), managed memory
 * (cudaMallocManaged; on odd repetitions its pages are moved to the GPU
 * before use) and, where a second GPU is visible, device memory of that
 * other GPU.  For every (send kind, receive kind) and size from 0 B to
 * 64 MiB (4 MiB + 3 B with more than 2 ranks a process, unless
 * GPU_TEST_MAX_BYTES says otherwise), each rank sends 32 messages (fewer
 * above 1 MiB: at most 32 MiB in flight) to the rank `shift` places on and receives as many from the rank
 * `shift` places back, for shift 1 (a rank of the same process when a
 * process has several) and size/2 (another process when there are two):
 * all receives are posted first, then all sends, and the requests are
 * waited for in reverse order.  Every byte of every message is compared
 * with a pattern of (source, destination, size, slot), and the 64 bytes
 * before and after each message in the receive allocation must keep their
 * poison.  A wrong message is described (first wrong byte, how many, and
 * whether they hold the poison -- never written -- or another slot's or
 * another rank's data) so that a failure names its cause.
 *
 * Buffers are allocated afresh for every (kinds, size) and pool memory is
 * freed without waiting (cudaFreeAsync), as applications do: the next
 * allocation may get the same memory back, and a library that still
 * touched it, or kept a stale description of it, delivers wrong bytes.
 *
 * Environment: MEMKIND_REPEAT=N repeats the whole (stress mode; rank 0
 * prints a line after each repetition); MEMKIND_SECONDS=S starts no
 * repetition after S seconds (the last line says how many ran);
 * MEMKIND_KINDS=host,pinned,device,pool,userpool,managed,peer picks kinds;
 * MEMKIND_SIZES=0,65536,... picks sizes; GPU_TEST_MAX_BYTES caps them;
 * MEMKIND_PROFILE=1 prints the seconds each size spent allocating, filling,
 * in MPI, checking and freeing (the most any rank spent).
 */
#include "gputest.h"

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)
#define SLOTS 32
#define INFLIGHT_BYTES (32 * MiB)
#define ALIGN 256

#define MAX_SIZES 64
/* Where a repetition's time goes (MEMKIND_PROFILE=1 prints it). */
enum { PH_ALLOC, PH_FILL, PH_MPI, PH_CHECK, PH_FREE, PH_COUNT };
static const char *const phase_name[PH_COUNT] = {"alloc", "fill", "mpi", "check", "free"};

enum { K_HOST, K_PINNED, K_DEVICE, K_POOL, K_USERPOOL, K_MANAGED, K_PEER, K_COUNT };
static const char *const kind_name[K_COUNT] = {"host", "pinned", "device", "pool",
                                               "userpool", "managed", "peer"};

static const size_t default_sizes[] = {0,        1,        8,         100,     4096,
                                       8193,     65536,    512 * KiB - 8, 512 * KiB,
                                       1 * MiB,  4 * MiB + 3, 16 * MiB, 64 * MiB};

typedef struct {
    int rank, size, dev, peer_dev; /* peer_dev: another visible GPU, or -1 */
    int rep;
    cudaStream_t stream;           /* this rank's stream for pool memory */
    cudaMemPool_t pool;            /* a pool of our own */
    unsigned char *stage;          /* pinned, for device <-> host copies */
    size_t stage_cap;
    int size_index;                /* of the size being exchanged */
    struct images {                /* per shift: built once per size */
        size_t n;
        int valid;
        unsigned char *send;       /* pinned: each slot's data at its stride */
        unsigned char *expect;     /* the receive area as it must end up */
        size_t send_cap, expect_cap;
    } img[2];
    double spent[MAX_SIZES][PH_COUNT]; /* seconds per size and phase */
} ctx_t;

/* Adds the seconds since t to the current size's phase; returns now. */
static double lap(ctx_t *c, int phase, double t)
{
    double now = MPI_Wtime();
    c->spent[c->size_index][phase] += now - t;
    return now;
}

typedef struct {
    unsigned char *p;
    size_t cap;
    int kind;
    void *spacer; /* pool kinds: a smaller allocation made first */
} mem_t;

static int is_dev_kind(int k) { return k == K_DEVICE || k == K_POOL || k == K_USERPOOL || k == K_PEER; }

static mem_t mem_alloc(ctx_t *c, size_t cap, int kind)
{
    mem_t m = {NULL, cap ? cap : 1, kind, NULL};
    /* Pool memory: a small allocation first, so that the buffer lies at an
     * offset inside a block of the pool, next to other allocations (as
     * when several ranks of a process allocate from one pool), at an
     * offset that changes with the repetition. */
    if (kind == K_POOL)
        GT_CUDA(cudaMallocAsync(&m.spacer, 256 * (size_t)(1 + c->rep % 7), c->stream));
    if (kind == K_USERPOOL)
        GT_CUDA(cudaMallocFromPoolAsync(&m.spacer, 256 * (size_t)(1 + c->rep % 7), c->pool, c->stream));
    switch (kind) {
    case K_HOST: m.p = gt_malloc(m.cap); break;
    case K_PINNED: GT_CUDA(cudaMallocHost((void **)&m.p, m.cap)); break;
    case K_DEVICE: GT_CUDA(cudaMalloc((void **)&m.p, m.cap)); break;
    case K_POOL:
        GT_CUDA(cudaMallocAsync((void **)&m.p, m.cap, c->stream));
        GT_CUDA(cudaStreamSynchronize(c->stream));
        break;
    case K_USERPOOL:
        GT_CUDA(cudaMallocFromPoolAsync((void **)&m.p, m.cap, c->pool, c->stream));
        GT_CUDA(cudaStreamSynchronize(c->stream));
        break;
    case K_MANAGED: GT_CUDA(cudaMallocManaged((void **)&m.p, m.cap, cudaMemAttachGlobal)); break;
    case K_PEER:
        GT_CUDA(cudaSetDevice(c->peer_dev));
        GT_CUDA(cudaMalloc((void **)&m.p, m.cap));
        GT_CUDA(cudaSetDevice(c->dev));
        break;
    }
    return m;
}

static void mem_free(ctx_t *c, mem_t *m)
{
    switch (m->kind) {
    case K_HOST: free(m->p); break;
    case K_PINNED: GT_CUDA(cudaFreeHost(m->p)); break;
    case K_DEVICE:
    case K_PEER:
    case K_MANAGED: GT_CUDA(cudaFree(m->p)); break;
    case K_POOL:
    case K_USERPOOL:
        GT_CUDA(cudaFreeAsync(m->p, c->stream)); /* no wait */
        GT_CUDA(cudaFreeAsync(m->spacer, c->stream));
        break;
    }
    m->p = NULL;
}

/* Managed memory: on odd repetitions move its pages to our GPU, so that the
 * library meets it both host-resident and device-resident. */
static void managed_place(ctx_t *c, mem_t m)
{
    if (m.kind != K_MANAGED || c->rep % 2 == 0)
        return;
#if CUDART_VERSION >= 13000
    struct cudaMemLocation loc = {cudaMemLocationTypeDevice, c->dev};
    GT_CUDA(cudaMemPrefetchAsync(m.p, m.cap, loc, 0, c->stream));
#else
    GT_CUDA(cudaMemPrefetchAsync(m.p, m.cap, c->dev, c->stream));
#endif
    GT_CUDA(cudaStreamSynchronize(c->stream));
}

static uint64_t seed_of(int src, int dst, size_t n, int slot) { return gt_seed((uint64_t)src, (uint64_t)dst, n, (uint64_t)slot); }

/* The pinned staging buffer, at least n bytes. */
static unsigned char *stage_of(ctx_t *c, size_t n)
{
    if (n > c->stage_cap) {
        GT_CUDA(cudaFreeHost(c->stage));
        GT_CUDA(cudaMallocHost((void **)&c->stage, n));
        c->stage_cap = n;
    }
    return c->stage;
}

/* The send data of every slot and the receive area as it must end up, for
 * one shift and size: built once and used by every pair of kinds, so that a
 * repetition's time goes to allocations and MPI rather than to patterns. */
static struct images *images_for(ctx_t *c, int h, size_t n, int slots, size_t sstride, size_t rstride, int dst,
                                 int src)
{
    struct images *im = &c->img[h];
    if (im->valid && im->n == n)
        return im;
    size_t sbytes = sstride * (size_t)slots, rbytes = rstride * (size_t)slots;
    if (sbytes > im->send_cap) {
        if (im->send)
            GT_CUDA(cudaFreeHost(im->send));
        GT_CUDA(cudaMallocHost((void **)&im->send, sbytes));
        im->send_cap = sbytes;
    }
    if (rbytes > im->expect_cap) {
        free(im->expect);
        im->expect = gt_malloc(rbytes);
        im->expect_cap = rbytes;
    }
    memset(im->send, 0, sbytes);
    memset(im->expect, GT_POISON, rbytes);
    for (int k = 0; k < slots; k++) {
        gt_pattern(im->send + sstride * (size_t)k, n, seed_of(c->rank, dst, n, k));
        gt_pattern(im->expect + rstride * (size_t)k + GT_GUARD, n, seed_of(src, c->rank, n, k));
    }
    im->n = n;
    im->valid = 1;
    return im;
}

/* The send data of every slot, written whole before the buffer goes to
 * MPI: device kinds by one copy from pinned memory (complete when
 * cudaMemcpy returns, so no device-wide synchronization waits on other
 * ranks' work), host kinds by the CPU. */
static void fill_send(mem_t m, const struct images *im, size_t bytes)
{
    if (im->n == 0)
        return;
    if (is_dev_kind(m.kind))
        GT_CUDA(cudaMemcpy(m.p, im->send, bytes, cudaMemcpyHostToDevice));
    else
        memcpy(m.p, im->send, bytes);
}

static void mem_set(ctx_t *c, mem_t m, int byte, size_t n)
{
    if (is_dev_kind(m.kind)) {
        if (m.kind == K_PEER) /* cudaMemset works on the current device's memory */
            GT_CUDA(cudaSetDevice(c->peer_dev));
        GT_CUDA(cudaMemset(m.p, byte, n));
        GT_CUDA(cudaStreamSynchronize(0)); /* the memset's stream, not every rank's work */
        if (m.kind == K_PEER)
            GT_CUDA(cudaSetDevice(c->dev));
    } else {
        memset(m.p, byte, n);
    }
}

/* The whole of m readable by the CPU. */
static const unsigned char *mem_view(ctx_t *c, mem_t m, size_t n)
{
    if (!is_dev_kind(m.kind))
        return m.p;
    unsigned char *stage = stage_of(c, n);
    if (n)
        GT_CUDA(cudaMemcpy(stage, m.p, n, cudaMemcpyDeviceToHost));
    return stage;
}

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }


/* Whose data is at byte `off` of a wrong message: another slot's or
 * another source's pattern of the same size, or the poison. */
static void describe(ctx_t *c, const unsigned char *got, size_t n, long bad, char *out, size_t outsz)
{
    size_t w = (size_t)bad / 8, len = n - w * 8 < 8 ? n - w * 8 : 8;
    uint64_t x = 0;
    memcpy(&x, got + w * 8, len);
    for (int s = 0; s < c->size; s++)
        for (int slot = 0; slot < SLOTS; slot++) {
            uint64_t y = gt_word(seed_of(s, c->rank, n, slot), w);
            if (len == 8 ? y == x : memcmp(&y, &x, len) == 0) {
                snprintf(out, outsz, "holds word %zu of the message from rank %d, slot %d", w, s, slot);
                return;
            }
        }
    uint64_t poison = 0x0101010101010101ull * GT_POISON;
    if (memcmp(&poison, &x, len) == 0)
        snprintf(out, outsz, "holds the poison (never written)");
    else
        snprintf(out, outsz, "holds 0x%016llx: nobody's pattern", (unsigned long long)x);
}

static int check_slot(ctx_t *c, const char *what, const unsigned char *area, size_t n, int src, int slot)
{
    int errs = 0, got = 0, want = 0;
    uint64_t seed = seed_of(src, c->rank, n, slot);
    const unsigned char *msg = area + GT_GUARD;
    long bad = gt_pattern_diff(msg, n, seed, &got, &want);
    if (bad >= 0) {
        size_t wrong = 0, lastbad = (size_t)bad;
        for (size_t off = (size_t)bad / 8 * 8; off < n; off += 8) {
            uint64_t x = gt_word(seed, off / 8), y = 0;
            size_t len = n - off < 8 ? n - off : 8;
            memcpy(&y, msg + off, len);
            if (memcmp(&x, &y, len) != 0) {
                wrong += 8;
                lastbad = off;
            }
        }
        char why[160];
        describe(c, msg, n, bad, why, sizeof why);
        errs += gt_fail(c->rank, "%s slot %d from rank %d: byte %ld of %zu is 0x%02x, expected 0x%02x; "
                        "~%zu bytes wrong, the last near %zu; the first wrong word %s",
                        what, slot, src, bad, n, got, want, wrong, lastbad, why);
    }
    long g = gt_bytes_diff(area, GT_GUARD, GT_POISON);
    if (g >= 0)
        errs += gt_fail(c->rank, "%s slot %d: guard byte %ld before the message was overwritten", what, slot, g);
    g = gt_bytes_diff(msg + n, GT_GUARD, GT_POISON);
    if (g >= 0)
        errs += gt_fail(c->rank, "%s slot %d: byte %ld past the message of %zu bytes was overwritten", what, slot,
                        g, n);
    return errs;
}

/* One (send kind, receive kind, size, shift) exchange. */
static int exchange(ctx_t *c, int sk, int rk, size_t n, int shift, int h)
{
    int dst = (c->rank + shift) % c->size, src = (c->rank - shift + c->size) % c->size;
    int slots = n ? (int)(INFLIGHT_BYTES / n) : SLOTS;
    if (slots > SLOTS)
        slots = SLOTS;
    if (slots < 1)
        slots = 1;
    size_t sstride = round_up(n ? n : 1), rstride = round_up(n + 2 * GT_GUARD);
    double t = MPI_Wtime();
    mem_t s = mem_alloc(c, sstride * (size_t)slots, sk);
    mem_t r = mem_alloc(c, rstride * (size_t)slots, rk);
    t = lap(c, PH_ALLOC, t);
    /* send data: the pattern of (us, dst, n, slot) in each slot */
    const struct images *im = images_for(c, h, n, slots, sstride, rstride, dst, src);
    fill_send(s, im, sstride * (size_t)slots);
    mem_set(c, r, GT_POISON, rstride * (size_t)slots);
    managed_place(c, s);
    managed_place(c, r);
    t = lap(c, PH_FILL, t);

    char what[160];
    snprintf(what, sizeof what, "rep %d, %s -> %s, %zu B, shift %d (rank %d -> %d)", c->rep, kind_name[sk],
             kind_name[rk], n, shift, src, c->rank);
    int errs = 0, tag0 = (int)(n % 1000) * SLOTS;
    MPI_Request req[2 * SLOTS];
    for (int k = 0; k < slots; k++)
        errs += GT_MPI(c->rank, what,
                       MPI_Irecv(r.p + rstride * (size_t)k + GT_GUARD, (int)n, MPI_BYTE, src, tag0 + k,
                                 MPI_COMM_WORLD, &req[k]));
    for (int k = 0; k < slots; k++)
        errs += GT_MPI(c->rank, what,
                       MPI_Isend(s.p + sstride * (size_t)k, (int)n, MPI_BYTE, dst, tag0 + k, MPI_COMM_WORLD,
                                 &req[slots + k]));
    for (int k = 2 * slots - 1; k >= 0; k--) { /* waits in reverse order */
        MPI_Status st;
        errs += GT_MPI(c->rank, what, MPI_Wait(&req[k], &st));
        if (k < slots)
            errs += gt_check_status(c->rank, what, &st, MPI_BYTE, src, tag0 + k, (int)n);
    }
    t = lap(c, PH_MPI, t);
    const unsigned char *view = mem_view(c, r, rstride * (size_t)slots);
    if (memcmp(view, im->expect, rstride * (size_t)slots) != 0) { /* then say what is wrong */
        int found = 0;
        for (int k = 0; k < slots; k++)
            found += check_slot(c, what, view + rstride * (size_t)k, n, src, k);
        if (!found) { /* the padding between one slot's guard and the next slot */
            size_t off = 0;
            while (view[off] == im->expect[off])
                off++;
            found = gt_fail(c->rank, "%s: byte %zu of the receive area, outside every message and guard, was "
                            "overwritten", what, off);
        }
        errs += found;
    }
    t = lap(c, PH_CHECK, t);
    mem_free(c, &s);
    mem_free(c, &r);
    lap(c, PH_FREE, t);
    return errs;
}

/* Seconds per size and phase, the most any rank spent, summed over the
 * repetitions: where a stress run's time goes. */
static void print_profile(ctx_t *c, const size_t *sizes, int nsizes)
{
    double most[MAX_SIZES][PH_COUNT];
    MPI_Reduce(&c->spent[0][0], &most[0][0], MAX_SIZES * PH_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (c->rank != 0)
        return;
    double total[PH_COUNT] = {0};
    for (int i = 0; i < nsizes; i++) {
        char line[256];
        int len = snprintf(line, sizeof line, "gpu_memkind: profile %9zu B:", sizes[i]);
        for (int p = 0; p < PH_COUNT; p++) {
            len += snprintf(line + len, sizeof line - (size_t)len, " %s %.3f s", phase_name[p], most[i][p]);
            total[p] += most[i][p];
        }
        gt_note("%s", line);
    }
    gt_note("gpu_memkind: profile all sizes: alloc %.3f s fill %.3f s mpi %.3f s check %.3f s free %.3f s",
            total[PH_ALLOC], total[PH_FILL], total[PH_MPI], total[PH_CHECK], total[PH_FREE]);
}

static int parse_list(const char *env, const char *const names[], int count, int *on)
{
    const char *v = getenv(env);
    if (!v || !*v) {
        for (int i = 0; i < count; i++)
            on[i] = 1;
        return 0;
    }
    for (int i = 0; i < count; i++) {
        const char *p = strstr(v, names[i]);
        size_t len = strlen(names[i]);
        /* whole words only ("pool" must not match "userpool") */
        while (p && !((p == v || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')))
            p = strstr(p + 1, names[i]);
        on[i] = p != NULL;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    gt_init(&argc, &argv, &rank, &size);
    ctx_t c = {.rank = rank, .size = size, .peer_dev = -1};
    GT_CUDA(cudaGetDevice(&c.dev));
    int ndev = 0;
    GT_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev > 1)
        c.peer_dev = (c.dev + 1) % ndev;
    GT_CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = c.dev;
    GT_CUDA(cudaMemPoolCreate(&c.pool, &props));

    int on[K_COUNT];
    parse_list("MEMKIND_KINDS", kind_name, K_COUNT, on);
    if (c.peer_dev < 0)
        on[K_PEER] = 0;
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    int local = 1;
    const char *ls = getenv("AMPI_LOCAL_SIZE");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    /* ranks per process: AMPI_LOCAL_SIZE counts processes of the node */
    int per_proc = ls && atoi(ls) > 0 ? local / atoi(ls) : 1;
    size_t max = gt_max_bytes(per_proc > 2 ? 4 * MiB + 3 : 64 * MiB);
    const char *sv = getenv("MEMKIND_SIZES");
    if (sv && *sv) {
        for (char *end; *sv && nsizes < MAX_SIZES; sv = *end ? end + 1 : end) {
            unsigned long long x = strtoull(sv, &end, 0);
            if (end == sv)
                break;
            if (x <= max)
                sizes[nsizes++] = (size_t)x;
        }
    } else {
        for (size_t i = 0; i < sizeof default_sizes / sizeof default_sizes[0]; i++)
            if (default_sizes[i] <= max)
                sizes[nsizes++] = default_sizes[i];
    }
    int repeat = 1;
    const char *rv = getenv("MEMKIND_REPEAT");
    if (rv && atoi(rv) > 0)
        repeat = atoi(rv);
    int shifts[2] = {1, size / 2}, nshifts = size / 2 > 1 ? 2 : 1;
    if (size == 1)
        shifts[0] = 0; /* a rank with itself */

    c.stage_cap = 0;
    c.stage = NULL;
    GT_CUDA(cudaMallocHost((void **)&c.stage, 1));

    /* MEMKIND_SECONDS=S: no repetition starts once S seconds have passed
     * (rank 0's clock, broadcast, so that every rank runs as many) */
    const char *secs = getenv("MEMKIND_SECONDS");
    double budget = secs && atof(secs) > 0 ? atof(secs) : 0, t0 = MPI_Wtime();
    long cases = 0;
    int done = 0;
    for (c.rep = 0; c.rep < repeat; c.rep++) {
        if (budget > 0 && c.rep > 0) {
            int stop = rank == 0 && MPI_Wtime() - t0 >= budget;
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop)
                break;
        }
        for (int i = 0; i < nsizes; i++)
            for (int sk = 0; sk < K_COUNT; sk++)
                for (int rk = 0; rk < K_COUNT; rk++) {
                    if (!on[sk] || !on[rk])
                        continue;
                    for (int h = 0; h < nshifts; h++) {
                        c.size_index = i;
                        errs += exchange(&c, sk, rk, sizes[i], shifts[h], h);
                        cases++;
                    }
                }
        done++;
        int all = errs;
        if (rv) { /* progress of a stress run (MEMKIND_REPEAT given), which may be cut short from outside */
            MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (rank == 0)
                gt_note("gpu_memkind: repetition %d of %d done after %.1f s, %d failure(s) so far", done, repeat,
                        MPI_Wtime() - t0, all);
        }
        if (all && getenv("MEMKIND_STOP_ON_ERROR")) /* every rank alike where repeating */
            break;
    }
    if (rank == 0)
        gt_note("gpu_memkind: %ld exchanges of %d messages at most per rank, %d of %d repetition(s)%s, %d GPU(s)",
                cases, SLOTS, done, repeat, done < repeat ? " (MEMKIND_SECONDS spent)" : "", ndev);
    if (getenv("MEMKIND_PROFILE"))
        print_profile(&c, sizes, nsizes);
    GT_CUDA(cudaFreeHost(c.stage));
    for (int h = 0; h < 2; h++) {
        if (c.img[h].send)
            GT_CUDA(cudaFreeHost(c.img[h].send));
        free(c.img[h].expect);
    }
    GT_CUDA(cudaStreamSynchronize(c.stream));
    GT_CUDA(cudaStreamDestroy(c.stream));
    GT_CUDA(cudaMemPoolDestroy(c.pool));
    return gt_finish(rank, errs, "gpu_memkind");
}
