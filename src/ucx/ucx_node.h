/* Which processes share this node, by what the routes need in common.
 *
 * Shared-memory rings need one /dev/shm, CMA one PID namespace, CUDA IPC
 * one machine: processes whose host name, boot id and IPC, mount and PID
 * namespaces all agree are one node here.  A launcher's PMIx server also
 * says which processes are local (PMIX_LOCAL_PEERS), and ampirun's, which
 * starts one node only, is trusted as it is; under another engine its word
 * is checked against these facts, which every process publishes, because a
 * server can be wrong: Open MPI 4.1.6's mpirun with PMIx 5 named processes
 * of another network namespace local to the processes of its own node, which
 * then put their rings, CMA and one-node transports towards them while the
 * other node's processes did not (BENCHMARKS.md, 2026-11-27, 2 x H200). */
#ifndef UCX_NODE_H
#define UCX_NODE_H

#include <stdbool.h>
#include <stddef.h>

/* "host|boot id|ipc ns|mnt ns|pid ns" of the calling process. */
void ucx_node_identity(char *out, size_t cap);

/* Publishes this process's identity, fences, and sets local[p] for every
 * process p with the same one and *nnodes to the number of distinct ones.
 * Every process of the job must call it (it holds a collective fence).
 * Returns 0, or -1 when PMIx could not exchange the identities. */
int ucx_node_exchange(int proc, int nprocs, bool *local, int *nnodes);

#endif
