/* Process and rank state of the point-to-point layer, and the PE's progress. */
#include "pt2pt/p2p.h"
#include "rank/rank_place.h"
#include "ucx/ucx_pmix.h"
#include "core/core_settings.h"
#include "util/util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An eager envelope of the default limit (full header + data) fits one
 * shared-memory ring entry: eager messages between processes of a node then
 * never take UCX's active messages (shm_ring.h).  Keep the settings table's
 * default of AMPI_EAGER_LIMIT (core_settings.c) equal to it. */
#define P2P_EAGER_LIMIT_DEFAULT 8192
_Static_assert(sizeof(p2p_wire_hdr_t) + P2P_EAGER_LIMIT_DEFAULT <= SHM_ENTRY_MAX,
               "an eager envelope fits a ring entry");

p2p_proc_t p2p_proc;

/* Every remote send asks which process holds its destination; a table
 * answers without rank_place_proc's two integer divisions (jobs of up to
 * PROC_OF_TABLE_MAX ranks; beyond that the table would cost more memory
 * than it saves time). */
#define PROC_OF_TABLE_MAX (1 << 20)
int *p2p_proc_of_table; /* read in line by p2p_proc_of (p2p.h) */

int p2p_proc_of_computed(int world) { return rank_place_proc(core_proc.nranks, core_proc.nprocs, world); }

static void proc_of_table_init(void)
{
    free(p2p_proc_of_table);
    p2p_proc_of_table = NULL;
    if (core_proc.nprocs < 2 || core_proc.nranks > PROC_OF_TABLE_MAX)
        return;
    int *t = malloc((size_t)core_proc.nranks * sizeof *t);
    if (!t)
        return; /* computed on each call instead */
    for (int w = 0; w < core_proc.nranks; w++)
        t[w] = rank_place_proc(core_proc.nranks, core_proc.nprocs, w);
    p2p_proc_of_table = t;
}

void p2p_proc_init(int nranks, int nprocs, int proc)
{
    ucx_set_env_intake(p2p_env_intake);
    core_proc.nranks = nranks;
    core_proc.nprocs = nprocs;
    core_proc.proc = proc;
    core_proc.first = rank_place_first(nranks, nprocs, proc);
    core_proc.nlocal = rank_place_count(nranks, nprocs, proc);
    p2p_proc.eager_limit = core_setting_size(CORE_SET_EAGER_LIMIT);
    p2p_proc.idle_yield = !rank_cpu_owned();
    proc_of_table_init();
    util_dlist_init(&p2p_proc.copies);
    p2p_proc.ranks = calloc((size_t)core_proc.nlocal, sizeof *p2p_proc.ranks);
    if (!p2p_proc.ranks)
        util_fatal("out of memory for %d ranks", core_proc.nlocal);
    for (int i = 0; i < core_proc.nlocal; i++)
        p2p_rank_init(&p2p_proc.ranks[i], core_proc.first + i);
}

void p2p_rank_init(p2p_rank_t *r, int world)
{
    memset(r, 0, sizeof *r);
    r->core.world = world;
    p2p_queue_init(&r->posted);
    p2p_queue_init(&r->unexpected);
    util_dlist_init(&r->stash);
    if (core_proc.nprocs > 1) {
        bool dense = (size_t)core_proc.nlocal * (size_t)core_proc.nranks <= P2P_SEQ_DENSE_MAX;
        if (p2p_seq_init(&r->send_seq, core_proc.nranks, dense) != 0 ||
            p2p_seq_init(&r->recv_seq, core_proc.nranks, dense) != 0)
            util_fatal("out of memory");
    }
}

void p2p_rank_fini(p2p_rank_t *r)
{
    while (r->free_reqs) {
        p2p_req_t *q = r->free_reqs;
        r->free_reqs = q->next_free;
        free(q);
    }
    /* messages nobody received: drop them (MPI leaves this erroneous) */
    util_dlink_t *it;
    while ((it = util_dlist_first(&r->unexpected.order))) {
        p2p_msg_t *m = UTIL_CONTAINER_OF(it, p2p_msg_t, m.order);
        p2p_unexp_remove(&r->unexpected, &m->m);
        p2p_msg_free(m);
    }
    p2p_cancel_fini(r);
    p2p_seq_fini(&r->send_seq);
    p2p_seq_fini(&r->recv_seq);
}

/* check_deadlock's message, out of line: its buffer would give every poll a
 * stack frame to set up. */
static __attribute__((noinline, cold)) void report_deadlock(void)
{
    char msg[256];
    int blocked = 0;
    for (int i = 0; i < core_proc.nlocal; i++)
        blocked += p2p_proc.ranks[i].core.ult && p2p_proc.ranks[i].core.ult->state == RANK_ULT_BLOCKED;
    snprintf(msg, sizeof msg, "deadlock: all %d live ranks are blocked in MPI calls that no rank can satisfy",
             blocked);
    ucx_pmix_abort(1, msg);
}

/* With a single process nothing outside can wake a rank: when every rank is
 * blocked and none is ready, the job can never continue.  Say so instead of
 * spinning forever. */
static inline void check_deadlock(void)
{
    rank_pe_t *pe = &p2p_proc.pe;
    if (pe->current || !util_dlist_empty(&pe->ready) || pe->nlive == 0)
        return;
    report_deadlock();
}

static int (*hooks[P2P_MAX_HOOKS])(void);
static int nhooks;

void p2p_add_progress_hook(int (*hook)(void))
{
    if (nhooks == P2P_MAX_HOOKS)
        util_fatal("internal error: more than %d progress hooks", P2P_MAX_HOOKS);
    hooks[nhooks++] = hook;
}

/* A process alone has neither rings nor UCX (env_proc.c): what is left to
 * poll, and the deadlock check that only it can make. */
static int progress_alone(void)
{
    int n = 0;
    for (int i = 0; i < nhooks; i++)
        n += hooks[i]();
    if (UTIL_UNLIKELY(p2p_proc.ncopies))
        n += p2p_copies_progress();
    else if (n == 0)
        check_deadlock();
    return n;
}

int p2p_progress(void *unused)
{
    (void)unused;
    if (UTIL_UNLIKELY(core_proc.nprocs == 1))
        return progress_alone();
    /* the rings first (an empty poll is a load per ring); when they had
     * news and no UCX operation of ours is under way, the ranks get the
     * news before UCX's poll is paid for, yet UCX still gets every few
     * calls (envelopes too big for the ring, and whatever a full ring sent
     * its way).  A payload under way (rendezvous, staging) needs UCX polled
     * on every call: it moves only while both sides poll, and a ring that
     * keeps delivering envelopes would otherwise hold it back. */
    static unsigned ucx_deferred;
    int n = shm_poll(p2p_shm_envelope);
    if (n == 0 || ucx_ops_in_flight || ++ucx_deferred >= 4) {
        ucx_deferred = 0;
        n += ucx_progress();
    }
    if (UTIL_UNLIKELY(nhooks != 0))
        for (int i = 0; i < nhooks; i++)
            n += hooks[i]();
    if (UTIL_UNLIKELY(p2p_proc.ncopies))
        n += p2p_copies_progress();
    return n;
}
