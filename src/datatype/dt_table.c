/* The process-wide table of derived datatype handles.
 *
 * Types are created and freed only by the ranks' user-level threads, which
 * all run on one OS thread per process (one PE), and none of these functions
 * yields: no locks.  The table is a fixed array of chunks that never moves,
 * so a dt_type_t pointer stays valid while its handle lives, and a freed
 * handle's number is reused (codes that create and free types in a loop). */
#include "datatype/dt_internal.h"
#include "gpu/gpu_dt.h"

#include <stdlib.h>
#include <string.h>

#define DT_CHUNK 256
#define DT_MAX_CHUNKS 4096 /* ~1M live derived types per process */

static dt_type_t **chunks[DT_MAX_CHUNKS];
static unsigned nchunks;
static MPI_Datatype *free_handles; /* stack of released handle numbers */
static size_t nfree, free_cap;

dt_type_t *dt_derived(MPI_Datatype t)
{
    /* Handles below DT_FIRST_DERIVED wrap around to huge indices. */
    unsigned idx = (unsigned)t - DT_FIRST_DERIVED;
    unsigned c = idx / DT_CHUNK;
    return c < nchunks ? chunks[c][idx % DT_CHUNK] : NULL;
}

static dt_type_t **slot(MPI_Datatype t)
{
    unsigned idx = (unsigned)t - DT_FIRST_DERIVED;
    return &chunks[idx / DT_CHUNK][idx % DT_CHUNK];
}

int dt_register(dt_type_t *d, MPI_Datatype *handle)
{
    if (nfree == 0) {
        if (nchunks == DT_MAX_CHUNKS)
            return MPI_ERR_INTERN;
        dt_type_t **c = calloc(DT_CHUNK, sizeof *c);
        MPI_Datatype *f = realloc(free_handles, (free_cap + DT_CHUNK) * sizeof *f);
        if (!c || !f) {
            free(c);
            if (f)
                free_handles = f;
            return MPI_ERR_NO_MEM;
        }
        free_handles = f;
        free_cap += DT_CHUNK;
        /* Pushed in reverse so that handles come out in increasing order. */
        for (int i = DT_CHUNK - 1; i >= 0; i--)
            free_handles[nfree++] = (MPI_Datatype)(DT_FIRST_DERIVED + nchunks * DT_CHUNK + (unsigned)i);
        chunks[nchunks++] = c;
    }
    MPI_Datatype h = free_handles[--nfree];
    *slot(h) = d;
    *handle = h;
    return MPI_SUCCESS;
}

void dt_destroy(dt_type_t *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->ntypes && d->types; i++)
        dt_release(d->types[i]);
    free(d->ints);
    free(d->aints);
    free(d->types);
    gpu_dt_layout_free(d->gpu_layout);
    free(d->blocks);
    free(d->runs);
    free(d);
}

_Static_assert(sizeof(dt_block_t) == sizeof(gpu_dt_block_t), "gpu_dt_block_t mirrors dt_block_t");
_Static_assert(offsetof(dt_block_t, len) == offsetof(gpu_dt_block_t, len), "gpu_dt_block_t mirrors dt_block_t");

static dt_type_t *view_of(MPI_Datatype t);

struct gpu_dt_layout *dt_gpu_layout(MPI_Datatype t)
{
    dt_type_t *d = dt_is_predefined(t) ? view_of(t) : dt_derived(t);
    if (d && !d->gpu_layout)
        d->gpu_layout = gpu_dt_layout_new((const gpu_dt_block_t *)d->blocks, d->nblocks, d->ub - d->lb, d->size);
    return d ? d->gpu_layout : NULL;
}

void dt_retain(MPI_Datatype t)
{
    dt_type_t *d = dt_derived(t);
    if (d)
        d->refs++;
}

void dt_release(MPI_Datatype t)
{
    dt_type_t *d = dt_derived(t);
    if (!d || --d->refs > 0)
        return;
    *slot(t) = NULL;
    free_handles[nfree++] = t; /* room: free_cap counts every handle ever made */
    dt_destroy(d);
}

/* ---- predefined types seen as one-block types ---- */

static dt_type_t views[AMPI_DATATYPE_PREDEFINED_LAST + 1];
static dt_block_t view_blocks[AMPI_DATATYPE_PREDEFINED_LAST + 1][2];
static dt_run_t view_runs[AMPI_DATATYPE_PREDEFINED_LAST + 1];
static bool views_ready;

/* Types MPI defines as pairs: two basic elements each (MPI_Get_elements). */
static bool is_pair(MPI_Datatype t)
{
    return (t >= MPI_FLOAT_INT && t <= MPI_LONG_DOUBLE_INT) || t == MPI_2INTEGER || t == MPI_2REAL ||
           t == MPI_2DOUBLE_PRECISION;
}

static void views_init(void)
{
    for (MPI_Datatype t = 1; t <= AMPI_DATATYPE_PREDEFINED_LAST; t++) {
        dt_type_t *v = &views[t];
        const dt_info_t *p = &dt_predefined[t];
        v->size = p->size;
        v->ub = (ptrdiff_t)p->extent;
        v->align = p->align;
        v->committed = true;
        v->contig = dt_is_plain(t);
        v->refs = 1;
        v->combiner = MPI_COMBINER_NAMED;
        if (p->size == 0) /* MPI_LB and MPI_UB carry no data, only a bound */
            continue;
        v->blocks = view_blocks[t];
        v->runs = &view_runs[t];
        v->nruns = 1;
        v->nbasic = is_pair(t) ? 2 : 1;
        view_runs[t] = (dt_run_t){ t, 1 };
        if (v->contig) {
            view_blocks[t][0] = (dt_block_t){ 0, p->size };
            v->nblocks = 1;
            v->true_ub = (ptrdiff_t)p->size;
        } else if (p->second == p->first) { /* a pair padded at its end */
            view_blocks[t][0] = (dt_block_t){ 0, p->size };
            v->nblocks = 1;
            v->true_ub = (ptrdiff_t)p->size;
        } else { /* padding between the value and the index */
            view_blocks[t][0] = (dt_block_t){ 0, p->first };
            view_blocks[t][1] = (dt_block_t){ (ptrdiff_t)p->second, p->size - p->first };
            v->nblocks = 2;
            v->true_ub = (ptrdiff_t)(p->second + p->size - p->first);
        }
    }
    views[MPI_LB].lb_marked = true;
    views[MPI_UB].ub_marked = true;
    views_ready = true;
}

static dt_type_t *view_of(MPI_Datatype t)
{
    if (!views_ready)
        views_init();
    return &views[t];
}

const dt_type_t *dt_view(MPI_Datatype t)
{
    return dt_is_predefined(t) ? view_of(t) : dt_derived(t);
}

/* ---- names ---- */

static char *predefined_names[AMPI_DATATYPE_PREDEFINED_LAST + 1];

const char *dt_name(MPI_Datatype t)
{
    if (dt_is_predefined(t))
        return predefined_names[t] ? predefined_names[t] : dt_predefined[t].name;
    const dt_type_t *d = dt_derived(t);
    return d ? d->name : "";
}

int dt_set_predefined_name(MPI_Datatype t, const char *name)
{
    char *copy = strdup(name);
    if (!copy)
        return MPI_ERR_NO_MEM;
    free(predefined_names[t]);
    predefined_names[t] = copy;
    return MPI_SUCCESS;
}
