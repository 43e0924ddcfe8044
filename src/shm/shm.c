/* Shared-memory segments and the receiver's poll (see shm.h, shm_ring.h). */
#include "shm/shm.h"
#include "ucx/ucx_pmix.h"
#include "core/core_settings.h"
#include "util/util_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SHM_KEY "ampi.shm.segment"
#define SHM_MAGIC 0x414d504973686d33ull /* "AMPIshm3": rings sized per job */
/* Up to this many peers the receiver reads each ring's next cell on every
 * poll (one load each, and no shared word that all senders write); with
 * more, senders also raise the segment's notify word and an idle poll
 * reads that one word only. */
#define SHM_SCAN_MAX 4

typedef struct shm_seg_hdr {
    uint64_t magic;
    uint32_t nlocal, cells, cell_size, owner; /* nlocal: rings, one per process of the node */
    _Alignas(SHM_LINE) _Atomic uint32_t notify; /* its own line: senders write it */
} shm_seg_hdr_t;

shm_tx_t *shm_tx;
unsigned shm_sent_since_taken;

static struct {
    int proc, nprocs;
    int nlocal;         /* processes on this node, this one included */
    int *local_index;   /* by process: its ring's place in a segment (-1: other node) */
    char name[256];     /* our segment's name while it is linked, else "" */
    shm_seg_hdr_t *own; /* our segment (NULL: none) */
    void **peer_seg;    /* by process: its segment as mapped here */
    size_t seg_size;
    uint32_t cells;     /* of every ring (shm_ring_cells_for) */
    shm_rx_t *rx;       /* the rings of our segment that peers fill */
    int nrx;
    bool use_notify;
    bool more;          /* the last poll left full cells behind */
    bool polling;
} S;

static size_t seg_size(int nlocal, uint32_t cells)
{
    return sizeof(shm_seg_hdr_t) + (size_t)nlocal * shm_ring_bytes(cells);
}

/* The ring that process from fills in a segment of its node. */
static shm_ring_t *ring_in(void *seg, int from)
{
    return (shm_ring_t *)((char *)seg + sizeof(shm_seg_hdr_t) +
                          (size_t)S.local_index[from] * shm_ring_bytes(S.cells));
}

/* "/ampi-<namespace>-<rank>-<pid>" with anything but [A-Za-z0-9._-] made '_'
 * (namespaces may hold '/' or '@'); the pid keeps two jobs whose truncated
 * namespaces agree apart, O_EXCL anything else.  ampirun removes what a
 * killed job leaves by this prefix (src/launch/launch_clean.c). */
static void make_name(char *out, size_t cap, int proc)
{
    const char *ns = ucx_pmix_nspace();
    char clean[160];
    size_t n = 0;
    for (; ns && ns[n] && n < sizeof clean - 1; n++) {
        char ch = ns[n];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                  ch == '_' || ch == '-';
        clean[n] = ok ? ch : '_';
    }
    clean[n] = '\0';
    snprintf(out, cap, "/ampi-%s-%d-%ld", clean, proc, (long)getpid());
}

static int make_segment(void)
{
    make_name(S.name, sizeof S.name, S.proc);
    int fd = shm_open(S.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        util_debug("shm_open %s: %s; envelopes to this process take UCX", S.name, strerror(errno));
        S.name[0] = '\0';
        return -1;
    }
    /* fallocate, not just ftruncate: a full /dev/shm then fails here instead
     * of raising SIGBUS at some later send */
    int err = posix_fallocate(fd, 0, (off_t)S.seg_size);
    void *seg = err ? MAP_FAILED : mmap(NULL, S.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (seg == MAP_FAILED) {
        util_debug("shared segment of %zu bytes: %s; envelopes to this process take UCX", S.seg_size,
                   strerror(err ? err : errno));
        shm_unlink(S.name);
        S.name[0] = '\0';
        return -1;
    }
    /* touched by its reader first, so its pages sit near the reader */
    memset(seg, 0, S.seg_size);
    S.own = seg;
    S.own->magic = SHM_MAGIC;
    S.own->nlocal = (uint32_t)S.nlocal;
    S.own->cells = S.cells;
    S.own->cell_size = SHM_CELL_SIZE;
    S.own->owner = (uint32_t)S.proc;
    return 0;
}

int shm_create(int proc, int nprocs, bool enabled)
{
    S.proc = proc;
    S.nprocs = nprocs;
    /* rings only for the processes of this node, as PMIx names them: a
     * process of another node (its own /dev/shm) never gets one */
    S.local_index = malloc(sizeof *S.local_index * (size_t)nprocs);
    if (!S.local_index)
        util_fatal("out of memory");
    S.nlocal = 0;
    for (int p = 0; p < nprocs; p++)
        S.local_index[p] = ucx_pmix_is_local(p) ? S.nlocal++ : -1;
    /* the same for every process of the node: peers check it (map_peer) */
    S.cells = shm_ring_cells_for(S.nlocal);
    S.seg_size = seg_size(S.nlocal, S.cells);
    S.use_notify = S.nlocal - 1 > SHM_SCAN_MAX;
    if (enabled && !S.cells)
        util_debug("%d processes on this node: rings would be too small; envelopes take UCX", S.nlocal);
    int rc = enabled && S.cells ? make_segment() : -1;
    /* always published, empty when there is no segment: a peer's get must
     * not wait for a key that never comes */
    const char *name = rc == 0 ? S.name : "";
    if (ucx_pmix_put(SHM_KEY, name, strlen(name) + 1) != 0)
        util_warn("cannot publish the shared-memory segment name through PMIx");
    return rc;
}

static void *map_peer(int p)
{
    void *data = NULL;
    size_t len = 0;
    void *seg = NULL;
    if (ucx_pmix_get(p, SHM_KEY, &data, &len) != 0)
        return NULL;
    const char *name = data;
    if (len > 1 && name[len - 1] == '\0') {
        int fd = shm_open(name, O_RDWR, 0);
        if (fd >= 0) {
            seg = mmap(NULL, S.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            if (seg == MAP_FAILED)
                seg = NULL;
        }
        const shm_seg_hdr_t *h = seg;
        if (h && (h->magic != SHM_MAGIC || h->nlocal != (uint32_t)S.nlocal || h->cells != S.cells ||
                  h->cell_size != SHM_CELL_SIZE || h->owner != (uint32_t)p)) {
            util_warn("shared segment %s of process %d has another layout; using UCX to it", name, p);
            munmap(seg, S.seg_size);
            seg = NULL;
        }
    }
    free(data);
    return seg;
}

/* Map the pages of a peer's ring that we write into our page table now:
 * else the first lap of the ring takes a page fault every 16 cells (a
 * 1 MiB ring: 256 faults while the job's first few thousand messages go;
 * without this the first size of osu_bcast, osu_allgather and osu_alltoall
 * runs ~0.1 us slower than the second; BENCHMARKS.md, 2026-11-22, 2 x H200,
 * 343bb73, change 828ccdd). */
static void populate(void *ring, size_t bytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (uintptr_t)ring & ~(page - 1), end = ((uintptr_t)ring + bytes + page - 1) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
    /* writes nothing: the neighbouring rings' pages it also covers are safe */
    if (madvise((void *)first, end - first, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    /* older kernels: a read maps the (already allocated) page */
    for (uintptr_t at = first; at < end; at += page)
        (void)*(volatile const char *)at;
}

void shm_attach(void)
{
    int reached = 0;
    /* AMPI_SHM_MEDIUM=0: no medium entries (8-32 KiB payloads then always
     * take the CMA route) */
    bool medium = core_setting_bool(CORE_SET_SHM_MEDIUM);
    /* cells ahead a streaming sender asks for (shm_ring_ask_ahead; 0: off):
     * 8 by default, the best of those measured (osu_bw 1-64 B, 7 paired
     * rounds: 8 ahead 1.38-2.49x Open MPI's rate, 4 ahead 1.08-1.78x, none
     * 1.05-2.05x; BENCHMARKS.md, 2026-11-26, 2 x H100, 98f6c62) */
    long long pw = 0;
    core_setting_int(CORE_SET_SHM_PREFETCHW, &pw); /* 0..16 */
    uint32_t ahead = (uint32_t)pw;
    S.peer_seg = calloc((size_t)S.nprocs, sizeof *S.peer_seg);
    shm_tx = calloc((size_t)S.nprocs, sizeof *shm_tx);
    if (!S.peer_seg || !shm_tx)
        util_fatal("out of memory");
    for (int p = 0; p < S.nprocs; p++) {
        if (p == S.proc || S.local_index[p] < 0 || !(S.peer_seg[p] = map_peer(p)))
            continue;
        shm_seg_hdr_t *h = S.peer_seg[p];
        shm_tx[p].ring = ring_in(h, S.proc);
        populate(shm_tx[p].ring, shm_ring_bytes(S.cells));
        shm_tx[p].mask = S.cells - 1;
        shm_tx[p].entry_max = medium && S.cells >= SHM_MEDIUM_MIN_CELLS ? SHM_MEDIUM_MAX : SHM_ENTRY_MAX;
        shm_tx[p].notify = S.use_notify ? &h->notify : NULL;
        shm_tx[p].ahead = ahead;
        reached++;
    }
    if (!reached) { /* every send takes UCX: spare shm_send its test */
        free(shm_tx);
        shm_tx = NULL;
    }
    if (S.own) {
        S.rx = calloc((size_t)S.nlocal, sizeof *S.rx);
        if (!S.rx)
            util_fatal("out of memory");
        for (int p = 0; p < S.nprocs; p++)
            if (p != S.proc && S.local_index[p] >= 0)
                S.rx[S.nrx++] = (shm_rx_t){ .ring = ring_in(S.own, p), .mask = S.cells - 1 };
    }
    util_debug("shared memory: %d of %d peers on this node reachable, own segment %s", reached, S.nlocal - 1,
               S.own ? "mapped" : "absent");
}

void shm_unlink_own(void)
{
    if (S.name[0])
        shm_unlink(S.name);
    S.name[0] = '\0';
}

void shm_fini(void)
{
    shm_unlink_own();
    for (int p = 0; S.peer_seg && p < S.nprocs; p++)
        if (S.peer_seg[p])
            munmap(S.peer_seg[p], S.seg_size);
    if (S.own)
        munmap(S.own, S.seg_size);
    free(S.peer_seg);
    free(S.rx);
    free(S.local_index);
    S.local_index = NULL;
    free(shm_tx);
    shm_tx = NULL;
    S.peer_seg = NULL;
    S.rx = NULL;
    S.own = NULL;
    S.nrx = 0;
}

/* Take what the rings hold (out of line: the empty poll stays a leaf). */
static __attribute__((noinline)) int drain(shm_envelope_fn fn)
{
    S.polling = true;
    S.more = false;
    int n = 0;
    for (int i = 0; i < S.nrx; i++) {
        shm_rx_t *r = &S.rx[i];
        unsigned k = 0;
        const shm_cell_t *c;
        /* at most a ring's worth per sender and poll: one busy sender cannot
         * keep us from the others (or from UCX) */
        bool stop = false;
        for (; k < S.cells && !stop && (c = shm_ring_peek(r)); k++) {
            stop = fn(c->bytes, c->len);
            shm_ring_pop(r, c);
        }
        n += (int)k;
        if (k)
            shm_sent_since_taken = 0;
        S.more |= k == S.cells || stop;
        if (stop)
            break;
    }
    S.polling = false;
    return n;
}

int shm_poll(shm_envelope_fn fn)
{
    if (!S.rx || S.polling)
        return 0;
    if (S.use_notify) {
        if (!S.more) {
            if (!atomic_load_explicit(&S.own->notify, memory_order_relaxed))
                return 0;
            /* a full barrier: the clear must be visible before we read the
             * cells, or a sender that publishes meanwhile could see its raise
             * overwritten while we miss its cell */
            atomic_exchange(&S.own->notify, 0);
        }
        return drain(fn);
    }
    /* a few peers: the next cell of each ring, nothing else */
    for (int i = 0; i < S.nrx; i++)
        if (shm_ring_peek(&S.rx[i]))
            return drain(fn);
    return 0;
}
