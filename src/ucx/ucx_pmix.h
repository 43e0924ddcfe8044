/* The process-level bootstrap through PMIx: job size, our rank, local rank,
 * and a key/value exchange used to publish UCX worker addresses.  Without a
 * PMIx server in the environment the process is a singleton (size 1). */
#ifndef AMPI_UCX_PMIX_H
#define AMPI_UCX_PMIX_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ucx_job {
    int proc, nprocs;           /* PMIx rank and job size */
    int local_rank, local_size; /* on this node */
    int node_leader;            /* the lowest process number on this node: names the node */
    int nnodes;                 /* nodes of the job (PMIX_NUM_NODES; 1 when unknown and all are local) */
    bool singleton;             /* no PMIx server */
} ucx_job_t;

int ucx_pmix_init(ucx_job_t *job);       /* 0 on success */
/* Whether process proc runs on this node, as the launcher's PMIx server
 * says (PMIX_LOCAL_PEERS): shared memory, CMA and CUDA IPC are tried only
 * between such processes.  A process is local to itself. */
bool ucx_pmix_is_local(int proc);
/* This node's name for the job: its lowest process number (the same in
 * every process of the node, different on every other node). */
int ucx_pmix_node_leader(void);
/* How many processes PMIx named local that are of another node (*more) and
 * missed that are of this one (*fewer), where ucx_node.h checked it. */
void ucx_pmix_local_disagreement(int *more, int *fewer);
/* This node's host name as the launcher knows it ("" when unknown). */
const char *ucx_pmix_hostname(void);
/* The host name of process proc's node into buf ("?" when unknown). */
void ucx_pmix_hostname_of(int proc, char *buf, size_t len);
int ucx_pmix_put(const char *key, const void *data, size_t len);
int ucx_pmix_fence(bool collect);        /* commit + fence across the job */
/* A fence without data that calls progress() while it waits, so this
 * process keeps serving its peers' network traffic meanwhile. */
int ucx_pmix_fence_progress(int (*progress)(void));
/* Returns a malloc'ed copy of proc's value for key in *data. */
int ucx_pmix_get(int proc, const char *key, void **data, size_t *len);
/* The job's PMIx namespace ("" for a singleton): names per-job resources. */
const char *ucx_pmix_nspace(void);
_Noreturn void ucx_pmix_abort(int status, const char *msg);
void ucx_pmix_finalize(void);

#endif
