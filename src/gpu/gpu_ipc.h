/* CUDA IPC between processes of one node: the route device payloads take
 * when sender and receiver share a node (p2p_ipc.c has the protocol).
 *
 * The sender exports the allocation holding its buffer (cuIpcGetMemHandle,
 * once per allocation: the handle is cached and dropped when the memory is
 * freed) and sends the handle and the buffer's offset in the envelope.  The
 * receiver maps the allocation (cuIpcOpenMemHandle, once per allocation and
 * peer: mappings are cached) and copies straight from the sender's GPU
 * memory into its own buffer with one asynchronous copy: over NVLink that is
 * the whole cost of a message, with no staging and no second handshake. */
#ifndef AMPI_GPU_IPC_H
#define AMPI_GPU_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gpu_ipc_desc {
    char handle[64];  /* CUipcMemHandle of the sender's allocation */
    uint64_t offset;  /* of the buffer in that allocation */
    uint64_t alloc_size;
    uint64_t buffer_id; /* the driver's id of that allocation, never reused */
} gpu_ipc_desc_t;

/* Describe the device buffer [ptr, ptr+len) for a peer process.  Returns
 * false when its memory cannot be exported (stream-ordered pools, VMM
 * allocations, ...): the caller then takes the UCX route. */
bool gpu_ipc_export(const void *ptr, size_t len, gpu_ipc_desc_t *d);

/* Map a peer's buffer: returns its address in this process (NULL and a
 * warning on failure) and a token that gpu_ipc_release gives back once the
 * copy from it has finished (mappings in use are never unmapped). */
void *gpu_ipc_import(int peer, const gpu_ipc_desc_t *d, void **token);
void gpu_ipc_release(void *token);

/* Memory [start, start+len) was freed: forget exports inside it (the hook
 * of gpu_cache.c calls this). */
void gpu_ipc_invalidate(uintptr_t start, size_t len);

/* Unmap everything (before the context goes). */
void gpu_ipc_fini(void);

#endif
