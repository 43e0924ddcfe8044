/* UCX's memory-type cache, told of frees its hooks describe wrongly (ucx.h). */
#include "ucx/ucx.h"

#include <stddef.h>

/* libucs's own; their header pulls in headers that strict C11 rejects */
struct ucs_memtype_cache;
extern struct ucs_memtype_cache *ucs_memtype_cache_global_instance;
void ucs_memtype_cache_remove(const void *address, size_t size);

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
