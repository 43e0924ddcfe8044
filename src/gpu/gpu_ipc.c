/* CUDA IPC export and import caches (gpu_ipc.h).
 *
 * Exports: allocation ranges with their handle.  A hit must never describe
 * freed memory: entries go when the CUDA free hook reports the range (as for
 * the classification cache); where that hook does not work
 * (gpu_state.cache_cuda false) every hit is checked against the driver's
 * buffer id, which is unique per allocation and never reused.
 * Imports: (peer, handle, buffer id) -> mapped address.  CUDA promises a
 * new handle to a new allocation at a freed one's address, but a driver
 * has been seen handing out the old handle again (64 KiB allocations,
 * test/gpu/gpu_stale.c): a mapping found by the handle alone could then be
 * the freed allocation's.  The exporter's buffer id, unique per allocation,
 * tells them apart: a mapping of the same handle with another id is closed
 * and the handle opened again.  The table is bounded and unused mappings
 * are closed, oldest first, when it is full. */
#include "core/core_settings.h"
#include "gpu/gpu_ipc.h"
#include "gpu/gpu_internal.h"
#include "util/util_log.h"

#include <pthread.h>
#include <string.h>

#define EXPORT_MAX 64
#define IMPORT_MAX 128

typedef struct {
    uintptr_t base, end;
    uint64_t buffer_id;
    bool exportable;
    gpu_cu_ipc_handle_t handle;
} export_t;

typedef struct {
    int peer;
    int refs;
    uint64_t buffer_id;
    uint64_t last_use;
    CUdeviceptr mapped;
    gpu_cu_ipc_handle_t handle;
} import_t;

static pthread_mutex_t ipc_lock = PTHREAD_MUTEX_INITIALIZER;
static export_t exports[EXPORT_MAX];
static int nexports, export_next;
static import_t imports[IMPORT_MAX];
static int nimports;
static uint64_t use_clock;

static bool buffer_id_of(uintptr_t p, uint64_t *id)
{
    return gpu_drv.PointerGetAttribute(id, GPU_CU_PTR_ATTR_BUFFER_ID, (CUdeviceptr)p) == GPU_CU_SUCCESS;
}

/* Under ipc_lock, with our context current. */
static export_t *export_find(uintptr_t p, size_t len)
{
    for (int i = 0; i < nexports; i++) {
        export_t *e = &exports[i];
        if (p < e->base || p + len > e->end)
            continue;
        if (!gpu_state.cache_cuda) {
            uint64_t id;
            if (!buffer_id_of(e->base, &id) || id != e->buffer_id) {
                *e = exports[--nexports]; /* freed and reused behind our back */
                return NULL;
            }
        }
        return e;
    }
    return NULL;
}

static export_t *export_add(uintptr_t p)
{
    CUdeviceptr base;
    size_t size;
    if (gpu_drv.MemGetAddressRange(&base, &size, (CUdeviceptr)p) != GPU_CU_SUCCESS)
        return NULL;
    export_t e = { .base = (uintptr_t)base, .end = (uintptr_t)base + size };
    if (!buffer_id_of(e.base, &e.buffer_id))
        return NULL;
    /* The legacy IPC calls are for cuMemAlloc'd memory: a handle of
     * stream-ordered pool memory (cudaMallocAsync) or a VMM allocation, if
     * the driver gave one, would describe the pool's or the mapping's block
     * rather than this allocation, and a peer reading at our offset into
     * its mapping would read another buffer.  The driver's attribute says
     * which memory qualifies; remember the answer either way. */
    int legacy = 1;
    if (gpu_drv.PointerGetAttribute(&legacy, GPU_CU_PTR_ATTR_IS_LEGACY_IPC, base) != GPU_CU_SUCCESS)
        legacy = 1; /* drivers that do not know the attribute predate pools */
    e.exportable = legacy && gpu_drv.IpcGetMemHandle(&e.handle, base) == GPU_CU_SUCCESS;
    int slot = nexports < EXPORT_MAX ? nexports++ : (export_next++ % EXPORT_MAX);
    exports[slot] = e;
    return &exports[slot];
}

bool gpu_is_pool_memory(const void *ptr)
{
    CUcontext previous;
    if (!gpu_state.on || gpu_ctx_enter(&previous) != 0)
        return false;
    int legacy = 1;
    if (gpu_drv.PointerGetAttribute(&legacy, GPU_CU_PTR_ATTR_IS_LEGACY_IPC, (CUdeviceptr)(uintptr_t)ptr) !=
        GPU_CU_SUCCESS)
        legacy = 1; /* drivers that do not know the attribute predate pools */
    gpu_ctx_leave(previous);
    return !legacy;
}

bool gpu_ipc_export(const void *ptr, size_t len, gpu_ipc_desc_t *d)
{
    uintptr_t p = (uintptr_t)ptr;
    CUcontext previous;
    if (gpu_ctx_enter(&previous) != 0)
        return false;
    pthread_mutex_lock(&ipc_lock);
    export_t *e = export_find(p, len);
    if (!e)
        e = export_add(p);
    bool ok = e && e->exportable && p + len <= e->end;
    if (ok) {
        memcpy(d->handle, &e->handle, sizeof d->handle);
        d->offset = p - e->base;
        d->alloc_size = e->end - e->base;
        d->buffer_id = e->buffer_id;
    }
    pthread_mutex_unlock(&ipc_lock);
    gpu_ctx_leave(previous);
    return ok;
}

void gpu_ipc_invalidate(uintptr_t start, size_t len)
{
    uintptr_t end = start + (len ? len : 1);
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < nexports;) {
        if (exports[i].base < end && start < exports[i].end)
            exports[i] = exports[--nexports];
        else
            i++;
    }
    pthread_mutex_unlock(&ipc_lock);
}

/* Close every unused mapping of `peer` (all peers: -1).  The driver maps an
 * import at the exporter's own address, so a mapping of an allocation the
 * peer has freed since blocks the mapping of a new allocation at the same
 * place (CUDA_ERROR_ALREADY_MAPPED) until it is closed.  Under ipc_lock. */
static void import_purge(int peer)
{
    for (int i = 0; i < nimports;) {
        if (imports[i].refs == 0 && (peer < 0 || imports[i].peer == peer)) {
            gpu_drv.IpcCloseMemHandle(imports[i].mapped);
            imports[i] = imports[--nimports];
        } else {
            i++;
        }
    }
}

/* Close the least recently used mapping nobody copies from; false if all
 * are busy.  Under ipc_lock. */
static bool import_evict(void)
{
    int victim = -1;
    for (int i = 0; i < nimports; i++)
        if (imports[i].refs == 0 && (victim < 0 || imports[i].last_use < imports[victim].last_use))
            victim = i;
    if (victim < 0)
        return false;
    gpu_drv.IpcCloseMemHandle(imports[victim].mapped);
    imports[victim] = imports[--nimports];
    return true;
}

void *gpu_ipc_import(int peer, const gpu_ipc_desc_t *d, void **token)
{
    void *addr = NULL;
    CUcontext previous;
    if (gpu_ctx_enter(&previous) != 0)
        return NULL;
    pthread_mutex_lock(&ipc_lock);
    import_t *m = NULL;
    for (int i = 0; i < nimports; i++) {
        if (imports[i].peer != peer || memcmp(&imports[i].handle, d->handle, sizeof d->handle))
            continue;
        if (imports[i].buffer_id == d->buffer_id) {
            m = &imports[i];
            break;
        }
        if (imports[i].refs == 0) { /* a freed allocation's mapping under a reused handle */
            gpu_drv.IpcCloseMemHandle(imports[i].mapped);
            imports[i] = imports[--nimports];
        }
        break;
    }
    if (!m && (nimports < IMPORT_MAX || import_evict())) {
        import_t fresh = { .peer = peer, .buffer_id = d->buffer_id };
        memcpy(&fresh.handle, d->handle, sizeof fresh.handle);
        CUresult r = gpu_drv.IpcOpenMemHandle(&fresh.mapped, fresh.handle, GPU_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        for (int purge = peer; r == GPU_CU_ERROR_ALREADY_MAPPED && purge >= -1; purge = purge >= 0 ? -1 : -2) {
            import_purge(purge);
            r = gpu_drv.IpcOpenMemHandle(&fresh.mapped, fresh.handle, GPU_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        }
        if (r == GPU_CU_SUCCESS) {
            imports[nimports] = fresh;
            m = &imports[nimports++];
        } else {
            util_warn("cuIpcOpenMemHandle for a buffer of process %d failed: %s", peer,
                      gpu_driver_error_name(r));
        }
    }
    if (m) {
        m->refs++;
        m->last_use = ++use_clock;
        addr = (void *)(uintptr_t)(m->mapped + d->offset);
        *token = (void *)(uintptr_t)m->mapped;
    }
    pthread_mutex_unlock(&ipc_lock);
    gpu_ctx_leave(previous);
    return addr;
}

/* AMPI_GPU_IPC_CACHE (on): keep unused mappings for the next message. */
static bool keep_mappings(void)
{
    static int keep = -1; /* every thread reads the same value */
    if (keep < 0)
        keep = core_setting_bool(CORE_SET_GPU_IPC_CACHE);
    return keep;
}

void gpu_ipc_release(void *token)
{
    CUdeviceptr mapped = (CUdeviceptr)(uintptr_t)token;
    bool keep = keep_mappings();
    CUcontext previous = NULL;
    bool entered = !keep && gpu_ctx_enter(&previous) == 0;
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < nimports; i++) {
        if (imports[i].mapped == mapped) {
            /* without the cache the mapping goes before the peer hears that
             * the copy is done, so it never outlives the peer's allocation */
            if (--imports[i].refs == 0 && entered) {
                gpu_drv.IpcCloseMemHandle(imports[i].mapped);
                imports[i] = imports[--nimports];
            }
            break;
        }
    }
    pthread_mutex_unlock(&ipc_lock);
    if (entered)
        gpu_ctx_leave(previous);
}

void gpu_ipc_fini(void)
{
    pthread_mutex_lock(&ipc_lock);
    for (int i = 0; i < nimports; i++)
        gpu_drv.IpcCloseMemHandle(imports[i].mapped);
    nimports = nexports = export_next = 0;
    pthread_mutex_unlock(&ipc_lock);
}
