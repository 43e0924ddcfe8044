/* MPI_Init / MPI_Finalize and friends.  A program linked by ampicc had its
 * process set up by AMPI_Run before any rank started (env_run.c): these
 * only mark the calling rank's state.  In library mode (env_lib.h) the
 * first MPI_Init sets the process up as one rank. */
#include "gpu/gpu.h"
#include "pt2pt/p2p_api.h"
#include "comm/comm.h"
#include "env/env_finalize.h"
#include "env/env_lib.h"
#include "env/env_globals.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int finalized_here; /* ranks of this process in MPI_Finalize's end */
static atomic_bool released_here;  /* ... and the process's device objects given back */

/* The most a mode can promise: a rank of ampicc's start-up is a user-level
 * thread found through its OS thread, so MPI calls must come from that
 * thread (FUNNELED); in library mode calls from any OS thread are
 * serialized by the host lock (rank_host.h), which is MULTIPLE. */
static int max_thread_level(void) { return env_lib_mode() ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED; }

/* required < 0: MPI_Init, which gets the mode's level */
static int init_rank(const char *func, int required, int *provided)
{
    p2p_rank_t *r = p2p_self();
    if (!r && !(r = env_lib_start()))
        return core_not_initialized(func);
    RANK_HOST_GUARD;
    if (r->core.initialized || r->core.finalized)
        return core_error_msg(NULL, MPI_ERR_OTHER, func, "MPI is already initialized");
    r->core.initialized = true;
    static bool first_init_done; /* per process: ranks of a PE never run at once */
    if (!first_init_done) {
        first_init_done = true;
        env_globals_check();
    }
    int max = max_thread_level();
    int level = required < 0 || required > max ? max : required;
    r->core.thread_level = level < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : level;
    if (provided)
        *provided = r->core.thread_level;
    gpu_check_app_device();
    /* getopt keeps its position in globals that all ranks of a process share:
     * start each rank's option parsing afresh (glibc re-initialises at 0) */
    optind = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Init = PMPI_Init
int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return init_rank("MPI_Init", -1, NULL);
}

#pragma weak MPI_Init_thread = PMPI_Init_thread
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    return init_rank("MPI_Init_thread", required, provided);
}

#pragma weak MPI_Query_thread = PMPI_Query_thread
int PMPI_Query_thread(int *provided)
{
    P2P_ENTER(r, "MPI_Query_thread");
    *provided = r->core.thread_level;
    return MPI_SUCCESS;
}

#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
int PMPI_Is_thread_main(int *flag)
{
    /* a rank's own thread; in library mode the thread that called MPI_Init */
    *flag = env_lib_mode() ? env_lib_is_main_thread() : p2p_self() != NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Initialized = PMPI_Initialized
int PMPI_Initialized(int *flag)
{
    p2p_rank_t *r = p2p_self();
    *flag = r && r->core.initialized;
    return MPI_SUCCESS;
}

#pragma weak MPI_Finalized = PMPI_Finalized
int PMPI_Finalized(int *flag)
{
    p2p_rank_t *r = p2p_self();
    *flag = r && r->core.finalized;
    return MPI_SUCCESS;
}

void env_rank_leaves(void)
{
    if (atomic_fetch_add(&finalized_here, 1) + 1 < core_proc.nlocal)
        return;
    while (p2p_proc.ncopies > 0)
        p2p_progress(NULL);
    p2p_stage_drain();
    gpu_release();
    atomic_store(&released_here, true);
}

#pragma weak MPI_Finalize = PMPI_Finalize
int PMPI_Finalize(void)
{
    P2P_ENTER(r, "MPI_Finalize");
    /* MPI_COMM_SELF's attributes are deleted first, with their callbacks
     * (the standard's hook for "at finalize" actions) */
    comm_state_finalize(&r->core.comms);
    /* buffered sends still in flight belong to this rank */
    while (r->internal_pending > 0) {
        p2p_progress(NULL);
        if (r->internal_pending > 0)
            p2p_idle();
    }
    /* nobody leaves before everyone is here: the process tears UCX down
     * only once all its ranks are gone, and then peers may not need us */
    int err = PMPI_Barrier(MPI_COMM_WORLD);
    r->core.finalized = true;
    /* The process's last rank gives back what the library holds in the
     * device's context, and no rank of the process returns before that:
     * programs may reset or destroy the context after MPI_Finalize (the OSU
     * benchmarks call cudaDeviceReset), and releasing objects of a reset
     * context at exit crashed them. */
    env_rank_leaves();
    while (!atomic_load(&released_here))
        p2p_poll();
    if (env_lib_mode())
        env_lib_end(r);
    return err;
}

#pragma weak MPI_Abort = PMPI_Abort
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    p2p_rank_t *r = p2p_self();
    char msg[256];
    snprintf(msg, sizeof msg, "MPI_Abort called by rank %d (communicator %d) with error code %d",
             r ? r->core.world : -1, comm, errorcode);
    core_abort_job(errorcode, msg);
}
