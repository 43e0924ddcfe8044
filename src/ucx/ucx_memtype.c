/* UCX's memory-type cache, told of frees its hooks describe wrongly (ucx.h). */
#include "ucx/ucx.h"

#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>

/* libucs's own; their header pulls in headers that strict C11 rejects */
struct ucs_memtype_cache;
extern struct ucs_memtype_cache *ucs_memtype_cache_global_instance;
void ucs_memtype_cache_remove(const void *address, size_t size);
void ucs_memtype_cache_update(const void *address, size_t size, ucs_memory_type_t mem_type, uint8_t sys_dev,
                              uint8_t mem_flags);
#define SYS_DEVICE_UNKNOWN UINT8_MAX /* UCS_SYS_DEVICE_ID_UNKNOWN */

/* UCX remembers the type and device of every GPU allocation it has looked at
 * and forgets them when its hooks see the memory freed.  Its free hook sizes
 * the allocation with cuMemGetAddressRange, which answers only in the
 * memory's own context: memory of another GPU freed while this process's
 * device is current (as cudaFree allows) then loses only its first bytes
 * from the cache, and the rest of the range stays described as that GPU's.
 * Memory of this GPU that comes to lie there later is copied by UCX in the
 * other GPU's context; for stream-ordered pool memory, which no other device
 * may touch, cuMemcpyAsync fails inside UCX and the receive completes
 * without its data.  The caller has the allocation's true range. */
void ucx_memtype_forget(uintptr_t start, size_t len)
{
    /* (UCX creates its cache on first use; remove does not check) */
    if (ucs_memtype_cache_global_instance && len)
        ucs_memtype_cache_remove((const void *)start, len);
}

/* Whatever UCX believes of [start, start + len) -- a stale device of freed
 * memory, by the way above or another -- gives way to "unknown, ask the
 * driver": UCX's next look at the range asks it and caches the answer, so a
 * live allocation costs one query more, not one per operation. */
void ucx_memtype_recheck(uintptr_t start, size_t len)
{
    if (ucs_memtype_cache_global_instance && len)
        ucs_memtype_cache_update((const void *)start, len, UCS_MEMORY_TYPE_UNKNOWN, SYS_DEVICE_UNKNOWN, 0);
}
