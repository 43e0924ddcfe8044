/* Device buffers in the collectives: copies, scratch space and reductions
 * (see coll_dev.h).  Host-only runs never get here: coll.h and coll_op.c
 * test gpu_enabled() first. */
#include "coll/coll.h"
#include "coll/coll_dev.h"
#include "coll/coll_op.h"
#include "gpu/gpu_cuda.h" /* gpu_driver_error_name */

#include <limits.h>
#include <stdlib.h>

void coll_dev_wait(gpu_work_t *w)
{
    while (!gpu_work_done(w))
        p2p_poll();
}

bool coll_dev_agreed(p2p_rank_t *r, core_comm_t *c, bool mine)
{
    if (c->dev_agreed)
        return true;
    uint32_t n = c->dev_asked < UINT32_MAX ? ++c->dev_asked : UINT32_MAX;
    if (n & (n - 1)) /* not a power of two: no agreement on this call */
        return false;
    coll_op_t land;
    int flag = mine, all = 0;
    if (coll_op_resolve(MPI_LAND, MPI_INT, &land) == MPI_SUCCESS &&
        coll_allreduce(r, c, &flag, &all, 1, MPI_INT, &land, COLL_TAG_DEVICE) == MPI_SUCCESS)
        c->dev_agreed = all != 0;
    return c->dev_agreed;
}

void coll_dev_copy(void *dst, const void *src, size_t bytes)
{
    if (!bytes || dst == src)
        return;
    if (!p2p_is_device(dst, bytes) && !p2p_is_device(src, bytes)) {
        memmove(dst, src, bytes); /* host and managed memory: the CPU reaches both */
        return;
    }
    /* the side stream: a collective's own-block copy then runs beside the
     * message copies it overlaps with (on the IPC route the receiver's
     * pull queues on the main stream) instead of holding them up */
    gpu_copy_t gc;
    int rc = gpu_copy_start_side(dst, src, bytes, &gc);
    if (rc)
        util_fatal("collective: device copy of %zu bytes failed to start (cuMemcpyAsync: %s)", bytes,
                   gpu_driver_error_name((CUresult)rc));
    while (!gpu_copy_done(&gc))
        p2p_poll();
}

static bool on_device(const void *p, size_t bytes)
{
    return p && p != MPI_IN_PLACE && p2p_is_device(p, bytes ? bytes : 1);
}

void *coll_scratch(size_t bytes, const void *like)
{
    if (!gpu_enabled() || !on_device(like, 1))
        return coll_host_scratch(bytes);
    return coll_dev_scratch(bytes);
}

void *coll_dev_scratch(size_t bytes)
{
    void *p;
    int rc = gpu_dev_alloc(bytes, &p);
    if (rc)
        util_fatal("out of device memory: %zu bytes of collective scratch space (%s)", bytes,
                   gpu_driver_error_name((CUresult)rc));
    return p;
}

void coll_scratch_free_any(void *p)
{
    if (p && !(gpu_enabled() && gpu_dev_free(p)))
        coll_host_scratch_free(p);
}

/* ---- MPI ops and types -> device kernels ---- */

/* Element kind of a C integer type (S: 1 signed), as in coll_op_kernels.c. */
#define IKIND(T, S)                                                                 \
    (sizeof(T) == 1   ? ((S) ? GPU_EK_I8 : GPU_EK_U8)                              \
     : sizeof(T) == 2 ? ((S) ? GPU_EK_I16 : GPU_EK_U16)                            \
     : sizeof(T) == 4 ? ((S) ? GPU_EK_I32 : GPU_EK_U32)                            \
                      : ((S) ? GPU_EK_I64 : GPU_EK_U64))
/* Stored +1 so that 0 means "no device kernel" (long double types). */
#define K(kind) ((kind) + 1)

static const unsigned char elem_of[AMPI_DATATYPE_PREDEFINED_LAST + 1] = {
    [MPI_CHAR] = K(IKIND(char, CHAR_MIN < 0)),
    [MPI_SIGNED_CHAR] = K(GPU_EK_I8), [MPI_UNSIGNED_CHAR] = K(GPU_EK_U8),
    [MPI_SHORT] = K(IKIND(short, 1)), [MPI_UNSIGNED_SHORT] = K(IKIND(unsigned short, 0)),
    [MPI_INT] = K(IKIND(int, 1)), [MPI_UNSIGNED] = K(IKIND(unsigned, 0)),
    [MPI_LONG] = K(IKIND(long, 1)), [MPI_UNSIGNED_LONG] = K(IKIND(unsigned long, 0)),
    [MPI_LONG_LONG_INT] = K(IKIND(long long, 1)), [MPI_UNSIGNED_LONG_LONG] = K(IKIND(unsigned long long, 0)),
    [MPI_INT8_T] = K(GPU_EK_I8), [MPI_INT16_T] = K(GPU_EK_I16), [MPI_INT32_T] = K(GPU_EK_I32),
    [MPI_INT64_T] = K(GPU_EK_I64), [MPI_UINT8_T] = K(GPU_EK_U8), [MPI_UINT16_T] = K(GPU_EK_U16),
    [MPI_UINT32_T] = K(GPU_EK_U32), [MPI_UINT64_T] = K(GPU_EK_U64),
    [MPI_AINT] = K(IKIND(MPI_Aint, 1)), [MPI_OFFSET] = K(IKIND(MPI_Offset, 1)),
    [MPI_COUNT] = K(IKIND(MPI_Count, 1)), [MPI_INTEGER] = K(GPU_EK_I32),
    [MPI_FLOAT] = K(GPU_EK_F32), [MPI_REAL] = K(GPU_EK_F32),
    [MPI_DOUBLE] = K(GPU_EK_F64), [MPI_DOUBLE_PRECISION] = K(GPU_EK_F64),
    [MPI_C_FLOAT_COMPLEX] = K(GPU_EK_CF32), [MPI_COMPLEX] = K(GPU_EK_CF32),
    [MPI_C_DOUBLE_COMPLEX] = K(GPU_EK_CF64), [MPI_DOUBLE_COMPLEX] = K(GPU_EK_CF64),
    [MPI_C_BOOL] = K(GPU_EK_BOOL), [MPI_LOGICAL] = K(GPU_EK_U32), [MPI_BYTE] = K(GPU_EK_U8),
    [MPI_FLOAT_INT] = K(GPU_EK_FLOAT_INT), [MPI_DOUBLE_INT] = K(GPU_EK_DOUBLE_INT),
    [MPI_LONG_INT] = K(GPU_EK_LONG_INT), [MPI_2INT] = K(GPU_EK_2INT), [MPI_2INTEGER] = K(GPU_EK_2INT),
    [MPI_SHORT_INT] = K(GPU_EK_SHORT_INT), [MPI_2REAL] = K(GPU_EK_2FLOAT),
    [MPI_2DOUBLE_PRECISION] = K(GPU_EK_2DOUBLE),
    [MPI_CXX_BOOL] = K(GPU_EK_BOOL), [MPI_CXX_FLOAT_COMPLEX] = K(GPU_EK_CF32),
    [MPI_CXX_DOUBLE_COMPLEX] = K(GPU_EK_CF64),
    [MPI_INTEGER1] = K(GPU_EK_I8), [MPI_INTEGER2] = K(GPU_EK_I16), [MPI_INTEGER4] = K(GPU_EK_I32),
    [MPI_INTEGER8] = K(GPU_EK_I64), [MPI_REAL4] = K(GPU_EK_F32), [MPI_REAL8] = K(GPU_EK_F64),
    [MPI_COMPLEX8] = K(GPU_EK_CF32), [MPI_COMPLEX16] = K(GPU_EK_CF64),
};

static const signed char op_of[MPI_MINLOC + 1] = {
    [0] = -1, [MPI_MAX] = GPU_OP_MAX, [MPI_MIN] = GPU_OP_MIN, [MPI_SUM] = GPU_OP_SUM,
    [MPI_PROD] = GPU_OP_PROD, [MPI_LAND] = GPU_OP_LAND, [MPI_BAND] = GPU_OP_BAND, [MPI_LOR] = GPU_OP_LOR,
    [MPI_BOR] = GPU_OP_BOR, [MPI_LXOR] = GPU_OP_LXOR, [MPI_BXOR] = GPU_OP_BXOR,
    [MPI_MAXLOC] = GPU_OP_MAXLOC, [MPI_MINLOC] = GPU_OP_MINLOC,
};

int coll_dev_elem(MPI_Datatype dt)
{
    return dt_valid(dt) && dt >= 0 && dt <= AMPI_DATATYPE_PREDEFINED_LAST ? (int)elem_of[dt] - 1 : -1;
}

/* The kernel of a resolved predefined op; false for user ops and types
 * without a device representation.  coll_op_t keeps only the CPU kernel, so
 * the op is found again by comparing kernels (each op of a type has its
 * own). */
static bool device_pair(const coll_op_t *o, gpu_op_t *op, gpu_elem_t *elem)
{
    int e = coll_dev_elem(o->dt);
    if (!o->kernel || e < 0)
        return false;
    for (MPI_Op h = MPI_MAX; h <= MPI_MINLOC; h++) {
        if (coll_op_kernel(h, o->dt) != o->kernel)
            continue;
        *op = (gpu_op_t)op_of[h];
        /* only MIN and MAX read the sign: the others share the unsigned kernels */
        if (*op != GPU_OP_MIN && *op != GPU_OP_MAX && e <= GPU_EK_U64 && !(e & 1))
            e += 1;
        *elem = (gpu_elem_t)e;
        return true;
    }
    return false;
}

/* The kernel of the pair on this process's GPU: false for user ops and
 * long double types, and where no kernel can run (a library built without
 * nvcc, a module that failed to load or lacks the pair). */
static bool device_kernel(const coll_op_t *o, gpu_op_t *op, gpu_elem_t *elem)
{
    return device_pair(o, op, elem) && gpu_reduce_check(*op, *elem) == GPU_REDUCE_OK;
}

bool coll_dev_kernel_for(MPI_Op op, MPI_Datatype dt, gpu_op_t *gop, gpu_elem_t *elem)
{
    coll_op_t o;
    return gpu_enabled() && coll_op_resolve(op, dt, &o) == MPI_SUCCESS && device_kernel(&o, gop, elem);
}

/* An op without a device kernel: the device operands are copied to host
 * memory, the CPU runs the op (the user's function sees host memory, as it
 * expects), and the result goes back.  Each rank of a collective decides
 * this alone, for its own data: the messages of the algorithm stay the
 * same, so ranks whose buffers or GPUs differ still meet. */
static void apply_on_host(const coll_op_t *o, const void *in, void *inout, size_t count, size_t bytes, bool din,
                          bool dio)
{
    void *hin = din ? coll_host_scratch(bytes) : NULL, *hio = dio ? coll_host_scratch(bytes) : NULL;
    if (din)
        coll_dev_copy(hin, in, bytes);
    if (dio)
        coll_dev_copy(hio, inout, bytes);
    coll_op_apply_host(o, din ? hin : in, dio ? hio : inout, count);
    if (dio)
        coll_dev_copy(inout, hio, bytes);
    coll_host_scratch_free(hin);
    coll_host_scratch_free(hio);
}

bool coll_dev_apply(const coll_op_t *o, const void *in, void *inout, size_t count)
{
    size_t bytes = coll_bytes(count, o->dt);
    bool din = on_device(in, bytes), dio = on_device(inout, bytes);
    if (!din && !dio)
        return false;
    gpu_op_t op;
    gpu_elem_t elem;
    if (!device_kernel(o, &op, &elem)) {
        apply_on_host(o, in, inout, count, bytes, din, dio);
        return true;
    }
    /* a host operand (mixed buffers) is staged in device scratch */
    void *stage = din && dio ? NULL : coll_scratch(bytes, din ? in : inout);
    const void *a = in;
    void *b = inout;
    if (!din) {
        coll_dev_copy(stage, in, bytes);
        a = stage;
    } else if (!dio) {
        coll_dev_copy(stage, inout, bytes);
        b = stage;
    }
    gpu_work_t w;
    int rc = gpu_reduce_start(op, elem, a, b, count, &w);
    if (rc)
        util_fatal("collective: device reduction of %zu elements failed to start (CUDA error %d)", count, rc);
    coll_dev_wait(&w);
    if (!dio)
        coll_dev_copy(inout, b, bytes);
    coll_scratch_free(stage);
    return true;
}
