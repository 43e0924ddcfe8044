/* A rank's communicator table: the predefined communicators and groups,
 * handle allocation, and the lifetime of communicator objects. */
#include "comm/comm_internal.h"
#include "pt2pt/p2p_bsend.h"
#include "util/util_log.h"

#include <stdlib.h>
#include <string.h>

void *comm_grow(void *tab, int *n, int need, size_t elem)
{
    if (need <= *n)
        return tab;
    int cap = *n ? *n : 8;
    while (cap < need)
        cap *= 2;
    char *t = realloc(tab, (size_t)cap * elem);
    if (!t)
        return NULL;
    memset(t + (size_t)*n * elem, 0, (size_t)(cap - *n) * elem);
    *n = cap;
    return t;
}

static void predefined_comm(core_comm_t *c, MPI_Comm h, uint32_t ctx, core_group_t *g, const char *name)
{
    *c = (core_comm_t){ .handle = h, .ctx = ctx, .rank = g->me, .size = g->size, .members = g->ranks,
                   .errh = MPI_ERRORS_ARE_FATAL, .refs = 1, .predefined = true, .group = g };
    strcpy(c->name, name);
}

static void comm_destroy(core_comm_t *c);

void comm_state_init(core_comm_state_t *s, int world_rank, int nranks)
{
    core_comm_set_destroy(comm_destroy); /* for core_comm_release */
    memset(s, 0, sizeof *s);
    /* the predefined groups live here: fixed, never freed */
    s->world_group = (core_group_t){ .refs = 1, .fixed = true, .size = nranks, .me = world_rank, .ranks = NULL };
    s->self_member = world_rank;
    s->self_group = (core_group_t){ .refs = 1, .fixed = true, .size = 1, .me = 0, .ranks = &s->self_member };
    s->empty_group = (core_group_t){ .refs = 1, .fixed = true, .size = 0, .me = MPI_UNDEFINED, .ranks = NULL };
    predefined_comm(&s->world, MPI_COMM_WORLD, COMM_CTX_WORLD, &s->world_group, "MPI_COMM_WORLD");
    predefined_comm(&s->self, MPI_COMM_SELF, COMM_CTX_SELF, &s->self_group, "MPI_COMM_SELF");
    s->next_ctx = COMM_CTX_FIRST_FREE;
    s->next_nbctx = COMM_CTX_NB_FIRST;
    s->comms = comm_grow(NULL, &s->ncomms, 3, sizeof *s->comms);
    s->groups = comm_grow(NULL, &s->ngroups, 2, sizeof *s->groups);
    if (!s->comms || !s->groups)
        util_fatal("out of memory for the communicator tables");
    s->comms[MPI_COMM_WORLD] = &s->world;
    s->comms[MPI_COMM_SELF] = &s->self;
    s->groups[MPI_GROUP_EMPTY] = &s->empty_group;
}

void comm_group_release(core_group_t *g)
{
    if (!g || g->fixed || --g->refs > 0)
        return;
    free(g->ranks);
    free(g);
}

/* The object outlives its handle while requests hold it (core_comm_retain):
 * sends started later still read its rank table, and errors its handler. */
static void comm_destroy(core_comm_t *c)
{
    comm_group_release(c->group);
    if (c->remote)
        comm_group_release(c->remote);
    free(c->attrs);
    comm_topo_release(c->topo);
    p2p_bsend_free(c->bsend); /* the messages sent through it hold c: they are gone */
    free(c);
}

core_comm_t *comm_new(core_comm_state_t *s, core_group_t *g, uint32_t ctx, MPI_Errhandler errh)
{
    int h = 3;
    while (h < s->ncomms && s->comms[h])
        h++;
    core_comm_t *c = calloc(1, sizeof *c);
    core_comm_t **tab = c ? comm_grow(s->comms, &s->ncomms, h + 1, sizeof *tab) : NULL;
    if (!tab) {
        free(c);
        comm_group_release(g);
        return NULL;
    }
    s->comms = tab;
    *c = (core_comm_t){ .handle = h, .ctx = ctx, .rank = g->me, .size = g->size, .members = g->ranks,
                   .errh = errh, .refs = 1, .group = g };
    s->comms[h] = c;
    comm_ctx_taken(s, ctx);
    return c;
}

void comm_drop_handle(core_comm_state_t *s, core_comm_t *c)
{
    s->comms[c->handle] = NULL;
    core_comm_release(c);
}

void comm_ctx_taken(core_comm_state_t *s, uint32_t ctx)
{
    uint32_t *next = ctx >= COMM_CTX_NB_FIRST ? &s->next_nbctx : &s->next_ctx;
    if (ctx + 2 > *next)
        *next = ctx + 2;
}

int *comm_copy_ints(const int *src, int n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (p && n > 0)
        memcpy(p, src, (size_t)n * sizeof *p);
    return p;
}

int comm_state_finalize(core_comm_state_t *s)
{
    int err = comm_attr_delete_all(s, &s->self);
    int err2 = comm_attr_delete_all(s, &s->world);
    return err ? err : err2;
}

void comm_state_fini(core_comm_state_t *s)
{
    /* no callbacks here (the rank's thread is gone): just memory */
    for (int h = 3; h < s->ncomms; h++) {
        core_comm_t *c = s->comms[h];
        if (!c)
            continue;
        s->comms[h] = NULL;
        comm_destroy(c);
    }
    for (int h = 2; h < s->ngroups; h++)
        comm_group_release(s->groups[h]);
    for (int k = 0; k < s->nkeyvals; k++)
        free(s->keyvals[k]);
    free(s->world.attrs);
    free(s->self.attrs);
    comm_topo_release(s->world.topo);
    comm_topo_release(s->self.topo);
    free(s->comms);
    free(s->groups);
    free(s->keyvals);
    memset(s, 0, sizeof *s);
}
