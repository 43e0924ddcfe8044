/* Keyvals and cached attributes of communicators.
 *
 * Keyvals are per rank like every handle: ranks that create their keyvals
 * in the same order get the same numbers, as separate processes would.
 * Callbacks may call MPI, even on the same communicator's attributes, so no
 * pointer into an attribute array is kept across a callback. */
#include "comm/comm_internal.h"

#include <stdlib.h>
#include <string.h>

/* Values of the predefined attributes; MPI hands out pointers to them. */
static const int attr_tag_ub = P2P_TAG_UB;
static const int attr_host = MPI_PROC_NULL;
static const int attr_io = MPI_ANY_SOURCE;
static const int attr_wtime_is_global = 0;
int comm_attr_lastusedcode = MPI_ERR_LASTCODE;
static const int attr_appnum = 0;

/* The predefined attributes, on every communicator; NULL if `keyval` is
 * not one of them. */
static const int *predefined_attr(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: return &attr_tag_ub;
    case MPI_HOST: return &attr_host;
    case MPI_IO: return &attr_io;
    case MPI_WTIME_IS_GLOBAL: return &attr_wtime_is_global;
    case MPI_UNIVERSE_SIZE: return &core_proc.nranks;
    case MPI_LASTUSEDCODE: return &comm_attr_lastusedcode;
    case MPI_APPNUM: return &attr_appnum;
    default: return NULL;
    }
}

/* The keyval behind a user handle, or NULL.  `even_freed`: also one whose
 * handle was freed while attributes still use it. */
static comm_keyval_t *keyval_get(core_comm_state_t *s, int keyval, bool even_freed)
{
    int k = keyval - COMM_KEYVAL_FIRST;
    if (k < 0 || k >= s->nkeyvals || !s->keyvals[k])
        return NULL;
    return even_freed || !s->keyvals[k]->freed ? s->keyvals[k] : NULL;
}

void comm_keyval_release(core_comm_state_t *s, int keyval)
{
    int k = keyval - COMM_KEYVAL_FIRST;
    if (--s->keyvals[k]->refs == 0) {
        free(s->keyvals[k]);
        s->keyvals[k] = NULL;
    }
}

static int find_attr(const core_comm_t *c, int keyval)
{
    for (int i = 0; i < c->nattrs; i++)
        if (c->attrs[i].keyval == keyval)
            return i;
    return -1;
}

/* Appends (keyval, val) to c; the keyval gains a reference. */
static int add_attr(core_comm_state_t *s, core_comm_t *c, int keyval, void *val)
{
    if (c->nattrs == c->attr_cap) {
        int cap = c->attr_cap ? 2 * c->attr_cap : 4;
        comm_attr_t *a = realloc(c->attrs, (size_t)cap * sizeof *a);
        if (!a)
            return MPI_ERR_NO_MEM;
        c->attrs = a;
        c->attr_cap = cap;
    }
    c->attrs[c->nattrs++] = (comm_attr_t){ keyval, val };
    keyval_get(s, keyval, true)->refs++;
    return MPI_SUCCESS;
}

static void remove_attr(core_comm_t *c, int i)
{
    memmove(&c->attrs[i], &c->attrs[i + 1], (size_t)(c->nattrs - i - 1) * sizeof *c->attrs);
    c->nattrs--;
}

/* A callback's return value as an error class. */
static int callback_err(int rc)
{
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    return rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER;
}

/* Runs the delete callback of (keyval, val) on c. */
static int run_delete(core_comm_state_t *s, core_comm_t *c, int keyval, void *val)
{
    comm_keyval_t *kv = keyval_get(s, keyval, true);
    if (!kv->del)
        return MPI_SUCCESS;
    return callback_err(kv->del(c->handle, keyval, val, kv->extra));
}

/* Removes c's attribute `keyval` (if set) through its delete callback.  The
 * entry leaves the array first (a callback that deletes it again finds
 * nothing); if the callback fails it comes back at its place, since the
 * call that ran the callback fails (MPI 3.1 6.7.2) -- a replacing set or
 * MPI_Comm_free must not lose it. */
static int delete_attr(core_comm_state_t *s, core_comm_t *c, int keyval)
{
    int i = find_attr(c, keyval);
    if (i < 0)
        return MPI_SUCCESS;
    void *val = c->attrs[i].val;
    remove_attr(c, i);
    int err = run_delete(s, c, keyval, val);
    if (err) {
        int back = add_attr(s, c, keyval, val);
        if (back)
            err = back;
        else if (i < c->nattrs - 1) { /* back to its place among the others */
            comm_attr_t a = c->attrs[c->nattrs - 1];
            memmove(&c->attrs[i + 1], &c->attrs[i], (size_t)(c->nattrs - 1 - i) * sizeof *c->attrs);
            c->attrs[i] = a;
        }
    }
    comm_keyval_release(s, keyval);
    return err;
}

int comm_attr_delete_all(core_comm_state_t *s, core_comm_t *c)
{
    while (c->nattrs > 0) {
        int err = delete_attr(s, c, c->attrs[c->nattrs - 1].keyval);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

int comm_attr_copy_all(core_comm_state_t *s, core_comm_t *oldc, core_comm_t *newc)
{
    /* a snapshot: the callbacks may change oldc's attributes */
    int n = oldc->nattrs;
    if (n == 0)
        return MPI_SUCCESS;
    comm_attr_t *snap = malloc((size_t)n * sizeof *snap);
    if (!snap)
        return MPI_ERR_NO_MEM;
    memcpy(snap, oldc->attrs, (size_t)n * sizeof *snap);
    int err = MPI_SUCCESS;
    for (int i = 0; i < n && !err; i++) {
        comm_keyval_t *kv = keyval_get(s, snap[i].keyval, true);
        if (!kv || !kv->copy) /* deleted meanwhile, or no copy function */
            continue;
        void *out = NULL;
        int flag = 0;
        err = callback_err(kv->copy(oldc->handle, snap[i].keyval, kv->extra, snap[i].val, &out, &flag));
        if (!err && flag)
            err = add_attr(s, newc, snap[i].keyval, out);
    }
    free(snap);
    return err;
}

/* ---- predefined callbacks ---- */

int AMPI_Comm_null_copy_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                           void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra_state, (void)attribute_val_in, (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int AMPI_Comm_dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int AMPI_Comm_null_delete_fn(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    (void)comm, (void)keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

/* ---- keyvals ---- */

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    COMM_ENTER(r, s, "MPI_Comm_create_keyval");
    if (!comm_keyval)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval");
    int k = 0;
    while (k < s->nkeyvals && s->keyvals[k])
        k++;
    comm_keyval_t *kv = malloc(sizeof *kv);
    comm_keyval_t **tab = kv ? comm_grow(s->keyvals, &s->nkeyvals, k + 1, sizeof *tab) : NULL;
    if (!tab) {
        free(kv);
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_keyval");
    }
    s->keyvals = tab;
    *kv = (comm_keyval_t){ .copy = comm_copy_attr_fn, .del = comm_delete_attr_fn, .extra = extra_state,
                           .refs = 1 };
    tab[k] = kv;
    *comm_keyval = COMM_KEYVAL_FIRST + k;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    COMM_ENTER(r, s, "MPI_Comm_free_keyval");
    comm_keyval_t *kv = comm_keyval ? keyval_get(s, *comm_keyval, true) : NULL;
    if (!kv)
        return core_error(NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
    /* Freeing again a keyval that attributes still keep alive (a copy of the
     * handle, or a delete callback that frees it) is erroneous but common:
     * it changes nothing, as in MPICH. */
    if (!kv->freed) {
        kv->freed = true;
        comm_keyval_release(s, *comm_keyval);
    }
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int PMPI_Keyval_free(int *keyval) { return PMPI_Comm_free_keyval(keyval); }

/* ---- attributes ---- */

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    COMM_ENTER(r, s, "MPI_Comm_set_attr");
    COMM_GET(c, s, comm, "MPI_Comm_set_attr");
    if (!keyval_get(s, comm_keyval, false)) /* includes the predefined keys */
        return core_error(c, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    /* a value already there is deleted first, callback included */
    int err = delete_attr(s, c, comm_keyval);
    if (!err)
        err = add_attr(s, c, comm_keyval, attribute_val);
    return err ? core_error(c, err, "MPI_Comm_set_attr") : MPI_SUCCESS;
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    COMM_ENTER(r, s, "MPI_Comm_get_attr");
    COMM_GET(c, s, comm, "MPI_Comm_get_attr");
    if (!attribute_val || !flag)
        return core_error(c, MPI_ERR_ARG, "MPI_Comm_get_attr");
    const int *pre = predefined_attr(comm_keyval);
    if (pre) {
        *(const int **)attribute_val = pre;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!keyval_get(s, comm_keyval, true))
        return core_error(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
    int i = find_attr(c, comm_keyval);
    *flag = i >= 0;
    if (i >= 0)
        *(void **)attribute_val = c->attrs[i].val;
    return MPI_SUCCESS;
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

/* Deleting an attribute that is not set is not an error. */
#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    COMM_ENTER(r, s, "MPI_Comm_delete_attr");
    COMM_GET(c, s, comm, "MPI_Comm_delete_attr");
    if (!keyval_get(s, comm_keyval, true))
        return core_error(c, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    int err = delete_attr(s, c, comm_keyval);
    return err ? core_error(c, err, "MPI_Comm_delete_attr") : MPI_SUCCESS;
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return PMPI_Comm_delete_attr(comm, keyval); }
