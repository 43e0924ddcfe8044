/* Reduction-op handles: the predefined ops (kernels in coll_op_kernels.c)
 * and a process-wide table of user ops.  Ranks of one process share the
 * table; they are user-level threads of one OS thread and never switch
 * inside these functions, so it needs no lock.  User op handles start at
 * USER_BASE, above every predefined op. */
#include "coll/coll.h"
#include "coll/coll_op.h"

#include <limits.h>
#include <stdlib.h>

enum { USER_BASE = 32 };

typedef struct user_op {
    MPI_User_function *fn; /* NULL (and fn_c NULL): free slot */
    MPI_User_function_c *fn_c; /* MPI_Op_create_c's, taking an MPI_Count length */
    bool commute;
} user_op_t;

static user_op_t *user_ops;
static int user_cap;

static const user_op_t *user_lookup(MPI_Op op)
{
    int i = op - USER_BASE;
    if (i < 0 || i >= user_cap || (!user_ops[i].fn && !user_ops[i].fn_c))
        return NULL;
    return &user_ops[i];
}

int coll_op_resolve(MPI_Op op, MPI_Datatype dt, coll_op_t *out)
{
    out->dt = dt;
    out->kernel = NULL;
    out->user = NULL;
    out->user_c = NULL;
    out->commute = true;
    const user_op_t *u = user_lookup(op);
    if (u) {
        out->user = u->fn;
        out->user_c = u->fn_c;
        out->commute = u->commute;
        return MPI_SUCCESS;
    }
    MPI_Datatype base = dt_is_predefined(dt) ? MPI_DATATYPE_NULL : dt_f90_base(dt);
    if (base != MPI_DATATYPE_NULL) /* MPI_Type_create_f90_*: predefined for the ops */
        out->dt = base;
    out->kernel = coll_op_kernel(op, out->dt);
    return out->kernel ? MPI_SUCCESS : MPI_ERR_OP;
}

void coll_op_apply_any(const coll_op_t *o, const void *in, void *inout, size_t count)
{
    if (UTIL_UNLIKELY(gpu_enabled()) && coll_dev_apply(o, in, inout, count))
        return; /* an operand in device memory: a kernel on its GPU, or host copies */
    coll_op_apply_host(o, in, inout, count);
}

void coll_op_apply_host(const coll_op_t *o, const void *in, void *inout, size_t count)
{
    if (o->kernel) {
        o->kernel(in, inout, count);
        return;
    }
    MPI_Datatype dt = o->dt;
    if (o->user_c) {
        MPI_Count len = (MPI_Count)count;
        o->user_c((void *)in, inout, &len, &dt);
        return;
    }
    /* a user function takes an int length: call it in pieces */
    size_t elem = (size_t)dt_extent(o->dt);
    while (count) {
        int len = count > (size_t)INT_MAX ? INT_MAX : (int)count;
        o->user((void *)in, inout, &len, &dt);
        in = (const char *)in + (size_t)len * elem;
        inout = (char *)inout + (size_t)len * elem;
        count -= (size_t)len;
    }
}

/* A new user op of either form; returns MPI_SUCCESS or an error class. */
static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    if ((!fn && !fn_c) || !op)
        return MPI_ERR_ARG;
    int i = 0;
    while (i < user_cap && (user_ops[i].fn || user_ops[i].fn_c))
        i++;
    if (i == user_cap) {
        int cap = user_cap ? 2 * user_cap : 16;
        user_op_t *t = realloc(user_ops, (size_t)cap * sizeof *t);
        if (!t)
            return MPI_ERR_NO_MEM;
        for (int k = user_cap; k < cap; k++)
            t[k].fn = NULL, t[k].fn_c = NULL;
        user_ops = t;
        user_cap = cap;
    }
    user_ops[i] = (user_op_t){ fn, fn_c, commute != 0 };
    *op = USER_BASE + i;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_create = PMPI_Op_create
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    P2P_ENTER(r, "MPI_Op_create");
    (void)r;
    int err = op_create(user_fn, NULL, commute, op);
    return err ? core_error(NULL, err, "MPI_Op_create") : MPI_SUCCESS;
}

#pragma weak MPI_Op_create_c = PMPI_Op_create_c
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    P2P_ENTER(r, "MPI_Op_create_c");
    (void)r;
    int err = op_create(NULL, user_fn, commute, op);
    return err ? core_error(NULL, err, "MPI_Op_create_c") : MPI_SUCCESS;
}

#pragma weak MPI_Op_free = PMPI_Op_free
int PMPI_Op_free(MPI_Op *op)
{
    P2P_ENTER(r, "MPI_Op_free");
    (void)r;
    if (!op || !user_lookup(*op))
        return core_error(NULL, MPI_ERR_OP, "MPI_Op_free");
    user_ops[*op - USER_BASE].fn = NULL;
    user_ops[*op - USER_BASE].fn_c = NULL;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_commutative = PMPI_Op_commutative
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    P2P_ENTER(r, "MPI_Op_commutative");
    (void)r;
    const user_op_t *u = user_lookup(op);
    if (!commute || (!u && (op < MPI_MAX || op > MPI_NO_OP)))
        return core_error(NULL, commute ? MPI_ERR_OP : MPI_ERR_ARG, "MPI_Op_commutative");
    *commute = u ? u->commute : 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Reduce_local = PMPI_Reduce_local
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    P2P_ENTER(r, "MPI_Reduce_local");
    (void)r;
    if (UTIL_UNLIKELY(coll_nc_type(datatype))) { /* coll_noncontig_red.c */
        int nerr = coll_nc_reduce_local(inbuf, inoutbuf, count, datatype, op);
        return nerr ? core_error(NULL, nerr, "MPI_Reduce_local") : MPI_SUCCESS;
    }
    int err = coll_check_buf(inbuf, count, datatype);
    if (!err)
        err = coll_check_buf(inoutbuf, count, datatype);
    coll_op_t o;
    if (!err)
        err = coll_op_resolve(op, datatype, &o);
    if (err)
        return core_error(NULL, err, "MPI_Reduce_local");
    if (count)
        coll_op_apply(&o, inbuf, inoutbuf, (size_t)count);
    return MPI_SUCCESS;
}
