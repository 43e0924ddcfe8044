/* AMPI_Run: the life of a process whose main the library owns.  The
 * library's start-up (env_main.c) calls it with the program's main.  It
 * joins the job through PMIx, sets the process up (env_proc.c: UCX, shared
 * memory, GPU), creates one user-level thread per MPI rank placed on this
 * process, runs the PE scheduler until every rank has ended, then tears
 * everything down.  How a rank ends (return, exit) is decided here too. */
#include "pt2pt/p2p_api.h"
#include "env/env_finalize.h"
#include "coll/coll_nb.h"
#include "comm/comm.h"
#include "env/env_args.h"
#include "env/env_crash.h"
#include "env/env_main.h"
#include "env/env_proc.h"
#include "rma/rma.h"
#include "gpu/gpu.h"
#include "rank/rank_place.h"
#include "rank/rank_stack.h"
#include "shm/shm.h"
#include "ucx/ucx_pmix.h"
#include "core/core_settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*user_main_fn)(int, char **);

typedef struct rank_start {
    p2p_rank_t *rank;
    user_main_fn user_main;
} rank_start_t;

/* atexit handlers of the ranks of a privatized program, by local rank: each
 * rank runs its own at its end (AMPI_Rank_atexit). */
typedef struct rank_handlers {
    void (**fn)(void);
    int n, cap;
} rank_handlers_t;

static rank_handlers_t *rank_atexit;

/* The handlers run newest first, on the rank's own thread, while its copy of
 * the program is still loaded; a handler registering another gets it run
 * too, as exit does. */
static void run_rank_handlers(p2p_rank_t *r)
{
    if (!rank_atexit)
        return;
    rank_handlers_t *h = &rank_atexit[r - p2p_proc.ranks];
    while (h->n > 0)
        h->fn[--h->n]();
    free(h->fn);
    *h = (rank_handlers_t){ 0 };
}

/* A rank ends, by returning from main or by exit(status).  Outside MPI
 * (before MPI_Init, after MPI_Finalize) only the rank ends, with that status,
 * and the other ranks of the process go on.  Between MPI_Init and
 * MPI_Finalize its peers may wait for it forever: the whole job ends, at
 * once, naming the rank. */
static void rank_ends(p2p_rank_t *r, int status, bool by_exit)
{
    r->core.exit_code = status;
    if (r->core.finalized) {
        run_rank_handlers(r);
        return;
    }
    if (!r->core.initialized) {
        run_rank_handlers(r);
        env_rank_leaves(); /* ranks waiting at MPI_Finalize's end wait for this one too */
        return;
    }
    char msg[200];
    if (by_exit)
        snprintf(msg, sizeof msg, "rank %d called exit(%d) before MPI_Finalize: ending the job", r->core.world, status);
    else
        snprintf(msg, sizeof msg, "rank %d returned %d from main without calling MPI_Finalize: ending the job",
                 r->core.world, status);
    core_abort_job(status ? status : 1, msg);
}

static void rank_body(void *arg)
{
    rank_start_t *s = arg;
    p2p_rank_t *r = s->rank;
    optind = 0; /* see MPI_Init: getopt state is per process */
    rank_ends(r, s->user_main(r->core.argc, r->core.argv), false);
}

/* The rank whose own thread (not a helper of its) is running, or NULL. */
static p2p_rank_t *rank_on_own_thread(void)
{
    rank_ult_t *u = rank_self();
    p2p_rank_t *r = u && u->user ? p2p_rank_of(u->user) : NULL;
    return r && r->core.ult == u ? r : NULL;
}

void AMPI_Rank_exit(int status)
{
    p2p_rank_t *r = rank_on_own_thread();
    if (!r)
        return;
    rank_ends(r, status, true);
    rank_ult_exit();
}

/* Handlers registered by ranks (one process, so one table; the ranks of a
 * PE never run at once). */
static struct {
    void (**fn)(void);
    int n, cap;
} atexit_seen;

int AMPI_Atexit_seen(void (*fn)(void))
{
    if (!rank_on_own_thread())
        return 0;
    for (int i = 0; i < atexit_seen.n; i++)
        if (atexit_seen.fn[i] == fn)
            return 1;
    if (atexit_seen.n == atexit_seen.cap) {
        int cap = atexit_seen.cap ? 2 * atexit_seen.cap : 8;
        void (**grown)(void) = realloc(atexit_seen.fn, (size_t)cap * sizeof *grown);
        if (!grown)
            return 0; /* registered again: better than not at all */
        atexit_seen.fn = grown;
        atexit_seen.cap = cap;
    }
    atexit_seen.fn[atexit_seen.n++] = fn;
    return 0;
}

int env_rank_atexit_add(void (*fn)(void))
{
    p2p_rank_t *r = rank_on_own_thread();
    if (!r || !rank_atexit)
        return -1;
    rank_handlers_t *h = &rank_atexit[r - p2p_proc.ranks];
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 4;
        void (**grown)(void) = realloc(h->fn, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        h->fn = grown;
        h->cap = cap;
    }
    h->fn[h->n++] = fn;
    return 0;
}

static char **copy_argv(int argc, char **argv)
{
    /* each rank gets its own array (getopt permutes it) and its own strings
     * (programs write into them: strtok on an option's value), in one block
     * that free() releases */
    size_t bytes = sizeof(char *) * (size_t)(argc + 1);
    for (int i = 0; i < argc; i++)
        bytes += strlen(argv[i]) + 1;
    char **a = malloc(bytes);
    if (!a)
        util_fatal("out of memory");
    char *text = (char *)(a + argc + 1);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]) + 1;
        a[i] = memcpy(text, argv[i], len);
        text += len;
    }
    a[argc] = NULL;
    return a;
}

int AMPI_Run(int argc, char **argv, int (*user_main)(int, char **))
{
    int vp_arg = env_take_vp_arg(&argc, argv);
    ucx_job_t job;
    env_proc_join(&job);

    long long vp = vp_arg;
    if (vp <= 0 && !core_setting_int(CORE_SET_VP, &vp))
        vp = job.nprocs;
    if (vp < job.nprocs) {
        char msg[160];
        snprintf(msg, sizeof msg, "+vp %lld asks for fewer MPI ranks than the %d processes", vp, job.nprocs);
        ucx_pmix_abort(1, msg);
    }
    if (vp > 0x7fffffffL / 2)
        ucx_pmix_abort(1, "+vp is too large");

    env_proc_start(&job, (int)vp, false);

    env_crash_install(job.proc);
    rank_guard_install();
    rank_pe_init(&p2p_proc.pe, p2p_progress, NULL);
    rank_start_t *starts = calloc((size_t)core_proc.nlocal, sizeof *starts);
    rank_atexit = calloc((size_t)core_proc.nlocal, sizeof *rank_atexit);
    if (!starts || !rank_atexit)
        util_fatal("out of memory");
    for (int i = 0; i < core_proc.nlocal; i++) {
        p2p_rank_t *r = &p2p_proc.ranks[i];
        starts[i] = (rank_start_t){ .rank = r, .user_main = user_main };
        r->core.argc = argc;
        r->core.argv = copy_argv(argc, argv);
        r->core.ult = rank_ult_create(&p2p_proc.pe, 0, rank_body, &starts[i]);
        if (!r->core.ult)
            util_fatal("cannot create the thread of rank %d: no memory for its %zu-byte stack (%s; "
                       "a smaller AMPI_STACK_SIZE or more processes help)", r->core.world, rank_stack_default_size(),
                       strerror(errno));
        r->core.ult->user = &r->core;
        r->core.ult->id = r->core.world;
    }

    rank_pe_run(&p2p_proc.pe);
    coll_nb_fini(); /* helper threads of nonblocking collectives that finished last */

    int status = 0;
    for (int i = 0; i < core_proc.nlocal; i++) {
        p2p_rank_t *r = &p2p_proc.ranks[i];
        if (!status && r->core.exit_code)
            status = r->core.exit_code;
        rank_ult_destroy(r->core.ult);
        free(r->core.argv);
        p2p_rank_fini(r);
        comm_state_fini(&r->core.comms);
    }
    free(starts);
    for (int i = 0; i < core_proc.nlocal; i++)
        free(rank_atexit[i].fn); /* ranks that ended the job before their end */
    free(rank_atexit);
    rank_atexit = NULL;
    env_proc_end();
    free(p2p_proc.ranks);
    free(atexit_seen.fn);
    atexit_seen.fn = NULL;
    atexit_seen.n = atexit_seen.cap = 0;
    return status;
}
