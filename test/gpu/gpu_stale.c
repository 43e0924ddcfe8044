/* gpu_stale.c - buffers whose address is reused after a free, and pinned and
 * managed memory.
 *
 * A library that remembers what kind of memory lives at an address (AMPI-UCX
 * caches allocation ranges, UCX caches registrations and IPC mappings) must
 * forget it when the memory is freed.  Each iteration allocates a buffer A
 * (device memory, or pinned host memory), sends from it and receives into it
 * around the ring (a rank alone sends to itself), frees it, and then tries
 * to get different memory at the same address:
 *   - host memory: mmap(A, MAP_FIXED_NOREPLACE), which works where the
 *     freed range was unmapped (pinned memory; the CUDA driver usually keeps
 *     freed device ranges reserved, so there it fails)
 *   - an allocation of the same kind and another size, tried a few times
 *     until the allocator hands out A again (the same size as a last try)
 * and sends from and receives into the new buffer with new data.  Which case
 * happened is summed over all ranks and printed; when the address never
 * repeats the test still checks the data but says the stale case was not
 * exercised.
 *
 * Then pinned (cudaMallocHost) and managed (cudaMallocManaged) buffers go
 * to and from host, device, pinned and managed buffers.  Last, a new
 * allocation at a freed one's address may get its CUDA IPC handle (counted).
 */
#define _GNU_SOURCE
#include "gputest.h"

#include <sys/mman.h>
#include <unistd.h>

#define KiB ((size_t)1024)
#define MiB (1024 * KiB)

enum { TAG_RING = 700, TAG_CAP = 701 };

/* memory kinds */
enum { K_HOST, K_DEVICE, K_PINNED, K_MANAGED, K_MMAP, K_COUNT };
static const char *const kind_name[K_COUNT] = {"host", "device", "pinned",
                                               "managed", "mmap host"};

typedef struct {
    gt_buf b; /* b.dev is set for device memory only: the CPU reaches the rest */
    int kind;
    void *map; /* K_MMAP: the mapping holding b (from the page below b.p) */
    size_t maplen;
} mem_t;

static mem_t mem_alloc(size_t len, int kind)
{
    mem_t m = {{NULL, len, kind == K_DEVICE}, kind, NULL, 0};
    size_t n = len ? len : 1;
    switch (kind) {
    case K_DEVICE:
        GT_CUDA(cudaMalloc((void **)&m.b.p, n));
        break;
    case K_PINNED:
        GT_CUDA(cudaMallocHost((void **)&m.b.p, n));
        break;
    case K_MANAGED:
        GT_CUDA(cudaMallocManaged((void **)&m.b.p, n, cudaMemAttachGlobal));
        break;
    default:
        m.b.p = gt_malloc(n);
        m.kind = K_HOST;
        break;
    }
    return m;
}

static void mem_free(mem_t *m)
{
    switch (m->kind) {
    case K_DEVICE:
        GT_CUDA(cudaFree(m->b.p));
        break;
    case K_PINNED:
        GT_CUDA(cudaFreeHost(m->b.p));
        break;
    case K_MANAGED:
        GT_CUDA(cudaFree(m->b.p));
        break;
    case K_MMAP:
        munmap(m->map, m->maplen);
        break;
    default:
        free(m->b.p);
        break;
    }
    m->b.p = NULL;
}

typedef struct {
    int rank, size, left, right;
    unsigned char *stage; /* pinned, STAGE bytes */
} ctx_t;

enum { STAGE = 16 * 1024 * 1024 + 4096 };

/* One ring step: send `slen` bytes of pattern (me, right, slen, key) from
 * `s` to the right and receive from the left into `r` (room `rlen`,
 * followed by GT_GUARD poisoned bytes when r_guard).  The sender's length is
 * learnt from the status; `rexpect` >= 0 demands it. */
static int ring_step(ctx_t *c, const char *what, mem_t *s, size_t slen,
                     mem_t *r, size_t rlen, int r_guard, long rexpect,
                     uint64_t key)
{
    int errs = 0, me = c->rank;
    MPI_Request req[2];
    MPI_Status st[2];
    gt_fill(s->b, slen, gt_seed((uint64_t)me, (uint64_t)c->right, slen, key),
            c->stage);
    gt_set(r->b, 0, GT_POISON, rlen + (r_guard ? GT_GUARD : 0));
    errs += GT_MPI(me, what, MPI_Irecv(r->b.p, (int)rlen, MPI_BYTE, c->left,
                                       TAG_RING, MPI_COMM_WORLD, &req[0]));
    errs += GT_MPI(me, what, MPI_Isend(s->b.p, (int)slen, MPI_BYTE, c->right,
                                       TAG_RING, MPI_COMM_WORLD, &req[1]));
    errs += GT_MPI(me, what, MPI_Waitall(2, req, st));
    if (errs)
        return errs;
    int got = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &got);
    if (gt_check_status(me, what, &st[0], MPI_BYTE, c->left, TAG_RING,
                        rexpect >= 0 ? (int)rexpect : got))
        return 1;
    if (got < 0 || (size_t)got > rlen)
        return gt_fail(me, "%s: count %d for a receive of %zu", what, got, rlen);
    return gt_verify(me, what, r->b, (size_t)got,
                     gt_seed((uint64_t)c->left, (uint64_t)me, (uint64_t)got,
                             key),
                     rlen - (size_t)got + (r_guard ? GT_GUARD : 0), c->stage);
}

/* Send from m (len bytes) and receive into m (exactly len bytes: the left
 * neighbour is told the length first) around the ring; `t` and `u` are
 * device buffers of at least `big` bytes (+ guard) for the other ends. */
static int use_buffer(ctx_t *c, const char *label, mem_t *m, mem_t *t,
                      mem_t *u, size_t big, uint64_t key)
{
    int errs = 0, me = c->rank, mine = (int)m->b.cap, theirs = -1;
    char what[160];
    /* the left neighbour fills my buffer: it needs its length */
    errs += GT_MPI(me, label, MPI_Sendrecv(&mine, 1, MPI_INT, c->left, TAG_CAP,
                                           &theirs, 1, MPI_INT, c->right,
                                           TAG_CAP, MPI_COMM_WORLD,
                                           MPI_STATUS_IGNORE));
    if (errs || theirs < 0 || (size_t)theirs > big)
        return errs + gt_fail(me, "%s: right neighbour's length %d", label,
                              theirs);

    snprintf(what, sizeof what, "%s: send from %s buffer of %zu B at %p",
             label, kind_name[m->kind], m->b.cap, (void *)m->b.p);
    errs += ring_step(c, what, m, m->b.cap, t, big, 1, -1, key);
    snprintf(what, sizeof what, "%s: receive into %s buffer of %zu B at %p",
             label, kind_name[m->kind], m->b.cap, (void *)m->b.p);
    errs += ring_step(c, what, u, (size_t)theirs, m, m->b.cap, 0,
                      (long)m->b.cap, key + 1);
    return errs;
}

enum { R_MMAP, R_OTHER_SIZE, R_SAME_SIZE, R_NONE, R_COUNT };
static const char *const reuse_name[R_COUNT] = {
    "host memory mapped at the freed address",
    "same kind, another size, at the freed address",
    "same kind and size at the freed address", "address not reused"};

/* After `old` (of `kind`, len bytes) was freed: memory at the same address
 * if possible.  *how receives the R_ case. */
static mem_t reuse(void *old, size_t len, int kind, int *how)
{
    /* mappings start at a page: map from the page holding `old` */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *base = (void *)((uintptr_t)old & ~(page - 1));
    size_t maplen = len + (size_t)((uintptr_t)old - (uintptr_t)base);
    void *p = mmap(base, maplen, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == base) {
        *how = R_MMAP;
        return (mem_t){{old, len, 0}, K_MMAP, base, maplen};
    }
    /* kernels before 4.17 take the flag as a hint and map elsewhere */
    if (p != MAP_FAILED)
        munmap(p, maplen);

    const size_t sizes[] = {len / 2, len * 2, len + 64 * KiB, len * 3 / 4,
                            len / 4 + 8, len};
    enum { TRIES = sizeof sizes / sizeof sizes[0] };
    mem_t held[TRIES], got = {{NULL, 0, 0}, K_HOST, NULL, 0};
    int nheld = 0;
    *how = R_NONE;
    for (int i = 0; i < TRIES; i++) {
        mem_t m = mem_alloc(sizes[i], kind);
        if (m.b.p == old) {
            got = m;
            *how = sizes[i] == len ? R_SAME_SIZE : R_OTHER_SIZE;
            break;
        }
        /* keep it, so that the next try cannot get the same place again */
        held[nheld++] = m;
    }
    if (*how == R_NONE) /* a fresh buffer: the checks still run */
        got = held[--nheld];
    for (int i = 0; i < nheld; i++)
        mem_free(&held[i]);
    return got;
}

static int stale_iteration(ctx_t *c, int kind, size_t len, int iter,
                           int *cases)
{
    int errs = 0, how = R_NONE;
    const size_t big = 2 * len + 64 * KiB; /* the largest reuse size */
    mem_t t = mem_alloc(big + GT_GUARD, K_DEVICE);
    mem_t u = mem_alloc(big, K_DEVICE);
    mem_t a = mem_alloc(len, kind);
    char label[120];
    void *old = a.b.p;

    snprintf(label, sizeof label, "stale %d before the free", iter);
    errs += use_buffer(c, label, &a, &t, &u, big, 10 * (uint64_t)iter);
    /* all transfers that involve a are complete on both ends */
    errs += GT_MPI(c->rank, label, MPI_Barrier(MPI_COMM_WORLD));
    mem_free(&a);

    mem_t b = reuse(old, len, kind, &how);
    cases[how]++;
    snprintf(label, sizeof label, "stale %d after the free (%s)", iter,
             reuse_name[how]);
    errs += use_buffer(c, label, &b, &t, &u, big, 10 * (uint64_t)iter + 5);
    errs += GT_MPI(c->rank, label, MPI_Barrier(MPI_COMM_WORLD));
    mem_free(&b);
    mem_free(&t);
    mem_free(&u);
    return errs;
}

/* Pinned and managed memory to and from every kind. */
static int kinds(ctx_t *c)
{
    static const int kind_list[] = {K_HOST, K_DEVICE, K_PINNED, K_MANAGED};
    static const size_t lens[] = {100, 1 * MiB + 3};
    int errs = 0;
    uint64_t key = 100;
    for (int si = 0; si < 4; si++)
        for (int ri = 0; ri < 4; ri++) {
            int sk = kind_list[si], rk = kind_list[ri];
            if (sk != K_PINNED && sk != K_MANAGED && rk != K_PINNED &&
                rk != K_MANAGED)
                continue;
            for (int l = 0; l < 2; l++) {
                mem_t s = mem_alloc(lens[l], sk);
                mem_t r = mem_alloc(lens[l] + GT_GUARD, rk);
                char what[120];
                snprintf(what, sizeof what, "%s -> %s, %zu B", kind_name[sk],
                         kind_name[rk], lens[l]);
                errs += ring_step(c, what, &s, lens[l], &r, lens[l], 1,
                                  (long)lens[l], key++);
                mem_free(&s);
                mem_free(&r);
            }
        }
    return errs;
}

/* CUDA promises a new IPC handle to a new allocation at a freed one's
 * address; a driver has been seen giving 64 KiB allocations the old handle
 * again, so the IPC route's mapping cache (src/gpu/gpu_ipc.c) tells
 * allocations apart by the driver's buffer id as well.  Allocate, take the
 * handle, free, and allocate again until the address repeats (a few tries),
 * and count the handles that repeat with it (*same, printed: the data
 * checks of the ring above are what must pass either way); *reused:
 * whether the address repeated. */
static void handle_reuse(int *reused, int *same)
{
    const size_t sizes[] = {64 * KiB, 2 * MiB};
    *reused = *same = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void *a = NULL, *b = NULL, *held[8];
        int nheld = 0;
        cudaIpcMemHandle_t ha, hb;
        GT_CUDA(cudaMalloc(&a, sizes[k]));
        GT_CUDA(cudaIpcGetMemHandle(&ha, a));
        GT_CUDA(cudaFree(a));
        for (int t = 0; t < 8; t++) {
            GT_CUDA(cudaMalloc(&b, sizes[k]));
            if (b == a)
                break;
            held[nheld++] = b; /* keep it, so that the next try gets other memory */
            b = NULL;
        }
        if (b) {
            (*reused)++;
            GT_CUDA(cudaIpcGetMemHandle(&hb, b));
            *same += !memcmp(&ha, &hb, sizeof ha);
            GT_CUDA(cudaFree(b));
        }
        while (nheld > 0)
            GT_CUDA(cudaFree(held[--nheld]));
    }
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    gt_init(&argc, &argv, &rank, &size);
    ctx_t c = {rank, size, (rank + size - 1) % size, (rank + 1) % size, NULL};
    GT_CUDA(cudaMallocHost((void **)&c.stage, STAGE));

    /* device buffers large (own mapping) and small (sub-allocated), and a
     * pinned buffer, which is unmapped when freed */
    static const struct {
        int kind;
        size_t len;
    } iters[] = {{K_DEVICE, 4 * MiB}, {K_DEVICE, 64 * KiB},
                 {K_DEVICE, 2 * MiB + 4096}, {K_PINNED, 1 * MiB},
                 {K_PINNED, 8 * KiB}};
    enum { ITERS = sizeof iters / sizeof iters[0] };
    int cases[ITERS][R_COUNT], all[ITERS][R_COUNT];
    memset(cases, 0, sizeof cases);
    for (int i = 0; i < ITERS; i++)
        errs += stale_iteration(&c, iters[i].kind, iters[i].len, i, cases[i]);

    MPI_Allreduce(cases, all, ITERS * R_COUNT, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < ITERS; i++) {
            char line[400];
            int len = snprintf(line, sizeof line, "gpu_stale: %s %zu B freed:",
                               kind_name[iters[i].kind], iters[i].len);
            for (int k = 0; k < R_COUNT; k++)
                if (all[i][k] && len < (int)sizeof line)
                    len += snprintf(line + len, sizeof line - (size_t)len,
                                    " %d rank(s) %s;", all[i][k],
                                    reuse_name[k]);
            gt_note("%s", line);
        }
        int stale = 0;
        for (int i = 0; i < ITERS; i++)
            stale += all[i][R_MMAP] + all[i][R_OTHER_SIZE] + all[i][R_SAME_SIZE];
        if (!stale)
            gt_note("gpu_stale: NOTE no freed address was reused: the stale "
                    "case was not exercised");
    }

    errs += kinds(&c);
    int counts[2] = {0, 0}, sums[2] = {0, 0};
    handle_reuse(&counts[0], &counts[1]);
    MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        gt_note("gpu_stale: IPC handles compared after address reuse in %d case(s), the same handle in %d%s",
                sums[0], sums[1], sums[0] ? "" : " (NOTE: no address repeated, not exercised)");
    GT_CUDA(cudaFreeHost(c.stage));
    return gt_finish(rank, errs, "gpu_stale");
}
