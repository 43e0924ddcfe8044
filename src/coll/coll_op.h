/* Reduction operations: predefined kernels and user functions behind one
 * resolved descriptor, looked up once per call so that nothing points into
 * the process-wide op table while a rank is blocked. */
#ifndef AMPI_COLL_OP_H
#define AMPI_COLL_OP_H

#include <stdbool.h>
#include <stddef.h>
#include "mpi.h"
#include "gpu/gpu.h"

/* inout[i] = in[i] op inout[i] for i < count (MPI's operand order). */
typedef void coll_kernel_t(const void *in, void *inout, size_t count);

typedef struct coll_op {
    coll_kernel_t *kernel;   /* predefined op: the kernel for the type */
    MPI_User_function *user; /* user op (kernel == NULL) */
    MPI_User_function_c *user_c; /* ... made by MPI_Op_create_c */
    MPI_Datatype dt;
    bool commute;
} coll_op_t;

/* Kernel of a predefined op for a predefined type; NULL if the pair is
 * not allowed by the standard (coll_op_kernels.c). */
coll_kernel_t *coll_op_kernel(MPI_Op op, MPI_Datatype dt);

/* Fills *out for (op, dt); returns MPI_SUCCESS or MPI_ERR_OP. */
int coll_op_resolve(MPI_Op op, MPI_Datatype dt, coll_op_t *out);

/* inout = in op inout over count elements. */
void coll_op_apply_any(const coll_op_t *o, const void *in, void *inout, size_t count);
/* The same on host memory only: the CPU kernel or the user's function. */
void coll_op_apply_host(const coll_op_t *o, const void *in, void *inout, size_t count);
/* A predefined op on host data (no GPU in use) calls its kernel in line:
 * for the few elements of a latency-bound reduction the call in between
 * cost as much as the kernel. */
static inline void coll_op_apply(const coll_op_t *o, const void *in, void *inout, size_t count)
{
    if (__builtin_expect(!gpu_enabled() && o->kernel != NULL, 1))
        o->kernel(in, inout, count);
    else
        coll_op_apply_any(o, in, inout, count);
}

/* Combines own data *acc with a partner's *other so that the lower-ranked
 * operand is on the left whatever the op (non-commutative user ops, and
 * bitwise-identical floating-point results on every rank).  The result may
 * be computed into *other; the pointers are then swapped so that *acc
 * always holds it and *other is free again. */
static inline void coll_op_combine(const coll_op_t *o, void **acc, void **other, bool other_is_lower,
                                   size_t count)
{
    if (other_is_lower) {
        coll_op_apply(o, *other, *acc, count);
    } else {
        coll_op_apply(o, *acc, *other, count);
        void *t = *acc;
        *acc = *other;
        *other = t;
    }
}

#endif
