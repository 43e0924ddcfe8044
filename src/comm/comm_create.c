/* Creating and freeing communicators, and how they get their contexts.
 *
 * Context ids come without a dedicated agreement round.  Every rank keeps
 * next_ctx, above the context of every communicator it belongs to (start 4,
 * step 2: ctx for point-to-point, ctx + 1 for collectives).  A new
 * communicator takes the maximum of its members' next_ctx, and each member
 * then moves its own next_ctx past it:
 *  - MPI_Comm_split piggybacks next_ctx on the allgather of (color, key) it
 *    needs anyway; each color takes the maximum over its own members;
 *  - MPI_Comm_dup and MPI_Comm_create do one allreduce(MAX) over the parent;
 *  - MPI_Comm_create_group does a reduce + bcast among the group's members
 *    only (it is not collective over the parent).
 * Why two communicators never share a context at any rank: a rank's calls
 * are sequential, so the value it contributes is read after every
 * communicator it already has was created, and all their contexts are below
 * it; the new context is >= that value, hence different from all of them,
 * and the rank's next_ctx moves above it before any later creation.  Every
 * rank that receives a message on context x belongs to the one communicator
 * with context x that it has ever had or will have (next_ctx never goes
 * back, so freed contexts are never reused either), which is what matching
 * on (ctx, source, tag) needs.  Disjoint communicators may share a context:
 * no rank can confuse them.
 *
 * MPI_Comm_idup breaks "a rank's calls are sequential": its agreement runs
 * on a helper thread while the rank goes on, and may create communicators
 * meanwhile (other idups included: two ranks may each start an idup that
 * needs the other's second one, which blocking agreement would deadlock).
 * Its contexts therefore come from a space of their own (>= COMM_CTX_NB_FIRST,
 * counted by next_nbctx), where agreement has two rounds: an allreduce(MAX)
 * of the members' next_nbctx gives a candidate; each member accepts it if it
 * is still >= its next_nbctx -- and then moves next_nbctx past it at once, in
 * the same uninterrupted step -- and an allreduce(MIN) of the answers tells
 * whether all did.  If one did not (another idup of that rank took the value
 * meanwhile), everybody tries again with their new next_nbctx; values
 * accepted by some members only are skipped, never reused. */
#include "comm/comm_internal.h"
#include "coll/coll.h"
#include "coll/coll_op.h"
#include "ucx/ucx_pmix.h"
#include "coll/coll_nb.h"

#include <limits.h>
#include <stdlib.h>

/* 2^31 contexts in each space is the limit: far beyond any run, but never
 * wrap silently. */
static int ctx_check(uint32_t ctx)
{
    uint32_t last = ctx >= COMM_CTX_NB_FIRST ? UINT32_MAX - 4 : COMM_CTX_NB_FIRST - 4;
    return ctx > last ? MPI_ERR_INTERN : MPI_SUCCESS;
}

/* Taking over the parent's error handler is what the standard asks of every
 * constructor. */
int comm_make(core_comm_state_t *s, core_group_t *g, uint32_t ctx, const core_comm_t *parent, core_comm_t **out)
{
    int err = ctx_check(ctx);
    if (err) {
        comm_group_release(g);
        return err;
    }
    *out = comm_new(s, g, ctx, parent->errh);
    return *out ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int comm_dup_internal(p2p_rank_t *r, core_comm_t *parent, core_comm_t **out)
{
    core_comm_state_t *s = comm_state(r);
    unsigned ctx = s->next_ctx;
    int err = PMPI_Allreduce(MPI_IN_PLACE, &ctx, 1, MPI_UNSIGNED, MPI_MAX, parent->handle);
    if (err)
        return err;
    comm_group_retain(parent->group);
    return comm_make(s, parent->group, ctx, parent, out);
}

/* One member's contribution to a split. */
typedef struct {
    int color, key;
    unsigned next_ctx;
} split_entry_t;

typedef struct {
    int key, parent_rank, world;
} split_member_t;

static int by_key_then_rank(const void *a, const void *b)
{
    const split_member_t *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->parent_rank > y->parent_rank) - (x->parent_rank < y->parent_rank);
}

int comm_split_internal(p2p_rank_t *r, core_comm_t *parent, int color, int key, core_comm_t **out)
{
    core_comm_state_t *s = comm_state(r);
    int n = parent->size;
    *out = NULL;
    split_entry_t mine = { color, key, s->next_ctx };
    split_entry_t *all = coll_malloc((size_t)n * sizeof *all);
    int err = PMPI_Allgather(&mine, 3, MPI_INT, all, 3, MPI_INT, parent->handle);
    if (!err && color != MPI_UNDEFINED) {
        split_member_t *m = coll_malloc((size_t)n * sizeof *m);
        int *ranks = coll_malloc((size_t)n * sizeof *ranks);
        int k = 0;
        unsigned ctx = 0;
        for (int i = 0; i < n; i++) {
            if (all[i].color != color)
                continue;
            m[k++] = (split_member_t){ all[i].key, i, core_comm_world_rank(parent, i) };
            if (all[i].next_ctx > ctx)
                ctx = all[i].next_ctx;
        }
        qsort(m, (size_t)k, sizeof *m, by_key_then_rank);
        for (int i = 0; i < k; i++)
            ranks[i] = m[i].world;
        core_group_t *g = comm_group_new(ranks, k, s->world.rank);
        err = g ? comm_make(s, g, ctx, parent, out) : MPI_ERR_NO_MEM;
        free(m);
        free(ranks);
    }
    free(all);
    return err;
}

/* What a duplicate takes over besides the group: the topology and the
 * attributes whose copy callbacks say so.  A failing callback leaves no
 * communicator. */
static int dup_extras(core_comm_state_t *s, core_comm_t *c, core_comm_t *nc)
{
    if (c->topo) {
        nc->topo = c->topo;
        nc->topo->refs++;
    }
    int err = comm_attr_copy_all(s, c, nc);
    if (err) {
        comm_attr_delete_all(s, nc);
        core_comm_t *local = nc->local; /* an intercommunicator's helper goes with it */
        comm_drop_handle(s, nc);
        if (local)
            comm_drop_handle(s, local);
    }
    return err;
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    COMM_ENTER(r, s, "MPI_Comm_dup");
    COMM_GET(c, s, comm, "MPI_Comm_dup");
    if (!newcomm)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_dup");
    core_comm_t *nc;
    int err = c->remote ? comm_inter_dup(r, c, &nc) : comm_dup_internal(r, c, &nc);
    if (!err)
        err = dup_extras(s, c, nc);
    if (err)
        return core_error(c, err, "MPI_Comm_dup");
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* v = max (or min) of v over the members of c -- over both groups of an
 * intercommunicator: each group reduces over its local communicator, the
 * leaders swap their results and tell their groups.  On the helper thread
 * with the collective's tag. */
static int agree_reduce(p2p_rank_t *r, core_comm_t *c, unsigned *v, const coll_op_t *op, int tag)
{
    if (!c->remote)
        return coll_allreduce(r, c, v, v, 1, MPI_UNSIGNED, op, tag);
    unsigned theirs = *v;
    int err = coll_allreduce(r, c->local, v, v, 1, MPI_UNSIGNED, op, tag);
    if (!err && c->rank == 0)
        err = coll_sendrecv(r, c, v, sizeof *v, 0, &theirs, sizeof theirs, 0, tag);
    if (!err && c->rank == 0)
        coll_op_apply(op, &theirs, v, 1);
    return err ? err : coll_bcast(r, c->local, v, sizeof *v, 0, tag);
}

/* The agreement on an idup context (see the top of this file), on the
 * helper thread with the collective's tag. */
static int nb_ctx_agree(p2p_rank_t *r, core_comm_t *c, uint32_t *ctx, int tag)
{
    core_comm_state_t *s = comm_state(r);
    coll_op_t max, min;
    coll_op_resolve(MPI_MAX, MPI_UNSIGNED, &max);
    coll_op_resolve(MPI_MIN, MPI_UNSIGNED, &min);
    for (;;) {
        unsigned cand = s->next_nbctx;
        int err = agree_reduce(r, c, &cand, &max, tag);
        if (err)
            return err;
        err = ctx_check(cand);
        if (err)
            return err;
        /* no thread switch between the test and the move */
        unsigned all_ok = cand >= s->next_nbctx;
        if (all_ok)
            s->next_nbctx = cand + 2;
        err = agree_reduce(r, c, &all_ok, &min, tag);
        if (err)
            return err;
        if (all_ok) {
            *ctx = cand;
            return MPI_SUCCESS;
        }
    }
}

/* An intercommunicator's copy needs its own local helper first: its
 * context comes from the local group alone. */
static int idup_local(p2p_rank_t *r, core_comm_t *c, core_comm_t **local, int tag)
{
    uint32_t ctx;
    int err = nb_ctx_agree(r, c->local, &ctx, tag);
    if (err)
        return err;
    comm_group_retain(c->group);
    return comm_make(comm_state(r), c->group, ctx, c, local);
}

/* MPI_Comm_idup's helper: rbuf is the user's MPI_Comm, written when the
 * communicator exists (MPI lets it be used only after completion). */
static int run_idup(p2p_rank_t *r, core_comm_t *c, const coll_nb_args_t *a, int tag)
{
    core_comm_state_t *s = comm_state(r);
    core_comm_t *nc = NULL, *local = NULL;
    uint32_t ctx;
    int err = c->remote ? idup_local(r, c, &local, tag) : MPI_SUCCESS;
    if (!err)
        err = nb_ctx_agree(r, c, &ctx, tag);
    if (!err) {
        comm_group_retain(c->group);
        err = comm_make(s, c->group, ctx, c, &nc);
    }
    if (!err && local) {
        comm_group_retain(c->remote);
        comm_make_inter(nc, c->remote, local);
        local = NULL;
    }
    if (local)
        comm_drop_handle(s, local);
    if (!err)
        err = dup_extras(s, c, nc);
    *(MPI_Comm *)a->rbuf = err ? MPI_COMM_NULL : nc->handle;
    return err;
}

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    COMM_ENTER(r, s, "MPI_Comm_idup");
    COMM_GET(c, s, comm, "MPI_Comm_idup");
    if (!newcomm || !request)
        return core_error(c, !newcomm ? MPI_ERR_ARG : MPI_ERR_REQUEST, "MPI_Comm_idup");
    coll_nb_args_t a = { .rbuf = newcomm };
    int err = coll_nb_start(r, c, run_idup, &a, request);
    return err ? core_error(c, err, "MPI_Comm_idup") : MPI_SUCCESS;
}

/* The info hints change nothing here. */
#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    (void)info;
    return PMPI_Comm_idup(comm, newcomm, request);
}

#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info;
    return PMPI_Comm_dup(comm, newcomm);
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    COMM_ENTER(r, s, "MPI_Comm_split");
    COMM_GET(c, s, comm, "MPI_Comm_split");
    if (!newcomm || (color < 0 && color != MPI_UNDEFINED))
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_split");
    core_comm_t *nc;
    int err = c->remote ? comm_inter_split(r, c, color, key, &nc) : comm_split_internal(r, c, color, key, &nc);
    if (err)
        return core_error(c, err, "MPI_Comm_split");
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* The node a world rank runs on.  ampirun starts every process on the
 * local node (single-node launcher), so all ranks share one; a multi-node
 * launcher would answer from PMIx (PMIX_NODEID of the rank's process). */
/* MPI_COMM_TYPE_SHARED: the calling rank's node, named by its lowest
 * process number (every rank of a process shares its node) */
static int node_of_caller(void) { return ucx_pmix_node_leader(); }

#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info;
    COMM_ENTER(r, s, "MPI_Comm_split_type");
    COMM_GET(c, s, comm, "MPI_Comm_split_type");
    if (!newcomm || (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED))
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_split_type");
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : node_of_caller();
    core_comm_t *nc;
    int err = c->remote ? comm_inter_split(r, c, color, key, &nc) : comm_split_internal(r, c, color, key, &nc);
    if (err)
        return core_error(c, err, "MPI_Comm_split_type");
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* MPI_SUCCESS if every member of g is a member of c, else MPI_ERR_GROUP. */
static int check_subgroup(const core_comm_t *c, const core_group_t *g)
{
    if (!c->members) { /* the world group holds every valid world rank */
        for (int i = 0; i < g->size; i++)
            if (core_group_world(g, i) >= c->size)
                return MPI_ERR_GROUP;
        return MPI_SUCCESS;
    }
    int *sorted = comm_copy_ints(c->members, c->size);
    if (!sorted)
        return MPI_ERR_NO_MEM;
    qsort(sorted, (size_t)c->size, sizeof *sorted, cmp_int);
    int err = MPI_SUCCESS;
    for (int i = 0; i < g->size && !err; i++) {
        int w = core_group_world(g, i);
        if (!bsearch(&w, sorted, (size_t)c->size, sizeof w, cmp_int))
            err = MPI_ERR_GROUP;
    }
    free(sorted);
    return err;
}

/* On an intercommunicator each group names a subgroup of its own local
 * group (MPI-3.1 6.4.2): a split whose color says membership and whose key
 * keeps the group's order.  A member checks its group first, so an error
 * leaves the collective unstarted everywhere only when every member's group
 * is wrong alike -- as on an intracommunicator. */
static int inter_create(p2p_rank_t *r, core_comm_t *c, core_group_t *g, core_comm_t **nc)
{
    int err = g->me != MPI_UNDEFINED ? check_subgroup(c->local, g) : MPI_SUCCESS;
    return err ? err : comm_inter_split(r, c, g->me != MPI_UNDEFINED ? 0 : MPI_UNDEFINED, g->me, nc);
}

/* Collective over comm; the group may differ between ranks as long as the
 * groups are disjoint (MPI-2.2): every group gets the same context, which is
 * safe because no rank is in two of them. */
#pragma weak MPI_Comm_create = PMPI_Comm_create
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    COMM_ENTER(r, s, "MPI_Comm_create");
    COMM_GET(c, s, comm, "MPI_Comm_create");
    core_group_t *g = comm_group_lookup(s, group);
    if (!g)
        return core_error(c, MPI_ERR_GROUP, "MPI_Comm_create");
    if (!newcomm)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_create");
    if (c->remote) {
        core_comm_t *nc = NULL;
        int err = inter_create(r, c, g, &nc);
        if (err)
            return core_error(c, err, "MPI_Comm_create");
        *newcomm = nc ? nc->handle : MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    unsigned ctx = s->next_ctx;
    int err = PMPI_Allreduce(MPI_IN_PLACE, &ctx, 1, MPI_UNSIGNED, MPI_MAX, comm);
    if (!err && g->me != MPI_UNDEFINED)
        err = check_subgroup(c, g);
    core_comm_t *nc = NULL;
    if (!err && g->me != MPI_UNDEFINED) {
        comm_group_retain(g);
        err = comm_make(s, g, ctx, c, &nc);
    }
    if (err)
        return core_error(c, err, "MPI_Comm_create");
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* The rank in c of world rank w (a member of c). */
static int parent_rank(const core_comm_t *c, int w)
{
    if (!c->members)
        return w;
    for (int i = 0; i < c->size; i++)
        if (c->members[i] == w)
            return i;
    return MPI_PROC_NULL;
}

/* Tags for MPI_Comm_create_group's agreement on the parent's collective
 * context: negative, so they never meet the collectives' own tags (>= 0),
 * one pair per user tag (modulo 2^30 - 1), because MPI lets overlapping
 * groups create concurrently only with different tags.  The largest is
 * INT_MIN + 2^31 - 3 = -3: never -1, which would be MPI_ANY_TAG. */
static int group_tag(int tag, int phase) { return INT_MIN + 2 * (tag % 0x3fffffff) + phase; }

#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_group";
    COMM_ENTER(r, s, fn);
    COMM_GET(c, s, comm, fn);
    COMM_INTRA_ONLY(c, fn);
    core_group_t *g = comm_group_lookup(s, group);
    if (!g)
        return core_error(c, MPI_ERR_GROUP, fn);
    if (!newcomm || tag < 0)
        return core_error(c, !newcomm ? MPI_ERR_ARG : MPI_ERR_TAG, fn);
    if (g->me == MPI_UNDEFINED) { /* only members call; a non-member gets nothing */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int err = check_subgroup(c, g);
    if (err)
        return core_error(c, err, fn);
    /* The group's members agree on the context over the parent's collective
     * context: each sends its next_ctx to the group's first member, which
     * answers with the maximum.  Messages name their sender by its rank in
     * the parent, so a member that belongs to several groups created one
     * after the other with the same tag (the tag only has to differ between
     * concurrent calls) cannot take one group's message for another's. */
    int leader = parent_rank(c, core_group_world(g, 0));
    unsigned ctx = s->next_ctx;
    if (g->me != 0) {
        err = coll_send(r, c, &ctx, sizeof ctx, leader, group_tag(tag, 0));
        if (!err)
            err = coll_recv(r, c, &ctx, sizeof ctx, leader, group_tag(tag, 1));
    } else {
        for (int i = 1; i < g->size && !err; i++) {
            unsigned theirs;
            err = coll_recv(r, c, &theirs, sizeof theirs, parent_rank(c, core_group_world(g, i)), group_tag(tag, 0));
            if (!err && theirs > ctx)
                ctx = theirs;
        }
        for (int i = 1; i < g->size; i++) {
            int serr = coll_send(r, c, &ctx, sizeof ctx, parent_rank(c, core_group_world(g, i)), group_tag(tag, 1));
            if (!err)
                err = serr;
        }
    }
    core_comm_t *nc = NULL;
    if (!err) {
        comm_group_retain(g);
        err = comm_make(s, g, ctx, c, &nc);
    }
    if (err)
        return core_error(c, err, fn);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_free = PMPI_Comm_free
int PMPI_Comm_free(MPI_Comm *comm)
{
    COMM_ENTER(r, s, "MPI_Comm_free");
    if (!comm)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Comm_free");
    COMM_GET(c, s, *comm, "MPI_Comm_free");
    if (c->predefined)
        return core_error(c, MPI_ERR_COMM, "MPI_Comm_free");
    /* delete callbacks run while the handle is still valid; if one fails,
     * the communicator stays (as in MPICH), with the rest of its attributes */
    int err = comm_attr_delete_all(s, c);
    if (err)
        return core_error(c, err, "MPI_Comm_free");
    core_comm_t *local = c->local; /* an intercommunicator's helper goes with it */
    comm_drop_handle(s, c);
    if (local)
        comm_drop_handle(s, local);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    COMM_ENTER(r, s, "MPI_Comm_compare");
    COMM_GET(c1, s, comm1, "MPI_Comm_compare");
    COMM_GET(c2, s, comm2, "MPI_Comm_compare");
    if (!result)
        return core_error(c1, MPI_ERR_ARG, "MPI_Comm_compare");
    if (c1 == c2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (!c1->remote != !c2->remote) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int err = comm_group_compare(c1->group, c2->group, result);
    int remote_result = MPI_IDENT;
    if (!err && c1->remote)
        err = comm_group_compare(c1->remote, c2->remote, &remote_result);
    if (!err && remote_result != MPI_IDENT && *result != MPI_UNEQUAL)
        *result = remote_result; /* the weaker of the two answers */
    if (err)
        return core_error(c1, err, "MPI_Comm_compare");
    if (*result == MPI_IDENT) /* same members in the same order, another context */
        *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
}
