/* Datatype queries, commit/free, names, envelope and contents.  Queries work
 * on uncommitted derived types too (MPI allows it); only communication
 * needs a committed type. */
#include "core/core_rank.h"
#include "rank/rank_host.h"
#include "datatype/dt_internal.h"

#include <string.h>

/* The type behind dt (predefined or derived, committed or not), or NULL
 * after reporting MPI_ERR_TYPE. */
static const dt_type_t *lookup(MPI_Datatype dt, const char *fn)
{
    const dt_type_t *v = dt_view(dt);
    if (!v)
        core_error(NULL, MPI_ERR_TYPE, fn);
    return v;
}

#define LOOKUP(v, dt, fn)                        \
    const dt_type_t *v = lookup(dt, fn);         \
    if (!v)                                      \
        return MPI_ERR_TYPE

#pragma weak MPI_Type_size = PMPI_Type_size
int PMPI_Type_size(MPI_Datatype dt, int *size)
{
    RANK_HOST_GUARD; /* library mode: one MPI call at a time */
    LOOKUP(v, dt, "MPI_Type_size");
    *size = v->size > 0x7fffffff ? MPI_UNDEFINED : (int)v->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_size_x = PMPI_Type_size_x
int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_size_x");
    *size = (MPI_Count)v->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_get_extent");
    *lb = v->lb;
    *extent = v->ub - v->lb;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
int PMPI_Type_get_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_get_extent_x");
    *lb = v->lb;
    *extent = v->ub - v->lb;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
int PMPI_Type_get_true_extent(MPI_Datatype dt, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_get_true_extent");
    *true_lb = v->true_lb;
    *true_extent = v->true_ub - v->true_lb;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
int PMPI_Type_get_true_extent_x(MPI_Datatype dt, MPI_Count *true_lb, MPI_Count *true_extent)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_get_true_extent_x");
    *true_lb = v->true_lb;
    *true_extent = v->true_ub - v->true_lb;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_commit = PMPI_Type_commit
int PMPI_Type_commit(MPI_Datatype *dt)
{
    RANK_HOST_GUARD;
    if (!dt)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_commit");
    LOOKUP(v, *dt, "MPI_Type_commit");
    dt_type_t *d = dt_derived(*dt); /* predefined types are committed already */
    if (d)
        d->committed = true;
    (void)v;
    return MPI_SUCCESS;
}

/* The object lives on while outer types (their contents) or pending
 * operations hold references; only the user's handle goes away. */
#pragma weak MPI_Type_free = PMPI_Type_free
int PMPI_Type_free(MPI_Datatype *dt)
{
    RANK_HOST_GUARD;
    if (!dt)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_free");
    if (!dt_derived(*dt) || dt_f90_base(*dt) != MPI_DATATYPE_NULL) /* those are predefined */
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Type_free");
    int err = dt_attr_delete_all(*dt); /* a failing delete callback keeps the type */
    if (err)
        return core_error(NULL, err, "MPI_Type_free");
    dt_release(*dt);
    *dt = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_name = PMPI_Type_get_name
int PMPI_Type_get_name(MPI_Datatype dt, char *type_name, int *resultlen)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_get_name");
    (void)v;
    const char *n = dt_name(dt);
    size_t len = strlen(n);
    if (len >= MPI_MAX_OBJECT_NAME)
        len = MPI_MAX_OBJECT_NAME - 1;
    memcpy(type_name, n, len);
    type_name[len] = '\0';
    *resultlen = (int)len;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_set_name = PMPI_Type_set_name
int PMPI_Type_set_name(MPI_Datatype dt, const char *type_name)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_set_name");
    (void)v;
    if (!type_name)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_set_name");
    char buf[MPI_MAX_OBJECT_NAME];
    size_t len = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1); /* longer names are truncated */
    memcpy(buf, type_name, len);
    buf[len] = '\0';
    dt_type_t *d = dt_derived(dt);
    if (d) {
        memcpy(d->name, buf, len + 1);
        return MPI_SUCCESS;
    }
    int err = dt_set_predefined_name(dt, buf);
    return err ? core_error(NULL, err, "MPI_Type_set_name") : MPI_SUCCESS;
}

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
int PMPI_Type_get_envelope(MPI_Datatype dt, int *num_integers, int *num_addresses, int *num_datatypes,
                           int *combiner)
{
    RANK_HOST_GUARD;
    LOOKUP(v, dt, "MPI_Type_get_envelope");
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope");
    *num_integers = v->nints;
    *num_addresses = v->naints;
    *num_datatypes = v->ntypes;
    *combiner = v->combiner;
    return MPI_SUCCESS;
}

/* Derived types handed back hold a new reference: the caller frees them
 * with MPI_Type_free, as MPI requires. */
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
int PMPI_Type_get_contents(MPI_Datatype dt, int max_integers, int max_addresses, int max_datatypes, int ints[],
                           MPI_Aint aints[], MPI_Datatype types[])
{
    RANK_HOST_GUARD;
    const char *fn = "MPI_Type_get_contents";
    LOOKUP(v, dt, fn);
    if (v->combiner == MPI_COMBINER_NAMED)
        return core_error_msg(NULL, MPI_ERR_TYPE, fn, "not for predefined datatypes");
    if (max_integers < v->nints || max_addresses < v->naints || max_datatypes < v->ntypes ||
        (v->nints && !ints) || (v->naints && !aints) || (v->ntypes && !types))
        return core_error(NULL, MPI_ERR_ARG, fn);
    if (v->nints)
        memcpy(ints, v->ints, (size_t)v->nints * sizeof *ints);
    if (v->naints)
        memcpy(aints, v->aints, (size_t)v->naints * sizeof *aints);
    for (int i = 0; i < v->ntypes; i++) {
        types[i] = v->types[i];
        dt_retain(types[i]);
    }
    return MPI_SUCCESS;
}
