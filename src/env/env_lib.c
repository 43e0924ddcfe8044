/* Library mode (env_lib.h). */
#include "env/env_lib.h"
#include "env/env_proc.h"
#include "coll/coll_nb.h"
#include "comm/comm.h"
#include "core/core_settings.h"
#include "rank/rank_host.h"
#include "util/util_log.h"

#include <pthread.h>
#include <stdio.h>

static pthread_t init_thread;

bool env_lib_mode(void) { return core_lib_rank != NULL; }

p2p_rank_t *env_lib_start(void)
{
    if (p2p_proc.ranks)
        return NULL;
    ucx_job_t job;
    env_proc_join(&job);
    /* ranks as user-level threads need a main of ours to run them in */
    long long vp;
    if (core_setting_int(CORE_SET_VP, &vp) && vp != job.nprocs) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "AMPI_VP=%lld asks for %lld MPI ranks on %d processes, but this program's main is its own "
                 "(library mode: Python, a plug-in, a program not linked by ampicc), which runs one rank per "
                 "process; link the program with ampicc for +vp",
                 vp, vp, job.nprocs);
        ucx_pmix_abort(1, msg);
    }
    env_proc_start(&job, job.nprocs, true);
    rank_pe_init(&p2p_proc.pe, p2p_progress, NULL);
    p2p_rank_t *r = &p2p_proc.ranks[0];
    r->core.ult = NULL;
    init_thread = pthread_self();
    rank_host_start(&p2p_proc.pe);
    core_lib_rank = &r->core;
    util_debug("library mode: process %d of %d is rank %d", job.proc, job.nprocs, r->core.world);
    return r;
}

void env_lib_end(p2p_rank_t *r)
{
    coll_nb_fini();
    p2p_rank_fini(r);
    comm_state_fini(&r->core.comms);
    env_proc_end();
    /* the rank stays, finalized: later calls say "after MPI_Finalize" */
}

bool env_lib_is_main_thread(void) { return env_lib_mode() && pthread_equal(init_thread, pthread_self()); }
