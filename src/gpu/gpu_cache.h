/* Process-wide cache of memory ranges and their gpu_mem_t, so that only the
 * first use of an allocation asks the driver (docs/gpu.md has the design).
 *
 * A sorted array of disjoint [start, end) ranges, read without locks under a
 * sequence counter (a hit is a thread-local "last range" check or a binary
 * search: no atomics written, no driver call) and written under a mutex.
 * Entries are dropped by UCX's memory hooks (UCM): host unmaps
 * (munmap/brk/mremap/madvise) and CUDA frees/allocations reported by
 * libucm_cuda.  Anything whose hook does not work is not cached at all.
 */
#ifndef AMPI_GPU_CACHE_H
#define AMPI_GPU_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpu/gpu.h"

#define GPU_CACHE_CAPACITY 1024 /* entries; a full cache is emptied, not grown */

/* Which hooks we registered (bits) and how often they fired (tests, self-check). */
enum { GPU_CACHE_HOOK_HOST = 1, GPU_CACHE_HOOK_CUDA = 2 };
typedef struct {
    uint64_t host_unmaps;   /* UCM_EVENT_VM_UNMAPPED callbacks */
    uint64_t cuda_frees;    /* UCM_EVENT_MEM_TYPE_FREE callbacks */
    uint64_t cuda_allocs;   /* UCM_EVENT_MEM_TYPE_ALLOC callbacks */
    uint64_t invalidations; /* entries removed or cut by hooks */
    uint64_t flushes;       /* times the full cache was emptied */
    uint64_t inserts;
    uint64_t insert_races;  /* inserts refused: a hook fired while the caller queried */
    int entries;
} gpu_cache_stats_t;

/* Register the UCM handlers: host unmaps always, CUDA free/alloc events when
 * cuda_events (that loads UCX's libucm_cuda, which needs libcuda).  Returns
 * the GPU_CACHE_HOOK_* bits that registered; nothing is cacheable until
 * gpu_cache_allow() says which hooks were seen to work. */
unsigned gpu_cache_init(bool cuda_events);
void gpu_cache_fini(void); /* unregister and empty */

/* Host entries need working host hooks; every other kind needs CUDA hooks. */
void gpu_cache_allow(bool host_kinds, bool cuda_kinds);

/* The hit path: true and *out when [ptr, ptr+len) lies inside one entry. */
bool gpu_cache_lookup(uintptr_t ptr, size_t len, gpu_mem_t *out);

/* Read before asking the driver and hand to an insert: the insert is refused
 * when any hook fired in between, since the answer may describe memory that
 * was just freed. */
uint64_t gpu_cache_epoch(void);

/* Cache [start, end) as *mem (overlapping entries are stale: dropped). */
bool gpu_cache_insert(uintptr_t start, uintptr_t end, const gpu_mem_t *mem, uint64_t epoch);

/* Cache, as plain host memory, the whole mapping of /proc/self/maps that
 * holds [ptr, ptr+len), when it is an ordinary readable/writable mapping. */
bool gpu_cache_insert_host_mapping(uintptr_t ptr, size_t len, uint64_t epoch);

/* What the hooks do: drop device entries that overlap [start, start+len) and
 * cut that range out of host entries. */
void gpu_cache_invalidate(uintptr_t start, size_t len);

/* Self-check of the hooks: arm with an address about to be freed (host:
 * munmap, cuda: cuMemFree), free it, then ask whether that hook saw it. */
void gpu_cache_probe_arm(unsigned hook, uintptr_t addr);
bool gpu_cache_probe_seen(void);

void gpu_cache_clear(void);
void gpu_cache_stats(gpu_cache_stats_t *out);

/* The mapping of /proc/self/maps holding ptr, if it is ordinary host memory
 * (some access rights, not a /dev/nvidia* mapping; the driver's reserved
 * device address space is PROT_NONE).  Allocates nothing: safe under the
 * cache lock. */
bool gpu_hostmap_find(uintptr_t ptr, uintptr_t *start, uintptr_t *end);

#endif
