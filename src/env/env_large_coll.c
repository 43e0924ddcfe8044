/* The large-count collectives of MPI 4.0 (MPI_Bcast_c ...).
 *
 * Counts that fit an int take the int call.  Larger ones:
 * - blocks of one count (Bcast, Gather, Scatter, Allgather, Alltoall and
 *   their nonblocking forms) move one element of a contiguous type of count
 *   elements, whose signature matches the peers' (env_large_p2p.c);
 * - the blocking reductions (Reduce, Allreduce, Scan, Exscan, Reduce_local)
 *   run in pieces of at most INT_MAX elements, each element being reduced on
 *   its own;
 * - the v- and w-forms take int copies of their count and displacement
 *   arrays, and nonblocking reductions and Reduce_scatter_block run whole:
 *   there a value past INT_MAX gives MPI_ERR_COUNT. */
#include "env/env_large.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

static int *int_copy(const void *a, bool aint, int n, int *err)
{
    *err = MPI_SUCCESS;
    if (!a)
        return NULL;
    int *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        long long x = aint ? (long long)((const MPI_Aint *)a)[i] : (long long)((const MPI_Count *)a)[i];
        if (x > INT_MAX || x < INT_MIN) {
            free(v);
            *err = MPI_ERR_COUNT;
            return NULL;
        }
        v[i] = (int)x;
    }
    return v;
}

int *env_large_ints(const MPI_Count *a, int n, int *err) { return int_copy(a, false, n, err); }
int *env_large_disps(const MPI_Aint *a, int n, int *err) { return int_copy(a, true, n, err); }

/* Length of the count arrays of a v-collective on comm: the group the
 * blocks come from or go to (the remote one of an intercommunicator). */
static int peers(MPI_Comm comm, int *n)
{
    int inter = 0, err = PMPI_Comm_test_inter(comm, &inter);
    if (!err)
        err = inter ? PMPI_Comm_remote_size(comm, n) : PMPI_Comm_size(comm, n);
    return err;
}

/* The (count, type) pairs of both sides as the int calls take them. */
typedef struct {
    int sc, rc;
    MPI_Datatype st, rt, st0, rt0;
} sides_t;

static int side(MPI_Count count, MPI_Datatype dt, int *c, MPI_Datatype *t)
{
    *t = dt;
    *c = count < 0 ? -1 : (int)count;
    if (count <= INT_MAX)
        return MPI_SUCCESS;
    *c = 1;
    return env_large_type(count, dt, t);
}

static int sides(sides_t *s, MPI_Count sc, MPI_Datatype st, MPI_Count rc, MPI_Datatype rt)
{
    s->st0 = s->st = st;
    s->rt0 = s->rt = rt;
    int err = side(sc, st, &s->sc, &s->st);
    return err ? err : side(rc, rt, &s->rc, &s->rt);
}

static void sides_free(sides_t *s)
{
    if (s->st != s->st0)
        PMPI_Type_free(&s->st);
    if (s->rt != s->rt0)
        PMPI_Type_free(&s->rt);
}

#pragma weak MPI_Bcast_c = PMPI_Bcast_c
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    sides_t s;
    int err = sides(&s, count, datatype, 0, datatype);
    if (!err)
        err = PMPI_Bcast(buffer, s.sc, s.st, root, comm);
    sides_free(&s);
    return err;
}

#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c
int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    sides_t s;
    int err = sides(&s, count, datatype, 0, datatype);
    if (!err)
        err = PMPI_Ibcast(buffer, s.sc, s.st, root, comm, request);
    sides_free(&s);
    return err;
}

/* Gather, Scatter, Allgather, Alltoall and their I-forms: (send, recv) and
 * the rest of the arguments. */
#define LARGE_UNIFORM(name, tail_params, tail_args)                                                       \
    _Pragma(ENV_WEAK(name)) int PMPI_##name##_c(const void *sendbuf, MPI_Count sendcount,                 \
                                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, \
                                                MPI_Datatype recvtype ENV_UNPAREN tail_params)            \
    {                                                                                                     \
        sides_t s;                                                                                        \
        int err = sides(&s, sendcount, sendtype, recvcount, recvtype);                                    \
        if (!err)                                                                                         \
            err = PMPI_##name(sendbuf, s.sc, s.st, recvbuf, s.rc, s.rt ENV_UNPAREN tail_args);            \
        sides_free(&s);                                                                                   \
        return err;                                                                                       \
    }

LARGE_UNIFORM(Gather, (, int root, MPI_Comm comm), (, root, comm))
LARGE_UNIFORM(Igather, (, int root, MPI_Comm comm, MPI_Request *request), (, root, comm, request))
LARGE_UNIFORM(Scatter, (, int root, MPI_Comm comm), (, root, comm))
LARGE_UNIFORM(Iscatter, (, int root, MPI_Comm comm, MPI_Request *request), (, root, comm, request))
LARGE_UNIFORM(Allgather, (, MPI_Comm comm), (, comm))
LARGE_UNIFORM(Iallgather, (, MPI_Comm comm, MPI_Request *request), (, comm, request))
LARGE_UNIFORM(Alltoall, (, MPI_Comm comm), (, comm))
LARGE_UNIFORM(Ialltoall, (, MPI_Comm comm, MPI_Request *request), (, comm, request))

/* ---- v- and w-forms: int copies of the arrays ---- */

typedef struct {
    int *a[4];
} arrays_t;

static int arrays(arrays_t *v, MPI_Comm comm, const MPI_Count *c0, const MPI_Aint *d0, const MPI_Count *c1,
                  const MPI_Aint *d1, const char *fn)
{
    int n = 0, err = peers(comm, &n), e[4] = { 0, 0, 0, 0 };
    v->a[0] = v->a[1] = v->a[2] = v->a[3] = NULL;
    if (err)
        return err;
    v->a[0] = env_large_ints(c0, n, &e[0]);
    v->a[1] = env_large_disps(d0, n, &e[1]);
    v->a[2] = env_large_ints(c1, n, &e[2]);
    v->a[3] = env_large_disps(d1, n, &e[3]);
    for (int i = 0; i < 4; i++)
        if (e[i])
            return core_error(NULL, e[i], fn); /* a count or displacement past INT_MAX */
    return MPI_SUCCESS;
}

/* Whether the root's arrays of a rooted v-collective are this rank's. */
static bool at_root(MPI_Comm comm, int root)
{
    int inter = 0, rank = -1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root == MPI_ROOT;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

static void arrays_free(arrays_t *v)
{
    for (int i = 0; i < 4; i++)
        free(v->a[i]);
}

#define LARGE_GATHERV(name, sig, tail_params, tail_args)                                                          \
    _Pragma(ENV_WEAK(name)) int PMPI_##name##_c(const void *sendbuf, MPI_Count sendcount,                    \
                                                MPI_Datatype sendtype, void *recvbuf,                        \
                                                const MPI_Count recvcounts[], const MPI_Aint displs[],       \
                                                MPI_Datatype recvtype ENV_UNPAREN tail_params)               \
    {                                                                                                        \
        arrays_t v;                                                                                          \
        sides_t s;                                                                                           \
        int err = arrays(&v, comm, sig ? recvcounts : NULL, sig ? displs : NULL, NULL, NULL, "MPI_" #name "_c"); \
        if (!err)                                                                                            \
            err = sides(&s, sendcount, sendtype, 0, recvtype);                                               \
        if (!err) {                                                                                          \
            err = PMPI_##name(sendbuf, s.sc, s.st, recvbuf, v.a[0], v.a[1], recvtype ENV_UNPAREN tail_args); \
            sides_free(&s);                                                                                  \
        }                                                                                                    \
        arrays_free(&v);                                                                                     \
        return err;                                                                                          \
    }

LARGE_GATHERV(Gatherv, at_root(comm, root), (, int root, MPI_Comm comm), (, root, comm))
LARGE_GATHERV(Igatherv, at_root(comm, root), (, int root, MPI_Comm comm, MPI_Request *request), (, root, comm, request))
LARGE_GATHERV(Allgatherv, true, (, MPI_Comm comm), (, comm))
LARGE_GATHERV(Iallgatherv, true, (, MPI_Comm comm, MPI_Request *request), (, comm, request))

#define LARGE_SCATTERV(name, tail_params, tail_args)                                                          \
    _Pragma(ENV_WEAK(name)) int PMPI_##name##_c(const void *sendbuf, const MPI_Count sendcounts[],            \
                                                const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, \
                                                MPI_Count recvcount,                                          \
                                                MPI_Datatype recvtype ENV_UNPAREN tail_params)                \
    {                                                                                                         \
        arrays_t v;                                                                                           \
        sides_t s;                                                                                            \
        bool sig = at_root(comm, root);                                                                       \
        int err = arrays(&v, comm, sig ? sendcounts : NULL, sig ? displs : NULL, NULL, NULL, "MPI_" #name "_c"); \
        if (!err)                                                                                             \
            err = sides(&s, 0, sendtype, recvcount, recvtype);                                                \
        if (!err) {                                                                                           \
            err = PMPI_##name(sendbuf, v.a[0], v.a[1], sendtype, recvbuf, s.rc, s.rt ENV_UNPAREN tail_args);  \
            sides_free(&s);                                                                                   \
        }                                                                                                     \
        arrays_free(&v);                                                                                      \
        return err;                                                                                           \
    }

LARGE_SCATTERV(Scatterv, (, int root, MPI_Comm comm), (, root, comm))
LARGE_SCATTERV(Iscatterv, (, int root, MPI_Comm comm, MPI_Request *request), (, root, comm, request))

#define LARGE_ALLTOALLV(name, ttype, tail_params, tail_args)                                                  \
    _Pragma(ENV_WEAK(name)) int PMPI_##name##_c(const void *sendbuf, const MPI_Count sendcounts[],            \
                                                const MPI_Aint sdispls[], ttype sendtype, void *recvbuf,      \
                                                const MPI_Count recvcounts[], const MPI_Aint rdispls[],       \
                                                ttype recvtype ENV_UNPAREN tail_params)                       \
    {                                                                                                         \
        arrays_t v;                                                                                           \
        int err = arrays(&v, comm, sendcounts, sdispls, recvcounts, rdispls, "MPI_" #name "_c");              \
        if (!err)                                                                                             \
            err = PMPI_##name(sendbuf, v.a[0], v.a[1], sendtype, recvbuf, v.a[2], v.a[3],                     \
                              recvtype ENV_UNPAREN tail_args);                                                \
        arrays_free(&v);                                                                                      \
        return err;                                                                                           \
    }

LARGE_ALLTOALLV(Alltoallv, MPI_Datatype, (, MPI_Comm comm), (, comm))
LARGE_ALLTOALLV(Ialltoallv, MPI_Datatype, (, MPI_Comm comm, MPI_Request *request), (, comm, request))
LARGE_ALLTOALLV(Alltoallw, const MPI_Datatype *, (, MPI_Comm comm), (, comm))
LARGE_ALLTOALLV(Ialltoallw, const MPI_Datatype *, (, MPI_Comm comm, MPI_Request *request), (, comm, request))

/* ---- reductions ---- */

/* Runs call on pieces of at most INT_MAX elements: offset o of a buffer is
 * o extents in (MPI_IN_PLACE and absent buffers stay as they are). */
static char *piece(const void *buf, MPI_Count off, MPI_Aint ext)
{
    return buf && buf != MPI_IN_PLACE ? (char *)buf + off * ext : (char *)buf;
}

#define LARGE_REDUCE(name, head_params, head_args)                                                           \
    _Pragma(ENV_WEAK(name)) int PMPI_##name##_c(const void *sendbuf, void *recvbuf, MPI_Count count,         \
                                                MPI_Datatype datatype, MPI_Op op ENV_UNPAREN head_params)    \
    {                                                                                                        \
        if (count <= INT_MAX)                                                                                \
            return PMPI_##name(sendbuf, recvbuf, count < 0 ? -1 : (int)count, datatype, op ENV_UNPAREN head_args); \
        MPI_Aint lb, ext;                                                                                    \
        int err = PMPI_Type_get_extent(datatype, &lb, &ext);                                                 \
        for (MPI_Count off = 0; !err && off < count; off += INT_MAX) {                                       \
            int n = count - off > INT_MAX ? INT_MAX : (int)(count - off);                                    \
            err = PMPI_##name(piece(sendbuf, off, ext), piece(recvbuf, off, ext), n, datatype,               \
                              op ENV_UNPAREN head_args);                                                     \
        }                                                                                                    \
        return err;                                                                                          \
    }

LARGE_REDUCE(Reduce, (, int root, MPI_Comm comm), (, root, comm))
LARGE_REDUCE(Allreduce, (, MPI_Comm comm), (, comm))
LARGE_REDUCE(Scan, (, MPI_Comm comm), (, comm))
LARGE_REDUCE(Exscan, (, MPI_Comm comm), (, comm))
LARGE_REDUCE(Reduce_local, (), ())

/* One piece only: a nonblocking call would need a request per piece. */
#define LARGE_IREDUCE(name, head_params, head_args)                                                          \
    _Pragma(ENV_WEAK(name)) int PMPI_##name##_c(const void *sendbuf, void *recvbuf, MPI_Count count,         \
                                                MPI_Datatype datatype, MPI_Op op ENV_UNPAREN head_params)    \
    {                                                                                                        \
        if (count > INT_MAX)                                                                                 \
            return core_error(NULL, MPI_ERR_COUNT, "MPI_" #name "_c");                                       \
        return PMPI_##name(sendbuf, recvbuf, count < 0 ? -1 : (int)count, datatype, op ENV_UNPAREN head_args); \
    }

LARGE_IREDUCE(Ireduce, (, int root, MPI_Comm comm, MPI_Request *request), (, root, comm, request))
LARGE_IREDUCE(Iallreduce, (, MPI_Comm comm, MPI_Request *request), (, comm, request))
LARGE_IREDUCE(Iscan, (, MPI_Comm comm, MPI_Request *request), (, comm, request))
LARGE_IREDUCE(Iexscan, (, MPI_Comm comm, MPI_Request *request), (, comm, request))

#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm)
{
    if (recvcount > INT_MAX)
        return core_error(NULL, MPI_ERR_COUNT, "MPI_Reduce_scatter_block_c");
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount < 0 ? -1 : (int)recvcount, datatype, op, comm);
}

#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c
int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (recvcount > INT_MAX)
        return core_error(NULL, MPI_ERR_COUNT, "MPI_Ireduce_scatter_block_c");
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount < 0 ? -1 : (int)recvcount, datatype, op, comm,
                                      request);
}

/* The counts are per member of the local group. */
static int *local_counts(MPI_Comm comm, const MPI_Count *c, int *err, const char *fn)
{
    int n = 0;
    *err = PMPI_Comm_size(comm, &n);
    if (*err)
        return NULL;
    int *v = env_large_ints(c, n, err);
    if (*err)
        *err = core_error(NULL, *err, fn);
    return v;
}

#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    int err;
    int *c = local_counts(comm, recvcounts, &err, "MPI_Reduce_scatter_c");
    if (!err)
        err = PMPI_Reduce_scatter(sendbuf, recvbuf, c, datatype, op, comm);
    free(c);
    return err;
}

#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c
int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    int err;
    int *c = local_counts(comm, recvcounts, &err, "MPI_Ireduce_scatter_c");
    if (!err)
        err = PMPI_Ireduce_scatter(sendbuf, recvbuf, c, datatype, op, comm, request);
    free(c);
    return err;
}
