/* Keyvals and cached attributes of datatypes (MPI 3.1 6.7.4).
 *
 * Datatype handles are process-wide, predefined ones shared by every rank
 * of the process, so attributes do not live in the type: a process-wide
 * list holds (rank, type, keyval, value), and a rank sees only its own
 * entries -- what separate processes would see.  Keyvals are process-wide
 * too, numbered from DT_KEYVAL_FIRST so that a communicator's keyval is
 * never taken for a datatype's (MPI_ERR_KEYVAL).  The ranks of a process
 * run on one PE and switch only inside MPI calls: no locks.
 *
 * Callbacks may call MPI, on the same type's attributes too, so no index
 * into the list is kept across a callback.  A delete callback that fails
 * (when the attribute is deleted, replaced, or its type freed) leaves the
 * attribute in place, as the call that ran it fails. */
#include "core/core_rank.h"
#include "datatype/dt_internal.h"
#include "rank/rank_host.h"

#include <stdlib.h>
#include <string.h>

#define DT_KEYVAL_FIRST 0x4000

typedef struct dt_keyval {
    MPI_Type_copy_attr_function *copy;
    MPI_Type_delete_attr_function *del;
    void *extra;
    int refs;   /* the handle (until freed) + attributes that use it */
    bool freed; /* MPI_Type_free_keyval'd: unusable for new attributes */
} dt_keyval_t;

typedef struct dt_attr {
    int world;
    MPI_Datatype type;
    int keyval;
    void *val;
} dt_attr_t;

static dt_keyval_t **keyvals; /* by keyval - DT_KEYVAL_FIRST */
static int nkeyvals;
static dt_attr_t *attrs; /* in the order they were set */
static int nattrs, attr_cap;

static dt_keyval_t *keyval_get(int keyval, bool even_freed)
{
    int k = keyval - DT_KEYVAL_FIRST;
    if (k < 0 || k >= nkeyvals || !keyvals[k])
        return NULL;
    return even_freed || !keyvals[k]->freed ? keyvals[k] : NULL;
}

static void keyval_release(int keyval)
{
    int k = keyval - DT_KEYVAL_FIRST;
    if (--keyvals[k]->refs == 0) {
        free(keyvals[k]);
        keyvals[k] = NULL;
    }
}

static int find_attr(int world, MPI_Datatype type, int keyval)
{
    for (int i = 0; i < nattrs; i++)
        if (attrs[i].world == world && attrs[i].type == type && attrs[i].keyval == keyval)
            return i;
    return -1;
}

/* Inserts at position `at` (nattrs: appends); the keyval gains a reference. */
static int insert_attr(int at, int world, MPI_Datatype type, int keyval, void *val)
{
    if (nattrs == attr_cap) {
        int cap = attr_cap ? 2 * attr_cap : 16;
        dt_attr_t *a = realloc(attrs, (size_t)cap * sizeof *a);
        if (!a)
            return MPI_ERR_NO_MEM;
        attrs = a;
        attr_cap = cap;
    }
    memmove(&attrs[at + 1], &attrs[at], (size_t)(nattrs - at) * sizeof *attrs);
    attrs[at] = (dt_attr_t){ world, type, keyval, val };
    nattrs++;
    keyval_get(keyval, true)->refs++;
    return MPI_SUCCESS;
}

static void remove_attr(int i)
{
    memmove(&attrs[i], &attrs[i + 1], (size_t)(nattrs - i - 1) * sizeof *attrs);
    nattrs--;
}

/* A callback's return value as an error class. */
static int callback_err(int rc)
{
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    return rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER;
}

/* Deletes the attribute (if set) through its delete callback.  The entry
 * leaves the list first (a callback that deletes it again finds nothing)
 * and comes back at its place if the callback fails. */
static int delete_attr(int world, MPI_Datatype type, int keyval)
{
    int i = find_attr(world, type, keyval);
    if (i < 0)
        return MPI_SUCCESS;
    void *val = attrs[i].val;
    remove_attr(i);
    dt_keyval_t *kv = keyval_get(keyval, true);
    int err = kv->del ? callback_err(kv->del(type, keyval, val, kv->extra)) : MPI_SUCCESS;
    if (err) {
        int back = insert_attr(i <= nattrs ? i : nattrs, world, type, keyval, val);
        if (back)
            err = back;
    }
    keyval_release(keyval);
    return err;
}

int dt_attr_delete_all(MPI_Datatype type)
{
    core_rank_t *r = core_self();
    int world = r ? r->world : -1;
    for (int i = nattrs - 1; i >= 0; i--) {
        if (i >= nattrs || attrs[i].world != world || attrs[i].type != type)
            continue;
        int err = delete_attr(world, type, attrs[i].keyval);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

int dt_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype)
{
    core_rank_t *r = core_self();
    int world = r ? r->world : -1;
    /* a snapshot: the callbacks may change the list */
    int n = 0;
    for (int i = 0; i < nattrs; i++)
        n += attrs[i].world == world && attrs[i].type == oldtype;
    if (n == 0)
        return MPI_SUCCESS;
    dt_attr_t *snap = malloc((size_t)n * sizeof *snap);
    if (!snap)
        return MPI_ERR_NO_MEM;
    for (int i = 0, k = 0; i < nattrs; i++)
        if (attrs[i].world == world && attrs[i].type == oldtype)
            snap[k++] = attrs[i];
    int err = MPI_SUCCESS;
    for (int i = 0; i < n && !err; i++) {
        dt_keyval_t *kv = keyval_get(snap[i].keyval, true);
        if (!kv || !kv->copy)
            continue;
        void *out = NULL;
        int flag = 0;
        err = callback_err(kv->copy(oldtype, snap[i].keyval, kv->extra, snap[i].val, &out, &flag));
        if (!err && flag)
            err = insert_attr(nattrs, world, newtype, snap[i].keyval, out);
    }
    free(snap);
    if (err) /* no half-copied type: what was copied goes */
        dt_attr_delete_all(newtype);
    return err;
}

/* The calling rank, or NULL after the "not initialized" error. */
#define DT_ENTER(R, fn) RANK_HOST_GUARD; CORE_ENTER(R, fn) /* library mode: one call at a time */

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    DT_ENTER(r, "MPI_Type_create_keyval");
    (void)r;
    if (!type_keyval)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_create_keyval");
    int k = 0;
    while (k < nkeyvals && keyvals[k])
        k++;
    dt_keyval_t *kv = malloc(sizeof *kv);
    if (kv && k == nkeyvals) {
        dt_keyval_t **tab = realloc(keyvals, (size_t)(nkeyvals + 16) * sizeof *tab);
        if (tab) {
            memset(tab + nkeyvals, 0, 16 * sizeof *tab);
            keyvals = tab;
            nkeyvals += 16;
        }
    }
    if (!kv || k >= nkeyvals) {
        free(kv);
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Type_create_keyval");
    }
    *kv = (dt_keyval_t){ .copy = type_copy_attr_fn, .del = type_delete_attr_fn, .extra = extra_state, .refs = 1 };
    keyvals[k] = kv;
    *type_keyval = DT_KEYVAL_FIRST + k;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
int PMPI_Type_free_keyval(int *type_keyval)
{
    DT_ENTER(r, "MPI_Type_free_keyval");
    (void)r;
    dt_keyval_t *kv = type_keyval ? keyval_get(*type_keyval, true) : NULL;
    if (!kv)
        return core_error(NULL, MPI_ERR_KEYVAL, "MPI_Type_free_keyval");
    if (!kv->freed) { /* freeing again one that attributes keep alive changes nothing (comm_attr.c) */
        kv->freed = true;
        keyval_release(*type_keyval);
    }
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
int PMPI_Type_set_attr(MPI_Datatype type, int type_keyval, void *attribute_val)
{
    DT_ENTER(r, "MPI_Type_set_attr");
    if (!dt_view(type))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Type_set_attr");
    if (!keyval_get(type_keyval, false))
        return core_error(NULL, MPI_ERR_KEYVAL, "MPI_Type_set_attr");
    /* a value already there is deleted first, callback included */
    int err = delete_attr(r->world, type, type_keyval);
    if (!err)
        err = insert_attr(nattrs, r->world, type, type_keyval, attribute_val);
    return err ? core_error(NULL, err, "MPI_Type_set_attr") : MPI_SUCCESS;
}

#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
int PMPI_Type_get_attr(MPI_Datatype type, int type_keyval, void *attribute_val, int *flag)
{
    DT_ENTER(r, "MPI_Type_get_attr");
    if (!dt_view(type))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_attr");
    if (!attribute_val || !flag)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Type_get_attr");
    if (!keyval_get(type_keyval, true))
        return core_error(NULL, MPI_ERR_KEYVAL, "MPI_Type_get_attr");
    int i = find_attr(r->world, type, type_keyval);
    *flag = i >= 0;
    if (i >= 0)
        *(void **)attribute_val = attrs[i].val;
    return MPI_SUCCESS;
}

/* Deleting an attribute that is not set is not an error. */
#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
int PMPI_Type_delete_attr(MPI_Datatype type, int type_keyval)
{
    DT_ENTER(r, "MPI_Type_delete_attr");
    if (!dt_view(type))
        return core_error(NULL, MPI_ERR_TYPE, "MPI_Type_delete_attr");
    if (!keyval_get(type_keyval, true))
        return core_error(NULL, MPI_ERR_KEYVAL, "MPI_Type_delete_attr");
    int err = delete_attr(r->world, type, type_keyval);
    return err ? core_error(NULL, err, "MPI_Type_delete_attr") : MPI_SUCCESS;
}
