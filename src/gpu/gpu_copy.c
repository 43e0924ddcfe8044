/* Asynchronous copies between ranks of one process: one non-blocking stream
 * per PE (OS thread), so a PE's copies stay ordered and never wait for the
 * application's default-stream work; an event per copy to poll, from a pool
 * because creating one costs microseconds.
 *
 * Completion is polled with cuEventQuery.  A pinned host flag written by
 * the stream (cuStreamWriteValue32) polls faster, but its extra stream
 * operation per copy costs osu_bw D D 20-35% (BENCHMARKS.md, 2026-11-22,
 * 2 x H200, route sweep at 9395b5b), so completion uses events only. */
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

/* Runs issue(stream, arg) on the PE's stream of `lane`, with our context
 * current, and records c's completion event behind it (c NULL: no event). */
static int issue_on(int lane, CUresult (*issue)(CUstream, void *), void *arg, gpu_copy_t *c)
{
    CUcontext previous;
    int r = gpu_ctx_enter(&previous);
    if (r)
        return r;
    CUstream stream;
    CUevent event = NULL;
    CUresult cr = get_stream(lane, &stream);
    if (cr == GPU_CU_SUCCESS && issue)
        cr = issue(stream, arg);
    if (cr == GPU_CU_SUCCESS && c)
        cr = get_event(&event);
    if (cr == GPU_CU_SUCCESS && c)
        cr = gpu_drv.EventRecord(event, stream);
    gpu_ctx_leave(previous);
    if (cr != GPU_CU_SUCCESS) {
        if (event)
            put_event(event);
        return (int)cr;
    }
    if (c)
        c->event = event;
    return 0;
}

typedef struct {
    void *dst;
    const void *src;
    size_t n;
} memcpy_args_t;

static CUresult issue_memcpy(CUstream stream, void *arg)
{
    const memcpy_args_t *a = arg;
    return gpu_drv.MemcpyAsync((CUdeviceptr)(uintptr_t)a->dst, (CUdeviceptr)(uintptr_t)a->src, a->n, stream);
}

static int copy_start(int lane, void *dst, const void *src, size_t n, gpu_copy_t *c)
{
    c->event = NULL;
    if (n == 0)
        return 0;
    if (!gpu_state.on) {
        memcpy(dst, src, n); /* no GPU: both sides are host memory */
        return 0;
    }
    memcpy_args_t a = { dst, src, n };
    return issue_on(lane, issue_memcpy, &a, c);
}

int gpu_copy_issue(CUresult (*issue)(CUstream, void *), void *arg, gpu_copy_t *c)
{
    c->event = NULL;
    return issue_on(0, issue, arg, c);
}

int gpu_copy_issue_side(CUresult (*issue)(CUstream, void *), void *arg, gpu_copy_t *c)
{
    c->event = NULL;
    return issue_on(1, issue, arg, c);
}

int gpu_copy_start(void *dst, const void *src, size_t n, gpu_copy_t *c)
{
    return copy_start(0, dst, src, n, c);
}

int gpu_copy_start_side(void *dst, const void *src, size_t n, gpu_copy_t *c)
{
    return copy_start(1, dst, src, n, c);
}

int gpu_copy_enqueue(void *dst, const void *src, size_t n)
{
    if (n == 0)
        return 0;
    if (!gpu_state.on) {
        memcpy(dst, src, n);
        return 0;
    }
    memcpy_args_t a = { dst, src, n };
    return issue_on(0, issue_memcpy, &a, NULL);
}

int gpu_copy_stream(void **stream)
{
    *stream = NULL;
    if (!gpu_state.on)
        return 0;
    CUcontext previous;
    int r = gpu_ctx_enter(&previous);
    if (r)
        return r;
    CUstream s = NULL;
    CUresult cr = get_stream(0, &s);
    gpu_ctx_leave(previous);
    *stream = s;
    return (int)cr;
}

int gpu_copy_fence(void *stream, gpu_copy_t *c)
{
    c->event = NULL;
    if (!gpu_state.on)
        return 0;
    if (!stream)
        return issue_on(0, NULL, NULL, c);
    CUcontext previous;
    int r = gpu_ctx_enter(&previous);
    if (r)
        return r;
    CUevent event = NULL;
    CUresult cr = get_event(&event);
    if (cr == GPU_CU_SUCCESS)
        cr = gpu_drv.EventRecord(event, (CUstream)stream);
    gpu_ctx_leave(previous);
    if (cr != GPU_CU_SUCCESS) {
        if (event)
            put_event(event);
        return (int)cr;
    }
    c->event = event;
    return 0;
}

bool gpu_copy_done(gpu_copy_t *c)
{
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
