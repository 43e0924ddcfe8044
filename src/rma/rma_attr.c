/* Window attributes (predefined and keyvals), names, info, error handlers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pt2pt/p2p_api.h"
#include "rma/rma.h"
#include "rma/rma_internal.h"

/* ---- error handlers ---- */

/* User handlers of windows: handles from RMA_ERRH_FIRST, process-wide. */
#define RMA_ERRH_FIRST 0x5700
static MPI_Win_errhandler_function **errh_fns;
static int nerrh;

int rma_win_error(rma_win_t *w, int errclass, const char *fn)
{
    MPI_Errhandler eh = w ? w->errh : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return errclass;
    if (eh >= RMA_ERRH_FIRST && eh < RMA_ERRH_FIRST + nerrh) {
        MPI_Win h = w->handle;
        int code = errclass;
        errh_fns[eh - RMA_ERRH_FIRST](&h, &code, fn);
        return errclass;
    }
    p2p_rank_t *r = p2p_self();
    char msg[512];
    snprintf(msg, sizeof msg, "rank %d: %s: %s (on a window; MPI_ERRORS_ARE_FATAL: ending the job)",
             r ? r->core.world : -1, fn, core_error_name(errclass));
    core_abort_job(errclass, msg);
}

#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    P2P_ENTER(r, "MPI_Win_create_errhandler");
    (void)r;
    if (!fn || !errhandler)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Win_create_errhandler");
    MPI_Win_errhandler_function **t = realloc(errh_fns, (size_t)(nerrh + 1) * sizeof *t);
    if (!t)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Win_create_errhandler");
    errh_fns = t;
    errh_fns[nerrh] = fn;
    *errhandler = RMA_ERRH_FIRST + nerrh++;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    RMA_WIN(w, win, "MPI_Win_set_errhandler");
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN &&
        !(errhandler >= RMA_ERRH_FIRST && errhandler < RMA_ERRH_FIRST + nerrh))
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_set_errhandler");
    w->errh = errhandler;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    RMA_WIN(w, win, "MPI_Win_get_errhandler");
    if (!errhandler)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_get_errhandler");
    *errhandler = w->errh;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    RMA_WIN(w, win, "MPI_Win_call_errhandler");
    rma_win_error(w, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}

/* ---- keyvals and attributes ---- */

typedef struct rma_keyval {
    MPI_Win_copy_attr_function *copy;
    MPI_Win_delete_attr_function *del;
    void *extra;
    bool live;
} rma_keyval_t;

#define RMA_KEYVAL_FIRST 0x5800
static rma_keyval_t *keyvals;
static int nkeyvals;

static rma_keyval_t *keyval_of(int k)
{
    return k >= RMA_KEYVAL_FIRST && k < RMA_KEYVAL_FIRST + nkeyvals && keyvals[k - RMA_KEYVAL_FIRST].live
               ? &keyvals[k - RMA_KEYVAL_FIRST]
               : NULL;
}

#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del, int *keyval,
                           void *extra)
{
    P2P_ENTER(r, "MPI_Win_create_keyval");
    (void)r;
    if (!keyval)
        return core_error(NULL, MPI_ERR_ARG, "MPI_Win_create_keyval");
    rma_keyval_t *t = realloc(keyvals, (size_t)(nkeyvals + 1) * sizeof *t);
    if (!t)
        return core_error(NULL, MPI_ERR_NO_MEM, "MPI_Win_create_keyval");
    keyvals = t;
    keyvals[nkeyvals] = (rma_keyval_t){ copy, del, extra, true };
    *keyval = RMA_KEYVAL_FIRST + nkeyvals++;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
int PMPI_Win_free_keyval(int *keyval)
{
    P2P_ENTER(r, "MPI_Win_free_keyval");
    (void)r;
    int i = keyval ? *keyval - RMA_KEYVAL_FIRST : -1;
    if (i < 0 || i >= nkeyvals)
        return core_error(NULL, MPI_ERR_KEYVAL, "MPI_Win_free_keyval");
    /* Attributes still set keep their delete callback: the entry stays,
     * unusable for new ones.  Freeing it again (a copy of the handle, or a
     * delete callback that frees it) is erroneous but common: it changes
     * nothing, as for communicators' keyvals and in MPICH. */
    keyvals[i].live = false;
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int find_attr(const rma_win_t *w, int keyval)
{
    for (int i = 0; i < w->nattrs; i++)
        if (w->attrs[i].keyval == keyval)
            return i;
    return -1;
}

static int delete_attr(rma_win_t *w, int i)
{
    int k = w->attrs[i].keyval;
    rma_keyval_t *kv = &keyvals[k - RMA_KEYVAL_FIRST];
    if (kv->del) {
        int rc = kv->del(w->handle, k, w->attrs[i].val, kv->extra);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    w->attrs[i] = w->attrs[--w->nattrs];
    return MPI_SUCCESS;
}

void rma_attrs_delete_all(rma_win_t *w)
{
    while (w->nattrs > 0)
        if (delete_attr(w, w->nattrs - 1) != MPI_SUCCESS)
            w->nattrs--; /* a failing callback cannot stop the window from going */
}

#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
int PMPI_Win_set_attr(MPI_Win win, int keyval, void *val)
{
    RMA_WIN(w, win, "MPI_Win_set_attr");
    if (!keyval_of(keyval))
        return rma_win_error(w, MPI_ERR_KEYVAL, "MPI_Win_set_attr");
    int i = find_attr(w, keyval);
    if (i >= 0) {
        int rc = delete_attr(w, i);
        if (rc != MPI_SUCCESS)
            return rma_win_error(w, rc, "MPI_Win_set_attr");
    }
    rma_keyattr_t *t = realloc(w->attrs, (size_t)(w->nattrs + 1) * sizeof *t);
    if (!t)
        return rma_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_set_attr");
    w->attrs = t;
    w->attrs[w->nattrs++] = (rma_keyattr_t){ keyval, val };
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
int PMPI_Win_get_attr(MPI_Win win, int keyval, void *val, int *flag)
{
    RMA_WIN(w, win, "MPI_Win_get_attr");
    if (!val || !flag)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_get_attr");
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE:
        *(void **)val = w->base;
        return MPI_SUCCESS;
    case MPI_WIN_SIZE:
        *(MPI_Aint **)val = &w->wsize;
        return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
        *(int **)val = &w->disp_unit;
        return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
        *(int **)val = &w->flavor;
        return MPI_SUCCESS;
    case MPI_WIN_MODEL:
        *(int **)val = &w->model;
        return MPI_SUCCESS;
    default:
        break;
    }
    if (keyval < RMA_KEYVAL_FIRST || keyval >= RMA_KEYVAL_FIRST + nkeyvals) {
        *flag = 0;
        return rma_win_error(w, MPI_ERR_KEYVAL, "MPI_Win_get_attr");
    }
    int i = find_attr(w, keyval);
    *flag = i >= 0;
    if (i >= 0)
        *(void **)val = w->attrs[i].val;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr
int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    RMA_WIN(w, win, "MPI_Win_delete_attr");
    int i = keyval >= RMA_KEYVAL_FIRST && keyval < RMA_KEYVAL_FIRST + nkeyvals ? find_attr(w, keyval) : -1;
    if (i < 0)
        return rma_win_error(w, MPI_ERR_KEYVAL, "MPI_Win_delete_attr");
    int rc = delete_attr(w, i);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : rma_win_error(w, rc, "MPI_Win_delete_attr");
}

/* ---- names and info ---- */

#pragma weak MPI_Win_set_name = PMPI_Win_set_name
int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    RMA_WIN(w, win, "MPI_Win_set_name");
    if (!name)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_set_name");
    snprintf(w->name, sizeof w->name, "%s", name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_name = PMPI_Win_get_name
int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    RMA_WIN(w, win, "MPI_Win_get_name");
    if (!name || !resultlen)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_get_name");
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_info = PMPI_Win_set_info
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    RMA_WIN(w, win, "MPI_Win_set_info");
    MPI_Info dup = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL) {
        int rc = PMPI_Info_dup(info, &dup);
        if (rc != MPI_SUCCESS)
            return rma_win_error(w, rc, "MPI_Win_set_info");
    }
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    w->info = dup;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_info = PMPI_Win_get_info
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    RMA_WIN(w, win, "MPI_Win_get_info");
    if (!info_used)
        return rma_win_error(w, MPI_ERR_ARG, "MPI_Win_get_info");
    int rc = w->info != MPI_INFO_NULL ? PMPI_Info_dup(w->info, info_used) : PMPI_Info_create(info_used);
    return rc == MPI_SUCCESS ? rc : rma_win_error(w, rc, "MPI_Win_get_info");
}
