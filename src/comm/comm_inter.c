/* Intercommunicators.
 *
 * An intercommunicator is a core_comm_t whose rank and group are the local
 * group's while size and members describe the remote group: point-to-point
 * names its peers in the remote group, and a sender stamps its messages
 * with its local rank, which is its rank in the receivers' remote group, so
 * matching on (ctx, source, tag) needs nothing of its own.  Both groups use
 * one context, the maximum of every member's next_ctx (see comm_create.c).
 * Each intercommunicator holds an intracommunicator over its local group
 * (`local`), over which the agreements of dup and merge run; the two leaders
 * (local rank 0) exchange over the intercommunicator's collective context. */
#include "comm/comm_internal.h"
#include "coll/coll.h"
#include "coll/coll_p2p.h"

#include <stdlib.h>

/* Tag of the leaders' exchanges: nothing else runs on an
 * intercommunicator's collective context. */
enum { INTER_TAG = 0 };

void comm_make_inter(core_comm_t *c, core_group_t *rg, core_comm_t *local)
{
    c->remote = rg;
    c->size = rg->size;
    c->members = rg->ranks;
    c->local = local;
}

/* Collective over both groups of c: each group's leader swaps `mine` (n
 * ints) for the other leader's (ntheirs ints), then tells its group.  The
 * leader of the group whose leader has the lower world rank sends first. */
static int leaders_swap(p2p_rank_t *r, core_comm_t *c, const int *mine, int n, int *theirs, int ntheirs)
{
    int err = MPI_SUCCESS;
    size_t bytes = (size_t)n * sizeof *mine, tbytes = (size_t)ntheirs * sizeof *theirs;
    if (c->rank == 0) {
        bool first = core_group_world(c->group, 0) < core_group_world(c->remote, 0);
        if (first)
            err = coll_send(r, c, mine, bytes, 0, INTER_TAG);
        if (!err)
            err = coll_recv(r, c, theirs, tbytes, 0, INTER_TAG);
        if (!err && !first)
            err = coll_send(r, c, mine, bytes, 0, INTER_TAG);
    }
    return err ? err : PMPI_Bcast(theirs, ntheirs, MPI_INT, 0, c->local->handle);
}

/* The context every member of both groups can take (see comm_create.c):
 * the maximum of the local maximum and the remote one.  extra (may be NULL)
 * travels with it: the local leader's value out, the remote one's back. */
static int agree_ctx(p2p_rank_t *r, core_comm_t *c, unsigned *ctx, int *extra)
{
    core_comm_state_t *s = comm_state(r);
    unsigned mine = s->next_ctx;
    int err = PMPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_UNSIGNED, MPI_MAX, c->local->handle);
    int out[2] = { (int)mine, extra ? *extra : 0 }, in[2];
    if (!err)
        err = leaders_swap(r, c, out, 2, in, 2);
    if (err)
        return err;
    *ctx = (unsigned)in[0] > mine ? (unsigned)in[0] : mine;
    if (extra)
        *extra = in[1];
    return MPI_SUCCESS;
}

int comm_inter_dup(p2p_rank_t *r, core_comm_t *c, core_comm_t **out)
{
    core_comm_state_t *s = comm_state(r);
    core_comm_t *local;
    int err = comm_dup_internal(r, c->local, &local);
    if (err)
        return err;
    /* leaders_swap needs the new helper: a temporary view of c using it */
    core_comm_t *old_local = c->local;
    c->local = local;
    unsigned ctx;
    err = agree_ctx(r, c, &ctx, NULL);
    c->local = old_local;
    if (!err) {
        comm_group_retain(c->group);
        err = comm_make(s, c->group, ctx, c, out);
    }
    if (err) {
        comm_drop_handle(s, local);
        return err;
    }
    comm_group_retain(c->remote);
    comm_make_inter(*out, c->remote, local);
    return MPI_SUCCESS;
}

/* The local leader's half of MPI_Intercomm_create: swaps group sizes,
 * contexts and member lists with the remote leader over peer_comm. */
static int leader_exchange(core_comm_t *lc, MPI_Comm peer_comm, int remote_leader, int tag, unsigned ctx, int hdr[2],
                           int **rranks)
{
    int mine[2] = { lc->group->size, (int)ctx };
    int err = PMPI_Sendrecv(mine, 2, MPI_INT, remote_leader, tag, hdr, 2, MPI_INT, remote_leader, tag, peer_comm,
                            MPI_STATUS_IGNORE);
    if (err)
        return err;
    if (hdr[0] <= 0)
        return MPI_ERR_ARG;
    int *lranks = malloc((size_t)lc->group->size * sizeof *lranks);
    *rranks = malloc((size_t)hdr[0] * sizeof **rranks);
    if (!lranks || !*rranks) {
        free(lranks);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < lc->group->size; i++)
        lranks[i] = core_group_world(lc->group, i);
    err = PMPI_Sendrecv(lranks, lc->group->size, MPI_INT, remote_leader, tag, *rranks, hdr[0], MPI_INT, remote_leader,
                        tag, peer_comm, MPI_STATUS_IGNORE);
    free(lranks);
    return err;
}

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    const char *fn = "MPI_Intercomm_create";
    COMM_ENTER(r, s, fn);
    COMM_GET(lc, s, local_comm, fn);
    COMM_INTRA_ONLY(lc, fn);
    if (!newintercomm)
        return core_error(lc, MPI_ERR_ARG, fn);
    if (local_leader < 0 || local_leader >= lc->size)
        return core_error(lc, MPI_ERR_RANK, fn);
    if (lc->rank == local_leader && !core_comm_lookup(s, peer_comm))
        return core_error(lc, MPI_ERR_COMM, fn);
    core_comm_t *local;
    int err = comm_dup_internal(r, lc, &local);
    if (err)
        return core_error(lc, err, fn);
    unsigned ctx = s->next_ctx;
    err = PMPI_Allreduce(MPI_IN_PLACE, &ctx, 1, MPI_UNSIGNED, MPI_MAX, local->handle);
    int hdr[2] = { 0, 0 };
    int *rranks = NULL;
    if (!err && lc->rank == local_leader)
        err = leader_exchange(lc, peer_comm, remote_leader, tag, ctx, hdr, &rranks);
    if (err)
        hdr[0] = 0;
    /* the leader's failure reaches its group as a size of 0 */
    int berr = PMPI_Bcast(hdr, 2, MPI_INT, local_leader, local->handle);
    if (!err && (berr || hdr[0] <= 0))
        err = berr ? berr : MPI_ERR_OTHER;
    if (!err && !rranks && !(rranks = malloc((size_t)hdr[0] * sizeof *rranks)))
        err = MPI_ERR_NO_MEM;
    if (!err)
        err = PMPI_Bcast(rranks, hdr[0], MPI_INT, local_leader, local->handle);
    core_group_t *rg = err ? NULL : comm_group_new(rranks, hdr[0], s->world.rank);
    free(rranks);
    if (!err && !rg)
        err = MPI_ERR_NO_MEM;
    if ((unsigned)hdr[1] > ctx)
        ctx = (unsigned)hdr[1];
    core_comm_t *nc = NULL;
    if (!err) {
        comm_group_retain(lc->group);
        err = comm_make(s, lc->group, ctx, lc, &nc);
    }
    if (err) {
        if (rg)
            comm_group_release(rg);
        comm_drop_handle(s, local);
        return core_error(lc, err, fn);
    }
    comm_make_inter(nc, rg, local);
    *newintercomm = nc->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    const char *fn = "MPI_Intercomm_merge";
    COMM_ENTER(r, s, fn);
    COMM_GET(c, s, intercomm, fn);
    if (!c->remote)
        return core_error_msg(c, MPI_ERR_COMM, fn, "not an intercommunicator");
    if (!newintracomm)
        return core_error(c, MPI_ERR_ARG, fn);
    /* every member of a group passes the same high; the leader's counts */
    int theirs_high = high != 0;
    unsigned ctx;
    int err = agree_ctx(r, c, &ctx, &theirs_high);
    int my_high = high != 0;
    if (!err)
        err = PMPI_Bcast(&my_high, 1, MPI_INT, 0, c->local->handle);
    if (err)
        return core_error(c, err, fn);
    /* equal high values: the group of the lower leader world rank first */
    bool local_first = my_high != theirs_high ? !my_high
                                              : core_group_world(c->group, 0) < core_group_world(c->remote, 0);
    const core_group_t *a = local_first ? c->group : c->remote, *b = local_first ? c->remote : c->group;
    int n = a->size + b->size;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (!ranks)
        return core_error(c, MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < a->size; i++)
        ranks[i] = core_group_world(a, i);
    for (int i = 0; i < b->size; i++)
        ranks[a->size + i] = core_group_world(b, i);
    core_group_t *g = comm_group_new(ranks, n, s->world.rank);
    free(ranks);
    core_comm_t *nc;
    err = g ? comm_make(s, g, ctx, c, &nc) : MPI_ERR_NO_MEM;
    if (err)
        return core_error(c, err, fn);
    *newintracomm = nc->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    COMM_ENTER(r, s, "MPI_Comm_test_inter");
    COMM_GET(c, s, comm, "MPI_Comm_test_inter");
    if (!flag)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_test_inter");
    *flag = c->remote != NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    COMM_ENTER(r, s, "MPI_Comm_remote_size");
    COMM_GET(c, s, comm, "MPI_Comm_remote_size");
    if (!c->remote)
        return core_error_msg(c, MPI_ERR_COMM, "MPI_Comm_remote_size", "not an intercommunicator");
    if (!size)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_remote_size");
    *size = c->remote->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    COMM_ENTER(r, s, "MPI_Comm_remote_group");
    COMM_GET(c, s, comm, "MPI_Comm_remote_group");
    if (!c->remote)
        return core_error_msg(c, MPI_ERR_COMM, "MPI_Comm_remote_group", "not an intercommunicator");
    if (!group)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_remote_group");
    comm_group_retain(c->remote);
    MPI_Group h = comm_group_handle(s, c->remote);
    if (h == MPI_GROUP_NULL)
        return core_error(c, MPI_ERR_NO_MEM, "MPI_Comm_remote_group");
    *group = h;
    return MPI_SUCCESS;
}

/* One member's part in a split: color, key, next_ctx. */
enum { SPLIT_INTS = 3 };

typedef struct {
    int key, rank, world;
} split_member_t;

static int by_key_then_rank(const void *a, const void *b)
{
    const split_member_t *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The members of group g (entries e, SPLIT_INTS each) with color `color`,
 * ordered by (key, rank), as a new group; *max_ctx: the largest next_ctx
 * among them.  NULL: none (or out of memory: *err). */
static core_group_t *split_piece(const core_group_t *g, const int *e, int color, int world_me, unsigned *max_ctx,
                                 int *err)
{
    split_member_t *m = malloc((size_t)g->size * sizeof *m);
    int *ranks = malloc((size_t)g->size * sizeof *ranks), k = 0;
    core_group_t *piece = NULL;
    *max_ctx = 0;
    if (!m || !ranks) {
        *err = MPI_ERR_NO_MEM;
        goto out;
    }
    for (int i = 0; i < g->size; i++) {
        const int *x = &e[SPLIT_INTS * i];
        if (x[0] != color)
            continue;
        m[k++] = (split_member_t){ x[1], i, core_group_world(g, i) };
        if ((unsigned)x[2] > *max_ctx)
            *max_ctx = (unsigned)x[2];
    }
    qsort(m, (size_t)k, sizeof *m, by_key_then_rank);
    for (int i = 0; i < k; i++)
        ranks[i] = m[i].world;
    if (k > 0 && !(piece = comm_group_new(ranks, k, world_me)))
        *err = MPI_ERR_NO_MEM;
out:
    free(m);
    free(ranks);
    return piece;
}

/* Splitting an intercommunicator: every member learns the (color, key,
 * next_ctx) of every member of both groups -- an allgather in each group,
 * then the leaders swap the two tables -- and each color whose pieces in
 * both groups are non-empty becomes an intercommunicator between them.
 * Contexts without another round: the new local helper of a piece takes
 * the largest next_ctx of its members (L), as a split does; the new
 * intercommunicator takes max(L of the local piece, L of the remote one)
 * + 2, which lies above every member's next_ctx and its new helper's
 * context, and which both pieces compute alike. */
int comm_inter_split(p2p_rank_t *r, core_comm_t *c, int color, int key, core_comm_t **out)
{
    core_comm_state_t *s = comm_state(r);
    int nl = c->group->size, nr = c->remote->size;
    *out = NULL;
    int mine[SPLIT_INTS] = { color, key, (int)s->next_ctx };
    int *all = malloc((size_t)SPLIT_INTS * (size_t)(nl + nr) * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    int err = PMPI_Allgather(mine, SPLIT_INTS, MPI_INT, all, SPLIT_INTS, MPI_INT, c->local->handle);
    if (!err)
        err = leaders_swap(r, c, all, SPLIT_INTS * nl, all + SPLIT_INTS * nl, SPLIT_INTS * nr);
    if (err || color == MPI_UNDEFINED) {
        free(all);
        return err;
    }
    unsigned lctx, rctx;
    core_group_t *lg = split_piece(c->group, all, color, s->world.rank, &lctx, &err);
    core_group_t *rg = err ? NULL : split_piece(c->remote, all + SPLIT_INTS * nl, color, s->world.rank, &rctx, &err);
    free(all);
    if (!lg || !rg) { /* one side empty (MPI_COMM_NULL), or out of memory */
        if (lg)
            comm_group_release(lg);
        if (rg)
            comm_group_release(rg);
        return err;
    }
    core_comm_t *local = NULL;
    comm_group_retain(lg);
    err = comm_make(s, lg, lctx, c, &local);
    if (!err)
        err = comm_make(s, lg, (lctx > rctx ? lctx : rctx) + 2, c, out);
    else
        comm_group_release(lg);
    if (err) {
        if (local)
            comm_drop_handle(s, local);
        comm_group_release(rg);
        *out = NULL;
        return err;
    }
    comm_make_inter(*out, rg, local);
    return MPI_SUCCESS;
}
