/* AMPI-UCX: the MPI 3.1 C interface.
 *
 * MPI ranks are user-level threads: several ranks may share one process, so
 * programs run with more ranks than processes (+vp) must not keep mutable
 * globals.  Nothing here renames `main`: ampicc links the program so that the
 * C runtime's call of main reaches the library's start-up (libampi_main.a),
 * which runs the program's main once per rank (README, "Running"). */
#ifndef AMPI_MPI_H
#define AMPI_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define AMPI_UCX 1
#define MPIX_CUDA_AWARE_SUPPORT 1

/* ---- handles ---- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef struct AMPI_Request_s *MPI_Request;
typedef struct AMPI_Message_s *MPI_Message;
typedef struct AMPI_File_s *MPI_File;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int ampi_cancelled;   /* private */
    long long ampi_count; /* private: bytes received */
} MPI_Status;

#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD ((MPI_Comm)1)
#define MPI_COMM_SELF ((MPI_Comm)2)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_GROUP_EMPTY ((MPI_Group)1)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)1)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)2)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_INFO_ENV ((MPI_Info)1)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)1)
#define MPI_FILE_NULL ((MPI_File)0)

/* ---- predefined datatypes (indices into the library's type table) ---- */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_CHAR ((MPI_Datatype)1)
#define MPI_SIGNED_CHAR ((MPI_Datatype)2)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)3)
#define MPI_BYTE ((MPI_Datatype)4)
#define MPI_WCHAR ((MPI_Datatype)5)
#define MPI_SHORT ((MPI_Datatype)6)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)7)
#define MPI_INT ((MPI_Datatype)8)
#define MPI_UNSIGNED ((MPI_Datatype)9)
#define MPI_LONG ((MPI_Datatype)10)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)11)
#define MPI_LONG_LONG_INT ((MPI_Datatype)12)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)13)
#define MPI_FLOAT ((MPI_Datatype)14)
#define MPI_DOUBLE ((MPI_Datatype)15)
#define MPI_LONG_DOUBLE ((MPI_Datatype)16)
#define MPI_PACKED ((MPI_Datatype)17)
#define MPI_INT8_T ((MPI_Datatype)18)
#define MPI_INT16_T ((MPI_Datatype)19)
#define MPI_INT32_T ((MPI_Datatype)20)
#define MPI_INT64_T ((MPI_Datatype)21)
#define MPI_UINT8_T ((MPI_Datatype)22)
#define MPI_UINT16_T ((MPI_Datatype)23)
#define MPI_UINT32_T ((MPI_Datatype)24)
#define MPI_UINT64_T ((MPI_Datatype)25)
#define MPI_C_BOOL ((MPI_Datatype)26)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)27)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)28)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)29)
#define MPI_AINT ((MPI_Datatype)30)
#define MPI_OFFSET ((MPI_Datatype)31)
#define MPI_COUNT ((MPI_Datatype)32)
#define MPI_FLOAT_INT ((MPI_Datatype)33)
#define MPI_DOUBLE_INT ((MPI_Datatype)34)
#define MPI_LONG_INT ((MPI_Datatype)35)
#define MPI_2INT ((MPI_Datatype)36)
#define MPI_SHORT_INT ((MPI_Datatype)37)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)38)
#define MPI_CHARACTER ((MPI_Datatype)39)
#define MPI_INTEGER ((MPI_Datatype)40)
#define MPI_REAL ((MPI_Datatype)41)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)42)
#define MPI_COMPLEX ((MPI_Datatype)43)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)44)
#define MPI_LOGICAL ((MPI_Datatype)45)
#define MPI_2INTEGER ((MPI_Datatype)46)
#define MPI_2REAL ((MPI_Datatype)47)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)48)
#define MPI_UB ((MPI_Datatype)49)
#define MPI_LB ((MPI_Datatype)50)
/* mpi_more.h adds the C++ and sized Fortran types, 51..62 */
#define AMPI_DATATYPE_PREDEFINED_LAST 62

/* ---- reduction operations ---- */
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_MAX ((MPI_Op)1)
#define MPI_MIN ((MPI_Op)2)
#define MPI_SUM ((MPI_Op)3)
#define MPI_PROD ((MPI_Op)4)
#define MPI_LAND ((MPI_Op)5)
#define MPI_BAND ((MPI_Op)6)
#define MPI_LOR ((MPI_Op)7)
#define MPI_BOR ((MPI_Op)8)
#define MPI_LXOR ((MPI_Op)9)
#define MPI_BXOR ((MPI_Op)10)
#define MPI_MAXLOC ((MPI_Op)11)
#define MPI_MINLOC ((MPI_Op)12)
#define MPI_REPLACE ((MPI_Op)13)
#define MPI_NO_OP ((MPI_Op)14)

/* ---- special values ---- */
#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BSEND_OVERHEAD 64
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_BOTTOM ((void *)0)
#define MPI_UNWEIGHTED ((int *)1)
#define MPI_WEIGHTS_EMPTY ((int *)2)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 256
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

#define MPI_COMM_TYPE_SHARED 1

#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED 2
#define MPI_MODE_NOCHECK 1
#define MPI_MODE_NOSTORE 2
#define MPI_MODE_NOPUT 4
#define MPI_MODE_NOPRECEDE 8
#define MPI_MODE_NOSUCCEED 16

/* predefined attribute keys (MPI_Comm_get_attr) */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_LASTUSEDCODE 6
#define MPI_APPNUM 7

/* ---- datatype constructors (MPI_Type_get_envelope) and subarray order ---- */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_STRUCT_INTEGER 11
#define MPI_COMBINER_STRUCT 12
#define MPI_COMBINER_SUBARRAY 13
#define MPI_COMBINER_DARRAY 14
#define MPI_COMBINER_F90_REAL 15
#define MPI_COMBINER_F90_COMPLEX 16
#define MPI_COMBINER_F90_INTEGER 17
#define MPI_COMBINER_RESIZED 18
#define MPI_COMBINER_HINDEXED_BLOCK 19
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57

/* ---- error classes ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_RMA_RANGE 38
#define MPI_ERR_RMA_ATTACH 39
#define MPI_ERR_RMA_SHARED 40
#define MPI_ERR_RMA_FLAVOR 41
#define MPI_ERR_FILE 42
#define MPI_ERR_NOT_SAME 43
#define MPI_ERR_AMODE 44
#define MPI_ERR_UNSUPPORTED_DATAREP 45
#define MPI_ERR_UNSUPPORTED_OPERATION 46
#define MPI_ERR_NO_SUCH_FILE 47
#define MPI_ERR_FILE_EXISTS 48
#define MPI_ERR_BAD_FILE 49
#define MPI_ERR_ACCESS 50
#define MPI_ERR_NO_SPACE 51
#define MPI_ERR_QUOTA 52
#define MPI_ERR_READ_ONLY 53
#define MPI_ERR_FILE_IN_USE 54
#define MPI_ERR_DUP_DATAREP 55
#define MPI_ERR_CONVERSION 56
#define MPI_ERR_IO 57
/* mpi_more.h adds the classes of the tool information interface, 58..73 */
#define MPI_ERR_LASTCODE 73

/* ---- callbacks ---- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *errcode, ...);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval, void *attribute_val,
                                          void *extra_state);

/* Every function exists as MPI_x and PMPI_x (the profiling interface). */
#define AMPI_DECL(ret, name, args) ret MPI_##name args; ret PMPI_##name args

/* environment */
AMPI_DECL(int, Init, (int *argc, char ***argv));
AMPI_DECL(int, Init_thread, (int *argc, char ***argv, int required, int *provided));
AMPI_DECL(int, Initialized, (int *flag));
AMPI_DECL(int, Finalize, (void));
AMPI_DECL(int, Finalized, (int *flag));
AMPI_DECL(int, Query_thread, (int *provided));
AMPI_DECL(int, Is_thread_main, (int *flag));
AMPI_DECL(int, Abort, (MPI_Comm comm, int errorcode));
AMPI_DECL(double, Wtime, (void));
AMPI_DECL(double, Wtick, (void));
AMPI_DECL(int, Get_processor_name, (char *name, int *resultlen));
AMPI_DECL(int, Get_version, (int *version, int *subversion));
AMPI_DECL(int, Get_library_version, (char *version, int *resultlen));
AMPI_DECL(int, Comm_rank, (MPI_Comm comm, int *rank));
AMPI_DECL(int, Comm_size, (MPI_Comm comm, int *size));
AMPI_DECL(int, Comm_get_attr, (MPI_Comm comm, int keyval, void *attribute_val, int *flag));
AMPI_DECL(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag));
AMPI_DECL(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler));
AMPI_DECL(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler));
AMPI_DECL(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler));
AMPI_DECL(int, Errhandler_free, (MPI_Errhandler *errhandler));
AMPI_DECL(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode));
AMPI_DECL(int, Error_string, (int errorcode, char *string, int *resultlen));
AMPI_DECL(int, Error_class, (int errorcode, int *errorclass));
AMPI_DECL(int, Get_address, (const void *location, MPI_Aint *address));
AMPI_DECL(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr));
AMPI_DECL(int, Free_mem, (void *base));

/* point-to-point */
AMPI_DECL(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                       MPI_Request *request));
AMPI_DECL(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request));
AMPI_DECL(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request));
AMPI_DECL(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request *request));
AMPI_DECL(int, Buffer_attach, (void *buffer, int size));
AMPI_DECL(int, Buffer_detach, (void *buffer_addr, int *size));
AMPI_DECL(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Status *status));
AMPI_DECL(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Request *request));
AMPI_DECL(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status));
AMPI_DECL(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                  int source, int recvtag, MPI_Comm comm, MPI_Status *status));
AMPI_DECL(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status));
AMPI_DECL(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status));
AMPI_DECL(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status));
AMPI_DECL(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                         MPI_Status *status));
AMPI_DECL(int, Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status));
AMPI_DECL(int, Imrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                        MPI_Request *request));
AMPI_DECL(int, Wait, (MPI_Request *request, MPI_Status *status));
AMPI_DECL(int, Test, (MPI_Request *request, int *flag, MPI_Status *status));
AMPI_DECL(int, Waitany, (int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status));
AMPI_DECL(int, Testany, (int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status));
AMPI_DECL(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]));
AMPI_DECL(int, Testall, (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]));
AMPI_DECL(int, Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                          MPI_Status array_of_statuses[]));
AMPI_DECL(int, Testsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                          MPI_Status array_of_statuses[]));
AMPI_DECL(int, Request_free, (MPI_Request *request));
AMPI_DECL(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status));
AMPI_DECL(int, Cancel, (MPI_Request *request));
AMPI_DECL(int, Test_cancelled, (const MPI_Status *status, int *flag));
AMPI_DECL(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count));
AMPI_DECL(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count));
AMPI_DECL(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count));
AMPI_DECL(int, Status_set_elements, (MPI_Status *status, MPI_Datatype datatype, int count));
AMPI_DECL(int, Status_set_cancelled, (MPI_Status *status, int flag));
AMPI_DECL(int, Send_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request *request));
AMPI_DECL(int, Ssend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request *request));
AMPI_DECL(int, Rsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request *request));
AMPI_DECL(int, Bsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            MPI_Request *request));
AMPI_DECL(int, Recv_init, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                           MPI_Request *request));
AMPI_DECL(int, Start, (MPI_Request *request));
AMPI_DECL(int, Startall, (int count, MPI_Request array_of_requests[]));

/* datatypes (predefined ones today) */
AMPI_DECL(int, Type_size, (MPI_Datatype datatype, int *size));
AMPI_DECL(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size));
AMPI_DECL(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent));
AMPI_DECL(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen));

/* collectives available today */
AMPI_DECL(int, Barrier, (MPI_Comm comm));

/* collectives */
AMPI_DECL(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm));
AMPI_DECL(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                        MPI_Comm comm));
AMPI_DECL(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm));
AMPI_DECL(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm));
AMPI_DECL(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm));
AMPI_DECL(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm));
AMPI_DECL(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm));
AMPI_DECL(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm));
AMPI_DECL(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm));
AMPI_DECL(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm));
AMPI_DECL(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm));
AMPI_DECL(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm));
AMPI_DECL(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op));
AMPI_DECL(int, Op_free, (MPI_Op *op));
AMPI_DECL(int, Op_commutative, (MPI_Op op, int *commute));
AMPI_DECL(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op));

/* communicators, groups, topologies */
typedef MPI_Comm_copy_attr_function MPI_Copy_function;     /* MPI-1 names */
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
int AMPI_Comm_null_copy_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                           void *attribute_val_out, int *flag);
int AMPI_Comm_dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag);
int AMPI_Comm_null_delete_fn(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
#define MPI_COMM_NULL_COPY_FN AMPI_Comm_null_copy_fn
#define MPI_COMM_DUP_FN AMPI_Comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN AMPI_Comm_null_delete_fn
#define MPI_NULL_COPY_FN AMPI_Comm_null_copy_fn
#define MPI_DUP_FN AMPI_Comm_dup_fn
#define MPI_NULL_DELETE_FN AMPI_Comm_null_delete_fn
AMPI_DECL(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm));
AMPI_DECL(int, Comm_free, (MPI_Comm *comm));
AMPI_DECL(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result));
AMPI_DECL(int, Comm_group, (MPI_Comm comm, MPI_Group *group));
AMPI_DECL(int, Comm_test_inter, (MPI_Comm comm, int *flag));
AMPI_DECL(int, Comm_remote_size, (MPI_Comm comm, int *size));
AMPI_DECL(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group));
AMPI_DECL(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                                  int tag, MPI_Comm *newintercomm));
AMPI_DECL(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm));
AMPI_DECL(int, Comm_set_name, (MPI_Comm comm, const char *comm_name));
AMPI_DECL(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen));
AMPI_DECL(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                    MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                                    void *extra_state));
AMPI_DECL(int, Comm_free_keyval, (int *comm_keyval));
AMPI_DECL(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val));
AMPI_DECL(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval));
AMPI_DECL(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                               void *extra_state));
AMPI_DECL(int, Keyval_free, (int *keyval));
AMPI_DECL(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val));
AMPI_DECL(int, Attr_delete, (MPI_Comm comm, int keyval));
AMPI_DECL(int, Group_size, (MPI_Group group, int *size));
AMPI_DECL(int, Group_rank, (MPI_Group group, int *rank));
AMPI_DECL(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                       int ranks2[]));
AMPI_DECL(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result));
AMPI_DECL(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
AMPI_DECL(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
AMPI_DECL(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
AMPI_DECL(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup));
AMPI_DECL(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup));
AMPI_DECL(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup));
AMPI_DECL(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup));
AMPI_DECL(int, Group_free, (MPI_Group *group));
AMPI_DECL(int, Topo_test, (MPI_Comm comm, int *status));
AMPI_DECL(int, Dims_create, (int nnodes, int ndims, int dims[]));
AMPI_DECL(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                             MPI_Comm *comm_cart));
AMPI_DECL(int, Cartdim_get, (MPI_Comm comm, int *ndims));
AMPI_DECL(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]));
AMPI_DECL(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]));
AMPI_DECL(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank));
AMPI_DECL(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest));
AMPI_DECL(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm));
AMPI_DECL(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank));
AMPI_DECL(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                              MPI_Comm *comm_graph));
AMPI_DECL(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges));
AMPI_DECL(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]));
AMPI_DECL(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors));
AMPI_DECL(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]));
AMPI_DECL(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank));
/* weights are pointers, not arrays: gcc warns when MPI_UNWEIGHTED meets an
 * array parameter */
AMPI_DECL(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[],
                                            const int *sourceweights, int outdegree, const int destinations[],
                                            const int *destweights, MPI_Info info, int reorder,
                                            MPI_Comm *comm_dist_graph));
AMPI_DECL(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                   const int destinations[], const int *weights, MPI_Info info, int reorder,
                                   MPI_Comm *comm_dist_graph));
AMPI_DECL(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted));
AMPI_DECL(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int *sourceweights,
                                      int maxoutdegree, int destinations[], int *destweights));

/* derived datatypes */
AMPI_DECL(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype));
AMPI_DECL(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype));
AMPI_DECL(int, Type_indexed, (int count, const int array_of_blocklengths[], const int array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_hindexed, (int count, const int array_of_blocklengths[],
                                      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                      MPI_Datatype *newtype));
AMPI_DECL(int, Type_hindexed, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                               MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_indexed_block, (int count, int blocklength, const int array_of_displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint array_of_displacements[],
                                            MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_struct, (int count, const int array_of_blocklengths[],
                                    const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                                    MPI_Datatype *newtype));
AMPI_DECL(int, Type_struct, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                             const MPI_Datatype array_of_types[], MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_subarray, (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                                      const int array_of_starts[], int order, MPI_Datatype oldtype,
                                      MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype));
AMPI_DECL(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_commit, (MPI_Datatype *datatype));
AMPI_DECL(int, Type_free, (MPI_Datatype *datatype));
AMPI_DECL(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent));
AMPI_DECL(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent));
AMPI_DECL(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent));
AMPI_DECL(int, Type_set_name, (MPI_Datatype datatype, const char *type_name));
AMPI_DECL(int, Type_get_envelope, (MPI_Datatype datatype, int *num_integers, int *num_addresses,
                                   int *num_datatypes, int *combiner));
AMPI_DECL(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                                   int array_of_integers[], MPI_Aint array_of_addresses[],
                                   MPI_Datatype array_of_datatypes[]));
AMPI_DECL(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
                      int *position, MPI_Comm comm));
AMPI_DECL(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                        MPI_Datatype datatype, MPI_Comm comm));
AMPI_DECL(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size));

/* info objects */
AMPI_DECL(int, Info_create, (MPI_Info *info));
AMPI_DECL(int, Info_set, (MPI_Info info, const char *key, const char *value));
AMPI_DECL(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag));
AMPI_DECL(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag));
AMPI_DECL(int, Info_get_nkeys, (MPI_Info info, int *nkeys));
AMPI_DECL(int, Info_get_nthkey, (MPI_Info info, int n, char *key));
AMPI_DECL(int, Info_delete, (MPI_Info info, const char *key));
AMPI_DECL(int, Info_dup, (MPI_Info info, MPI_Info *newinfo));
AMPI_DECL(int, Info_free, (MPI_Info *info));

/* ---- not supported yet: they exist so that codes link, and return
 * MPI_ERR_UNSUPPORTED_OPERATION (docs/unsupported.md) ---- */
/* collective without an implementation yet */
AMPI_DECL(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm));

/* nonblocking collectives */
AMPI_DECL(int, Ibarrier, (MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                        MPI_Request *request));
AMPI_DECL(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                         MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                          MPI_Request *request));
AMPI_DECL(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request *request));
AMPI_DECL(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request));
AMPI_DECL(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request));
AMPI_DECL(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Request *request));
AMPI_DECL(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request *request));

/* neighborhood collectives */
AMPI_DECL(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                     MPI_Comm comm));
AMPI_DECL(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm));
AMPI_DECL(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                                     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request));
AMPI_DECL(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                     const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                     MPI_Request *request));

/* one-sided communication (RMA) */
AMPI_DECL(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win));
AMPI_DECL(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                              MPI_Win *win));
AMPI_DECL(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                                     MPI_Win *win));
AMPI_DECL(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win));
AMPI_DECL(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr));
AMPI_DECL(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size));
AMPI_DECL(int, Win_detach, (MPI_Win win, const void *base));
AMPI_DECL(int, Win_free, (MPI_Win *win));
AMPI_DECL(int, Win_get_group, (MPI_Win win, MPI_Group *group));
AMPI_DECL(int, Win_fence, (int assert, MPI_Win win));
AMPI_DECL(int, Win_start, (MPI_Group group, int assert, MPI_Win win));
AMPI_DECL(int, Win_complete, (MPI_Win win));
AMPI_DECL(int, Win_post, (MPI_Group group, int assert, MPI_Win win));
AMPI_DECL(int, Win_wait, (MPI_Win win));
AMPI_DECL(int, Win_test, (MPI_Win win, int *flag));
AMPI_DECL(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win));
AMPI_DECL(int, Win_unlock, (int rank, MPI_Win win));
AMPI_DECL(int, Win_lock_all, (int assert, MPI_Win win));
AMPI_DECL(int, Win_unlock_all, (MPI_Win win));
AMPI_DECL(int, Win_flush, (int rank, MPI_Win win));
AMPI_DECL(int, Win_flush_local, (int rank, MPI_Win win));
AMPI_DECL(int, Win_flush_all, (MPI_Win win));
AMPI_DECL(int, Win_flush_local_all, (MPI_Win win));
AMPI_DECL(int, Win_sync, (MPI_Win win));
AMPI_DECL(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win));
AMPI_DECL(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win));
AMPI_DECL(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                            MPI_Win win));
AMPI_DECL(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                MPI_Win win));
AMPI_DECL(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                              MPI_Aint target_disp, MPI_Op op, MPI_Win win));
AMPI_DECL(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr,
                                  MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win));
AMPI_DECL(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                      MPI_Request *request));
AMPI_DECL(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
                      MPI_Request *request));
AMPI_DECL(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                             MPI_Win win, MPI_Request *request));
AMPI_DECL(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                                 void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                 MPI_Win win, MPI_Request *request));

/* AMPI extensions */
int MPIX_Query_cuda_support(void);
int AMPI_Run(int argc, char **argv, int (*user_main)(int, char **));
/* The start-up of a program built with `ampicc -privatize`: every rank runs
 * its own copy of the program's image (README, "Globals"). */
int AMPI_Run_image(int argc, char **argv, const void *image, size_t size);
int AMPI_Yield(void);

#undef AMPI_DECL

#include "mpi_more.h"
#include "mpi_large.h"

#ifdef __cplusplus
}
#endif

#endif /* AMPI_MPI_H */
