/* Which route each device payload took, split by where the receiving
 * process is (this node or another), counted only under AMPI_DEBUG and
 * reported when the process ends (where the library uses a GPU).  Test beds that make several "nodes" on
 * one machine check from it that device payloads between nodes go through
 * UCX and never through CUDA IPC, whose handles mean nothing on another node. */
#include "pt2pt/p2p.h"
#include "ucx/ucx_pmix.h"
#include "util/util_log.h"

#include <stdatomic.h>

/* PEs of one process send from several threads */
static _Atomic unsigned long tally[2][P2P_ROUTE_OTHER + 1];

void p2p_tally_device(p2p_route_t rt, int proc)
{
    atomic_fetch_add_explicit(&tally[ucx_pmix_is_local(proc) ? 0 : 1][rt], 1, memory_order_relaxed);
}

static unsigned long count(int other, p2p_route_t rt)
{
    return atomic_load_explicit(&tally[other][rt], memory_order_relaxed);
}

void p2p_tally_report(void)
{
    if (!util_debug_enabled || !gpu_enabled())
        return;
    for (int other = 0; other < 2; other++)
        util_debug("device payloads sent to processes of %s: CUDA IPC %lu, UCX %lu, staged %lu",
                   other ? "other nodes" : "this node", count(other, P2P_ROUTE_IPC),
                   count(other, P2P_ROUTE_RNDV) + count(other, P2P_ROUTE_EAGER),
                   count(other, P2P_ROUTE_STAGED) + count(other, P2P_ROUTE_STAGED_EAGER));
}
