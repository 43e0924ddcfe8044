/* Process and rank state of the point-to-point layer, and the PE's progress. */
#include "pt2pt/p2p.h"
#include "rank/rank_place.h"
#include "ucx/ucx_pmix.h"
#include "util/util_env.h"
#include "util/util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

p2p_proc_t p2p_proc;

/* Every remote send asks which process holds its destination; a table
 * answers without rank_place_proc's two integer divisions (jobs of up to
 * PROC_OF_TABLE_MAX ranks; beyond that the table would cost more memory
 * than it saves time). */
#define PROC_OF_TABLE_MAX (1 << 20)
static int *proc_of_table;

int p2p_proc_of(int world)
{
    if (UTIL_LIKELY(proc_of_table != NULL))
        return proc_of_table[world];
    return rank_place_proc(p2p_proc.nranks, p2p_proc.nprocs, world);
}

static void proc_of_table_init(void)
{
    free(proc_of_table);
    proc_of_table = NULL;
    if (p2p_proc.nprocs < 2 || p2p_proc.nranks > PROC_OF_TABLE_MAX)
        return;
    int *t = malloc((size_t)p2p_proc.nranks * sizeof *t);
    if (!t)
        return; /* computed on each call instead */
    for (int w = 0; w < p2p_proc.nranks; w++)
        t[w] = rank_place_proc(p2p_proc.nranks, p2p_proc.nprocs, w);
    proc_of_table = t;
}

void p2p_proc_init(int nranks, int nprocs, int proc)
{
    p2p_proc.nranks = nranks;
    p2p_proc.nprocs = nprocs;
    p2p_proc.proc = proc;
    p2p_proc.first = rank_place_first(nranks, nprocs, proc);
    p2p_proc.nlocal = rank_place_count(nranks, nprocs, proc);
    p2p_proc.eager_limit = util_env_size("AMPI_EAGER_LIMIT", 8192);
    proc_of_table_init();
    util_dlist_init(&p2p_proc.copies);
    p2p_proc.ranks = calloc((size_t)p2p_proc.nlocal, sizeof *p2p_proc.ranks);
    if (!p2p_proc.ranks)
        util_fatal("out of memory for %d ranks", p2p_proc.nlocal);
    for (int i = 0; i < p2p_proc.nlocal; i++)
        p2p_rank_init(&p2p_proc.ranks[i], p2p_proc.first + i);
}

void p2p_rank_init(p2p_rank_t *r, int world)
{
    memset(r, 0, sizeof *r);
    r->world = world;
    p2p_queue_init(&r->posted);
    p2p_queue_init(&r->unexpected);
    util_dlist_init(&r->stash);
    if (p2p_proc.nprocs > 1) {
        r->send_seq = calloc((size_t)p2p_proc.nranks, sizeof *r->send_seq);
        r->recv_seq = calloc((size_t)p2p_proc.nranks, sizeof *r->recv_seq);
        if (!r->send_seq || !r->recv_seq)
            util_fatal("out of memory");
    }
    comm_state_init(&r->comms, world, p2p_proc.nranks);
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
    free(r->send_seq);
    free(r->recv_seq);
    comm_state_fini(&r->comms);
}

/* With a single process nothing outside can wake a rank: when every rank is
 * blocked and none is ready, the job can never continue.  Say so instead of
 * spinning forever. */
static void check_deadlock(void)
{
    rank_pe_t *pe = &p2p_proc.pe;
    if (pe->current || !util_dlist_empty(&pe->ready) || pe->nlive == 0)
        return;
    char msg[256];
    int blocked = 0;
    for (int i = 0; i < p2p_proc.nlocal; i++)
        blocked += p2p_proc.ranks[i].ult && p2p_proc.ranks[i].ult->state == RANK_ULT_BLOCKED;
    snprintf(msg, sizeof msg, "deadlock: all %d live ranks are blocked in MPI calls that no rank can satisfy",
             blocked);
    ucx_pmix_abort(1, msg);
}

int p2p_progress(void *unused)
{
    (void)unused;
    int n = ucx_progress();
    if (UTIL_UNLIKELY(p2p_proc.ncopies))
        n += p2p_copies_progress();
    else if (n == 0 && p2p_proc.nprocs == 1)
        check_deadlock();
    return n;
}
