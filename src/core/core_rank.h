/* The MPI rank and the process: what every layer above knows of them, and
 * the entry of an MPI call.
 *
 * A rank is a user-level thread (src/rank); its object embeds this struct
 * first (point-to-point adds its queues: p2p_rank_t), and the scheduler
 * names the rank it runs in core_current, so that finding the calling rank
 * costs one thread-local load. */
#ifndef AMPI_CORE_RANK_H
#define AMPI_CORE_RANK_H

#include <stdbool.h>
#include "core/core_comm.h"
#include "core/core_err.h"
#include "util/util_log.h"

struct rank_ult; /* src/rank: the thread a rank runs on (opaque here) */

typedef struct core_rank {
    int world;               /* world rank */
    struct rank_ult *ult;
    core_comm_state_t comms; /* its communicators, groups, keyvals */
    bool initialized, finalized;
    int thread_level;
    int exit_code;
    int argc;
    char **argv;
} core_rank_t;

/* The shape of the job as this process sees it (read-only once the ranks
 * run): processes, ranks, and which ranks are ours. */
typedef struct core_proc {
    int nprocs, proc;  /* processes in the job, ours */
    int nranks;        /* V: MPI ranks in the job */
    int first, nlocal; /* our ranks: [first, first + nlocal) */
} core_proc_t;

extern core_proc_t core_proc UTIL_HIDDEN;

/* The rank running on this OS thread, NULL outside any rank; the PE's
 * scheduler sets it each time it switches to a rank's thread. */
extern __thread core_rank_t *core_current __attribute__((tls_model("initial-exec")));
/* Library mode (src/env/env_lib.h): the process's one rank, which runs on
 * whichever OS thread calls MPI outside any user-level thread; NULL
 * otherwise. */
extern core_rank_t *core_lib_rank UTIL_HIDDEN;
static inline core_rank_t *core_self(void) { return core_current ? core_current : core_lib_rank; }

static inline bool core_is_local(int world) { return world >= core_proc.first && world < core_proc.first + core_proc.nlocal; }

/* The entry of an MPI call that needs MPI_Init: declares R (the calling
 * rank) or returns the "not initialized" error. */
#define CORE_ENTER(R, fn)                                          \
    core_rank_t *R = core_self();                                  \
    if (UTIL_UNLIKELY(!R || !R->initialized || R->finalized))     \
        return core_not_initialized(fn)

/* The communicator behind handle h for rank r, NULL if none. */
static inline core_comm_t *core_comm(core_rank_t *r, MPI_Comm h)
{
    if (h == MPI_COMM_WORLD) /* the common case, without the table */
        return &r->comms.world;
    return core_comm_lookup(&r->comms, h);
}

#endif
