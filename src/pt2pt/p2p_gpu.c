/* Device buffers in point-to-point: classification and the asynchronous
 * device copies used between ranks of one process (and to land host data in
 * device buffers).  Copies run on the PE's stream; the PE's progress polls
 * them and completes the requests waiting on them. */
#include "pt2pt/p2p.h"
#include "gpu/gpu.h"
#include "gpu/gpu_dt.h"
#include "datatype/dt.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

typedef struct p2p_copy {
    util_dlink_t link;
    gpu_copy_t gc;
    p2p_req_t *a, *b;
    void *free_after;
    void (*then)(void *);
    void *then_arg;
} p2p_copy_t;

/* Managed memory counts as device memory: it travels by the copy engine
 * (or by UCX told it is managed), never by the CPU paths (eager memcpy,
 * process_vm_readv), whatever its pages' place at the moment -- the copy
 * engine reads and writes it correctly wherever they are, while CPU copies
 * fault its pages over one by one (docs/gpu.md). */
bool p2p_classify_device(const void *buf, size_t bytes)
{
    gpu_mem_t m;
    gpu_classify(buf, bytes, &m);
    return m.kind == GPU_MEM_DEVICE || m.kind == GPU_MEM_MANAGED;
}

ucx_mem_t p2p_ucx_mem(const void *buf, size_t bytes)
{
    gpu_mem_t m;
    gpu_classify(buf, bytes, &m);
    /* AMPI_GPU_POOL_AS_MANAGED: pool memory as UCX's own detection labels it */
    if (m.kind == GPU_MEM_DEVICE && UTIL_UNLIKELY(p2p_proc.gpu_pool_as_managed) && gpu_is_pool_memory(buf))
        return UCX_MEM_CUDA_MANAGED;
    return m.kind == GPU_MEM_DEVICE ? UCX_MEM_CUDA : m.kind == GPU_MEM_MANAGED ? UCX_MEM_CUDA_MANAGED : UCX_MEM_HOST;
}

static void finish(p2p_copy_t *c)
{
    if (c->then)
        c->then(c->then_arg);
    if (c->a)
        p2p_req_part_done(c->a);
    if (c->b)
        p2p_req_part_done(c->b);
    free(c->free_after);
    free(c);
}

static void copy_start(p2p_copy_t *c, void *dst, const void *src, size_t n);

void p2p_copy_running_then_call(const gpu_copy_t *gc, p2p_req_t *a, void (*fn)(void *), void *arg)
{
    p2p_copy_t *c = malloc(sizeof *c);
    if (!c)
        util_fatal("out of memory");
    *c = (p2p_copy_t){ .a = a, .then = fn, .then_arg = arg, .gc = *gc };
    util_dlist_push_back(&p2p_proc.copies, &c->link);
    p2p_proc.ncopies++;
}

static void copy_new(void *dst, const void *src, size_t n, p2p_req_t *a, p2p_req_t *b, void *free_after,
                     void (*fn)(void *), void *arg)
{
    p2p_copy_t *c = malloc(sizeof *c);
    if (!c)
        util_fatal("out of memory");
    *c = (p2p_copy_t){ .a = a, .b = b, .free_after = free_after, .then = fn, .then_arg = arg };
    copy_start(c, dst, src, n);
}

void p2p_copy_then_complete(void *dst, const void *src, size_t n, p2p_req_t *a, p2p_req_t *b, void *free_after)
{
    copy_new(dst, src, n, a, b, free_after, NULL, NULL);
}

void p2p_copy_then_call(void *dst, const void *src, size_t n, p2p_req_t *a, void (*fn)(void *), void *arg)
{
    copy_new(dst, src, n, a, NULL, NULL, fn, arg);
}

static void copy_start(p2p_copy_t *c, void *dst, const void *src, size_t n)
{
    if (n == 0) {
        finish(c);
        return;
    }
    int rc = gpu_copy_start(dst, src, n, &c->gc);
    if (rc != 0)
        util_fatal("device copy of %zu bytes failed to start (CUDA error %d)", n, rc);
    util_dlist_push_back(&p2p_proc.copies, &c->link);
    p2p_proc.ncopies++;
}

/* Every copy of the list runs on the PE's main stream (gpu_copy_start), so
 * they finish in the order they were started: polling stops at the first
 * one still running.  Asking the driver about all of them cost each
 * progress call one cuEventQuery per copy in flight -- 64 of them behind an
 * osu_mbw_mr window of device messages. */
int p2p_copies_progress(void)
{
    int n = 0;
    util_dlink_t *it;
    while ((it = util_dlist_first(&p2p_proc.copies)) != NULL) {
        p2p_copy_t *c = UTIL_CONTAINER_OF(it, p2p_copy_t, link);
        if (!gpu_copy_done(&c->gc))
            break;
        util_dlist_remove(&c->link);
        p2p_proc.ncopies--;
        finish(c);
        n++;
    }
    return n;
}

/* ---- derived datatypes on device buffers (gpu_dt.h) ---- */

static gpu_dt_layout_t *layout_of(MPI_Datatype dt)
{
    gpu_dt_layout_t *l = dt_gpu_layout(dt);
    if (!l)
        util_fatal("out of memory for the device layout of a datatype");
    return l;
}

void p2p_dev_pack_wait(void *dst, const void *src, int count, MPI_Datatype dt)
{
    gpu_copy_t gc;
    int rc = gpu_dt_pack_start(dst, src, (size_t)count, layout_of(dt), &gc);
    if (rc != 0)
        util_fatal("packing a derived datatype on the GPU failed to start (CUDA error %d)", rc);
    while (!gpu_copy_done(&gc))
        p2p_poll();
}

void p2p_dev_unpack_wait(void *dst, const void *packed, int count, size_t bytes, MPI_Datatype dt)
{
    gpu_copy_t gc;
    int rc = gpu_dt_unpack_start(dst, packed, (size_t)count, bytes, layout_of(dt), &gc);
    if (rc != 0)
        util_fatal("unpacking a derived datatype on the GPU failed to start (CUDA error %d)", rc);
    while (!gpu_copy_done(&gc))
        p2p_poll();
}

/* A large send on the IPC route needs its packed bytes only when the
 * receiver asks for them to be written (p2p_ipc.c), so its pack starts in
 * chunks without waiting (AMPI_GPU_DDT_CHUNK, a message of two chunks or
 * more); every other route waits for it first (p2p_dev_pack_finish). */
bool p2p_dev_pack_chunks_start(p2p_req_t *q)
{
    size_t chunk = p2p_proc.gpu_ddt_chunk;
    if (!chunk || q->bytes / 2 < chunk || q->peer == MPI_PROC_NULL)
        return false;
    return gpu_dt_pack_chunks_start(q->pack, q->ubuf, (size_t)q->count, layout_of(q->dt), chunk, &q->chunks) == 0;
}

void p2p_dev_pack_finish(p2p_req_t *q)
{
    if (!q->chunks)
        return;
    while (!gpu_dt_chunks_done(q->chunks))
        p2p_poll();
    gpu_dt_chunks_free(q->chunks);
    q->chunks = NULL;
}

/* The send's data must be whole before any route reads the pack buffer
 * (another process's GPU or UCX's own streams may read it), so the send
 * waits for its pack. */
void p2p_dev_pack(p2p_req_t *q) { p2p_dev_pack_wait(q->pack, q->ubuf, q->count, q->dt); }

void p2p_dev_unpack_then_complete(p2p_req_t *q)
{
    p2p_copy_t *c = malloc(sizeof *c);
    if (!c)
        util_fatal("out of memory");
    *c = (p2p_copy_t){ .a = q };
    int rc = gpu_dt_unpack_start(q->ubuf, q->pack, (size_t)q->count, (size_t)q->status.ampi_count,
                                 layout_of(q->dt), &c->gc);
    if (rc != 0)
        util_fatal("unpacking a derived datatype on the GPU failed to start (CUDA error %d)", rc);
    /* in order with the copies of the list: the same stream */
    util_dlist_push_back(&p2p_proc.copies, &c->link);
    p2p_proc.ncopies++;
}

void p2p_copy_sync(void *dst, const void *src, size_t n)
{
    if (n == 0)
        return;
    gpu_copy_t gc;
    int rc = gpu_copy_start(dst, src, n, &gc);
    if (rc != 0)
        util_fatal("device copy of %zu bytes failed (CUDA error %d)", n, rc);
    while (!gpu_copy_done(&gc))
        ;
}
