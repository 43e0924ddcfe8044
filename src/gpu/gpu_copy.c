/* Asynchronous copies between ranks of one process: one non-blocking stream
 * per PE (OS thread), so a PE's copies stay ordered and never wait for the
 * application's default-stream work; an event per copy to poll, from a pool
 * because creating one costs microseconds.
 *
 * Completion is polled with cuEventQuery.  With AMPI_GPU_COPY_FLAG=1 (and a
 * driver with cuStreamWriteValue32) the stream instead writes a sequence
 * number into a pinned host flag after the copy, and polling is a plain
 * memory read: cuEventQuery costs 1.3 us on the lent H200 machine, but there
 * the flag did not pay end to end (osu_latency D D 8 B: 8.9 us with flags vs
 * 9.4 with events on the push route, yet osu_bw 20-35% lower: the extra
 * stream operation per copy; BENCHMARKS.md), so events stay the default. */
#include "gpu/gpu_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENT_POOL_MAX 64

typedef struct stream_node {
    struct stream_node *next;
    CUstream stream;
} stream_node_t;

static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
static stream_node_t *all_streams; /* destroyed by gpu_copy_fini */
static CUevent event_pool[EVENT_POOL_MAX];
static int event_pool_n;

#define FLAG_SLOTS 1024
static struct {
    int state;                 /* 0 untried, 1 on, -1 off */
    volatile unsigned *host;   /* FLAG_SLOTS pinned words */
    CUdeviceptr dev;           /* their device address */
    int free_slots[FLAG_SLOTS];
    int nfree;
    unsigned seq;
} flags;

/* Under copy_lock: a flag slot, or -1 (then the copy uses an event). */
static int flag_slot_get(void)
{
    if (flags.state == 0) {
        flags.state = -1;
        const char *env = getenv("AMPI_GPU_COPY_FLAG");
        void *p = NULL;
        if (env && strcmp(env, "1") == 0 && gpu_drv.StreamWriteValue32 && gpu_drv.StreamQuery &&
            gpu_drv.MemHostAlloc && gpu_drv.MemHostGetDevicePointer &&
            gpu_drv.MemHostAlloc(&p, FLAG_SLOTS * sizeof(unsigned),
                                 GPU_CU_MEMHOSTALLOC_PORTABLE | GPU_CU_MEMHOSTALLOC_DEVICEMAP) == GPU_CU_SUCCESS) {
            if (gpu_drv.MemHostGetDevicePointer(&flags.dev, p, 0) == GPU_CU_SUCCESS) {
                flags.host = p;
                for (int i = 0; i < FLAG_SLOTS; i++)
                    flags.free_slots[i] = FLAG_SLOTS - 1 - i;
                flags.nfree = FLAG_SLOTS;
                flags.state = 1;
            } else {
                gpu_drv.MemFreeHost(p);
            }
        }
    }
    if (flags.state != 1 || flags.nfree == 0)
        return -1;
    return flags.free_slots[--flags.nfree];
}

static void flag_slot_put(int slot)
{
    pthread_mutex_lock(&copy_lock);
    flags.free_slots[flags.nfree++] = slot;
    pthread_mutex_unlock(&copy_lock);
}

/* Lane 0: the PE's main stream (message copies, in order); lane 1: its side
 * stream (gpu_copy_start_side). */
static _Thread_local struct {
    CUstream stream;
    unsigned generation; /* gpu_state.generation it was created under */
} pe_stream[2];

static CUresult get_stream(int lane, CUstream *out)
{
    if (pe_stream[lane].stream && pe_stream[lane].generation == gpu_state.generation) {
        *out = pe_stream[lane].stream;
        return GPU_CU_SUCCESS;
    }
    stream_node_t *node = malloc(sizeof *node);
    if (!node)
        return GPU_CU_ERROR_OUT_OF_MEMORY;
    CUresult r = gpu_drv.StreamCreate(&node->stream, GPU_CU_STREAM_NON_BLOCKING);
    if (r != GPU_CU_SUCCESS) {
        free(node);
        return r;
    }
    pthread_mutex_lock(&copy_lock);
    node->next = all_streams;
    all_streams = node;
    pthread_mutex_unlock(&copy_lock);
    pe_stream[lane].stream = node->stream;
    pe_stream[lane].generation = gpu_state.generation;
    *out = node->stream;
    return GPU_CU_SUCCESS;
}

static CUresult get_event(CUevent *out)
{
    pthread_mutex_lock(&copy_lock);
    CUevent e = event_pool_n ? event_pool[--event_pool_n] : NULL;
    pthread_mutex_unlock(&copy_lock);
    if (e) {
        *out = e;
        return GPU_CU_SUCCESS;
    }
    return gpu_drv.EventCreate(out, GPU_CU_EVENT_DISABLE_TIMING);
}

static void put_event(CUevent e)
{
    pthread_mutex_lock(&copy_lock);
    bool kept = event_pool_n < EVENT_POOL_MAX;
    if (kept)
        event_pool[event_pool_n++] = e;
    pthread_mutex_unlock(&copy_lock);
    if (!kept)
        gpu_drv.EventDestroy(e);
}

static int copy_start(int lane, void *dst, const void *src, size_t n, gpu_copy_t *c)
{
    c->event = NULL;
    c->slot = -1;
    if (n == 0)
        return 0;
    if (!gpu_state.on) {
        memcpy(dst, src, n); /* no GPU: both sides are host memory */
        return 0;
    }
    CUcontext previous;
    int r = gpu_ctx_enter(&previous);
    if (r)
        return r;
    CUstream stream;
    CUevent event = NULL;
    CUresult cr = get_stream(lane, &stream);
    if (cr == GPU_CU_SUCCESS)
        cr = gpu_drv.MemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n,
                                 stream);
    if (cr == GPU_CU_SUCCESS) {
        pthread_mutex_lock(&copy_lock);
        int slot = flag_slot_get();
        unsigned seq = ++flags.seq ? flags.seq : ++flags.seq; /* never 0 */
        pthread_mutex_unlock(&copy_lock);
        if (slot >= 0) {
            flags.host[slot] = 0;
            if (gpu_drv.StreamWriteValue32(stream, flags.dev + (CUdeviceptr)slot * sizeof(unsigned), seq, 0) ==
                GPU_CU_SUCCESS) {
                gpu_ctx_leave(previous);
                c->stream = stream;
                c->slot = slot;
                c->seq = seq;
                c->polls = 0;
                return 0;
            }
            flag_slot_put(slot); /* not for this stream after all: an event */
        }
        cr = get_event(&event);
    }
    if (cr == GPU_CU_SUCCESS)
        cr = gpu_drv.EventRecord(event, stream);
    gpu_ctx_leave(previous);
    if (cr != GPU_CU_SUCCESS) {
        if (event)
            put_event(event);
        return (int)cr;
    }
    c->event = event;
    return 0;
}

int gpu_copy_start(void *dst, const void *src, size_t n, gpu_copy_t *c)
{
    return copy_start(0, dst, src, n, c);
}

int gpu_copy_start_side(void *dst, const void *src, size_t n, gpu_copy_t *c)
{
    return copy_start(1, dst, src, n, c);
}

bool gpu_copy_done(gpu_copy_t *c)
{
    if (c->slot >= 0) {
        if (__atomic_load_n(&flags.host[c->slot], __ATOMIC_ACQUIRE) == c->seq) {
            flag_slot_put(c->slot);
            c->slot = -1;
            return true;
        }
        /* a failed copy never writes the flag: ask the stream now and then */
        if ((++c->polls & 4095) == 0) {
            CUresult r = gpu_drv.StreamQuery((CUstream)c->stream);
            if (r != GPU_CU_SUCCESS && r != GPU_CU_ERROR_NOT_READY) {
                fprintf(stderr, "ampi: device copy failed: %s\n", gpu_driver_error_name(r));
                abort();
            }
        }
        return false;
    }
    if (!c->event)
        return true;
    CUevent event = c->event;
    CUresult r = gpu_drv.EventQuery(event);
    if (r == GPU_CU_ERROR_NOT_READY)
        return false;
    if (r != GPU_CU_SUCCESS) {
        /* The copy did not happen and the context is likely broken (CUDA
         * errors of this kind are sticky): continuing would deliver garbage. */
        fprintf(stderr, "ampi: device copy failed: %s\n", gpu_driver_error_name(r));
        abort();
    }
    put_event(event);
    c->event = NULL;
    return true;
}

void gpu_copy_fini(void)
{
    pthread_mutex_lock(&copy_lock);
    stream_node_t *s = all_streams;
    all_streams = NULL;
    int n = event_pool_n;
    event_pool_n = 0;
    pthread_mutex_unlock(&copy_lock);
    while (n > 0)
        gpu_drv.EventDestroy(event_pool[--n]);
    if (flags.state == 1)
        gpu_drv.MemFreeHost((void *)flags.host);
    flags.state = 0;
    while (s) {
        stream_node_t *next = s->next;
        gpu_drv.StreamDestroy(s->stream);
        free(s);
        s = next;
    }
}

void *gpu_host_pinned_alloc(size_t n)
{
    if (!gpu_state.on)
        return NULL;
    CUcontext previous;
    if (gpu_ctx_enter(&previous) != 0)
        return NULL;
    void *p = NULL;
    if (gpu_drv.MemAllocHost(&p, n) != GPU_CU_SUCCESS)
        p = NULL;
    gpu_ctx_leave(previous);
    return p;
}

bool gpu_host_pinned_free(void *p)
{
    if (!gpu_state.on || !p)
        return false;
    return gpu_drv.MemFreeHost(p) == GPU_CU_SUCCESS;
}
