/* NCCL through dlopen (see gpu_nccl.h): a machine without NCCL, or a build
 * without it, runs the same library; the collectives then take their
 * kernel path. */
#include "gpu/gpu_internal.h"
#include "gpu/gpu_nccl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#if defined(HAVE_CUDA_H) && defined(__has_include)
#if __has_include(<nccl.h>)
#include <nccl.h>
_Static_assert(GPU_NCCL_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "nccl.h");
_Static_assert(GPU_NCCL_INT8 == (int)ncclInt8 && GPU_NCCL_UINT8 == (int)ncclUint8, "nccl.h");
_Static_assert(GPU_NCCL_INT32 == (int)ncclInt32 && GPU_NCCL_UINT32 == (int)ncclUint32, "nccl.h");
_Static_assert(GPU_NCCL_INT64 == (int)ncclInt64 && GPU_NCCL_UINT64 == (int)ncclUint64, "nccl.h");
_Static_assert(GPU_NCCL_FLOAT16 == (int)ncclFloat16 && GPU_NCCL_FLOAT32 == (int)ncclFloat32, "nccl.h");
_Static_assert(GPU_NCCL_FLOAT64 == (int)ncclFloat64, "nccl.h");
_Static_assert(GPU_NCCL_SUM == (int)ncclSum && GPU_NCCL_PROD == (int)ncclProd, "nccl.h");
_Static_assert(GPU_NCCL_MAX == (int)ncclMax && GPU_NCCL_MIN == (int)ncclMin, "nccl.h");
#endif
#endif

/* ncclResult_t is an int-sized enum; handles and streams are pointers; the
 * unique id is passed by value as a 128-byte struct. */
typedef int nccl_result_t;
typedef struct {
    char internal[GPU_NCCL_ID_BYTES];
} nccl_id_t;
typedef void *nccl_comm_t;

static struct {
    nccl_result_t (*GetUniqueId)(nccl_id_t *id);
    nccl_result_t (*CommInitRank)(nccl_comm_t *comm, int nranks, nccl_id_t id, int rank);
    nccl_result_t (*CommDestroy)(nccl_comm_t comm);
    nccl_result_t (*CommGetAsyncError)(nccl_comm_t comm, nccl_result_t *err);
    const char *(*GetErrorString)(nccl_result_t r);
    nccl_result_t (*AllReduce)(const void *s, void *r, size_t n, int type, int op, nccl_comm_t c, void *st);
    nccl_result_t (*Reduce)(const void *s, void *r, size_t n, int type, int op, int root, nccl_comm_t c,
                            void *st);
    nccl_result_t (*Broadcast)(const void *s, void *r, size_t n, int type, int root, nccl_comm_t c, void *st);
    nccl_result_t (*AllGather)(const void *s, void *r, size_t n, int type, nccl_comm_t c, void *st);
    nccl_result_t (*ReduceScatter)(const void *s, void *r, size_t n, int type, int op, nccl_comm_t c, void *st);
} nccl;

#define NCCL_ENTRY(field) { "nccl" #field, offsetof(__typeof__(nccl), field) }
static const struct {
    const char *symbol;
    size_t offset;
} entries[] = {
    NCCL_ENTRY(GetUniqueId), NCCL_ENTRY(CommInitRank), NCCL_ENTRY(CommDestroy), NCCL_ENTRY(CommGetAsyncError),
    NCCL_ENTRY(GetErrorString), NCCL_ENTRY(AllReduce), NCCL_ENTRY(Reduce), NCCL_ENTRY(Broadcast),
    NCCL_ENTRY(AllGather), NCCL_ENTRY(ReduceScatter),
};

static int state; /* 0 not tried, 1 loaded, -1 absent */

bool gpu_nccl_load(void)
{
    if (state)
        return state > 0;
    state = -1;
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
    __typeof__(nccl) table;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *sym = dlsym(lib, entries[i].symbol);
        if (!sym) {
            fprintf(stderr, "ampi: libnccl.so.2 lacks %s: NCCL not used\n", entries[i].symbol);
            return false;
        }
        memcpy((char *)&table + entries[i].offset, &sym, sizeof sym);
    }
    nccl = table;
    state = 1;
    return true;
}

static int complain(const char *call, nccl_result_t r)
{
    fprintf(stderr, "ampi: %s failed: %s (%d)\n", call, nccl.GetErrorString ? nccl.GetErrorString(r) : "?", r);
    return -1;
}

int gpu_nccl_unique_id(void *id)
{
    nccl_id_t v;
    nccl_result_t r = nccl.GetUniqueId(&v);
    if (r != 0)
        return complain("ncclGetUniqueId", r);
    memcpy(id, &v, sizeof v);
    return 0;
}

int gpu_nccl_comm_init(gpu_nccl_comm_t **comm, int nranks, const void *id, int rank)
{
    nccl_id_t v;
    memcpy(&v, id, sizeof v);
    CUcontext prev;
    int e = gpu_ctx_enter(&prev); /* NCCL takes the device of the current context */
    if (e) {
        fprintf(stderr, "ampi: ncclCommInitRank: cannot make the context current (%d)\n", e);
        return -1;
    }
    nccl_comm_t c = NULL;
    nccl_result_t r = nccl.CommInitRank(&c, nranks, v, rank);
    gpu_ctx_leave(prev);
    if (r != 0)
        return complain("ncclCommInitRank", r);
    *comm = (gpu_nccl_comm_t *)c;
    return 0;
}

void gpu_nccl_comm_destroy(gpu_nccl_comm_t *comm)
{
    if (!comm || state <= 0)
        return;
    CUcontext prev;
    if (gpu_ctx_enter(&prev) != 0)
        return;
    nccl_result_t r = nccl.CommDestroy((nccl_comm_t)comm);
    gpu_ctx_leave(prev);
    if (r != 0)
        complain("ncclCommDestroy", r);
}

int gpu_nccl_start(gpu_nccl_comm_t *comm, gpu_nccl_coll_t coll, const void *in, void *out, size_t count,
                   gpu_nccl_type_t type, gpu_nccl_op_t op, int root, gpu_work_t *w)
{
    w->event = NULL;
    void *stream;
    if (gpu_work_stream(&stream) != 0)
        return -1;
    CUcontext prev;
    int e = gpu_ctx_enter(&prev);
    if (e) {
        fprintf(stderr, "ampi: NCCL collective: cannot make the context current (%d)\n", e);
        return -1;
    }
    nccl_comm_t c = (nccl_comm_t)comm;
    nccl_result_t r;
    const char *call;
    switch (coll) {
    case GPU_NCCL_ALLREDUCE:
        call = "ncclAllReduce";
        r = nccl.AllReduce(in, out, count, (int)type, (int)op, c, stream);
        break;
    case GPU_NCCL_REDUCE:
        call = "ncclReduce";
        r = nccl.Reduce(in, out, count, (int)type, (int)op, root, c, stream);
        break;
    case GPU_NCCL_BCAST:
        call = "ncclBroadcast";
        r = nccl.Broadcast(in, out, count, (int)type, root, c, stream);
        break;
    case GPU_NCCL_ALLGATHER:
        call = "ncclAllGather";
        r = nccl.AllGather(in, out, count, (int)type, c, stream);
        break;
    default:
        call = "ncclReduceScatter";
        r = nccl.ReduceScatter(in, out, count, (int)type, (int)op, c, stream);
        break;
    }
    gpu_ctx_leave(prev);
    if (r != 0)
        return complain(call, r);
    return gpu_work_record(w) ? -1 : 0;
}

int gpu_nccl_check(gpu_nccl_comm_t *comm)
{
    nccl_result_t async = 0;
    nccl_result_t r = nccl.CommGetAsyncError((nccl_comm_t)comm, &async);
    if (r != 0)
        return complain("ncclCommGetAsyncError", r);
    if (async != 0 && async != 7) /* 7: ncclInProgress, not an error */
        return complain("NCCL communicator (asynchronous error)", async);
    return 0;
}
