/* Setting a process up and tearing it down (env_proc.h). */
#include "env/env_proc.h"
#include "pt2pt/p2p_api.h"
#include "comm/comm.h"
#include "env/env_crash.h"
#include "rma/rma.h"
#include "coll/coll_sched.h"
#include "ucx/ucx_async.h"
#include "gpu/gpu.h"
#include "shm/shm.h"
#include "core/core_settings.h"
#include "util/util_log.h"

#include <stdio.h>
#include <stdlib.h>

void env_proc_join(ucx_job_t *job)
{
    ucx_pmix_init(job);
    util_log_init(job->nprocs > 1 ? job->proc : -1);
    if (core_settings_check() > 0)
        ucx_pmix_abort(1, "stopped: an AMPI_* setting is not valid (see above)");
    util_debug_enabled = core_setting_bool(CORE_SET_DEBUG);
    int more, fewer;
    ucx_pmix_local_disagreement(&more, &fewer);
    if (more || fewer)
        util_debug("PMIx named %d process(es) of other nodes local and missed %d of this node; the node is "
                   "the processes with this host and namespaces",
                   more, fewer);
}

void env_proc_start(const ucx_job_t *job, int vp, bool any_thread)
{
    /* so that programs can pick a GPU per process before MPI_Init */
    char buf[32];
    snprintf(buf, sizeof buf, "%d", job->local_rank);
    setenv("AMPI_LOCAL_RANK", buf, 1);
    snprintf(buf, sizeof buf, "%d", job->local_size);
    setenv("AMPI_LOCAL_SIZE", buf, 1);
    /* MPICH's names for the same, which programs (OSU micro-benchmarks
     * among them) read to pick a GPU before MPI_Init -- the one gpu_init
     * picks too; a launcher's own setting stays */
    setenv("MPI_LOCALNRANKS", buf, 0);
    snprintf(buf, sizeof buf, "%d", job->local_rank);
    setenv("MPI_LOCALRANKID", buf, 0);

    core_set_abort(ucx_pmix_abort);
    p2p_proc_init(vp, job->nprocs, job->proc);
    env_report_ranks(job->proc, core_proc.first, core_proc.nlocal);
    for (int i = 0; i < core_proc.nlocal; i++)
        comm_state_init(&p2p_proc.ranks[i].core.comms, core_proc.first + i, core_proc.nranks);
    /* the device context must be current before UCX looks for CUDA */
    if (gpu_init(job->local_rank, job->local_size) != 0)
        ucx_pmix_abort(1, "GPU initialisation failed (see the message above)");
    /* CUDA IPC between processes of one node (the route checks the peer's
     * node); across nodes device payloads take the UCX route */
    p2p_proc.gpu_ipc = gpu_enabled() && job->local_size > 1 && core_setting_bool(CORE_SET_GPU_IPC);
    p2p_proc.gpu_ipc_push = core_setting_bool(CORE_SET_GPU_IPC_PUSH);
    p2p_proc.gpu_pool_as_managed = gpu_enabled() && core_setting_bool(CORE_SET_GPU_POOL_AS_MANAGED);
    p2p_proc.gpu_ipc_push_min = core_setting_size(CORE_SET_GPU_IPC_PUSH_MIN);
    p2p_proc.gpu_ddt_chunk = core_setting_size(CORE_SET_GPU_DDT_CHUNK);
    if (job->nprocs > 1) {
        ucx_handlers_t h = { .env_arrived = p2p_env_arrived, .env_free = p2p_env_free, .any_thread = any_thread };
        /* UCX's cuda_ipc: out beside our IPC route and between nodes (ucx_worker.c) */
        ucx_init(job->proc, job->nprocs, job->local_size == job->nprocs, p2p_proc.gpu_ipc || job->nnodes > 1, &h);
        p2p_proc.ucx_cuda = ucx_supports_cuda();
        if (gpu_enabled() && !p2p_proc.ucx_cuda)
            util_debug("UCX has no CUDA support: device payloads are staged through host memory");
        /* envelopes to processes of this node may take shared-memory rings
         * (shm.h), payloads CMA.  The fences depend on job-wide facts only,
         * so that a process with AMPI_SHM=0, or alone on its node, still
         * takes part in both. */
        bool node_peers = job->local_size > 1;
        if (node_peers) {
            shm_create(job->proc, job->nprocs, core_setting_bool(CORE_SET_SHM));
            p2p_cma_publish();
        }
        if (core_setting_bool(CORE_SET_NBC_PROGRESS)) /* nonblocking collectives' schedules */
            ucx_async_init(job->proc, job->nprocs, coll_sched_arrived);
        if (ucx_pmix_fence(true) != 0)
            ucx_pmix_abort(1, "PMIx fence for the UCX address exchange failed");
        if (node_peers) {
            shm_attach();
            p2p_cma_attach();
        }
        /* every peer has mapped our segment: its name can go */
        if (ucx_pmix_fence(false) != 0)
            ucx_pmix_abort(1, "PMIx fence after mapping the shared-memory segments failed");
        if (node_peers)
            shm_unlink_own();
    }

}

void env_proc_end(void)
{
    p2p_tally_report();
    coll_sched_tally_report();
    fflush(stdout);
    /* a peer of another node may close its connections before we close
     * ours: that is its end, not a lost node */
    ucx_ending();
    rma_fini(); /* the one-sided worker and progress thread, before the UCX they use goes */
    ucx_async_fini(); /* the same for nonblocking collectives */
    if (ucx_active()) {
        ucx_close();
        /* nobody destroys its worker while a peer may still flush into it */
        ucx_pmix_fence_progress(ucx_progress);
        /* a program that reset the device after MPI_Finalize destroyed
         * UCX's streams, events and mappings with it: leave them be */
        if (!gpu_context_lost())
            ucx_fini();
    }
    shm_fini(); /* after the last fence: nobody writes into the rings any more */
    p2p_cma_fini();
    p2p_env_pool_drain();
    p2p_stage_drain();
    gpu_finalize();
    ucx_pmix_finalize();
}
