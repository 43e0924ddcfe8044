/* mpi_large.h - the large-count forms of MPI 4.0 (the "_c" functions) that
 * the library has: point to point, collectives, reduction ops and datatype
 * constructors and queries.  Counts are MPI_Count, displacements MPI_Aint.
 * Included by mpi.h; not to be included on its own. */
#ifndef AMPI_MPI_LARGE_H
#define AMPI_MPI_LARGE_H

#ifdef __cplusplus
extern "C" {
#endif

#define AMPI_DECL(ret, name, args) ret MPI_##name args; ret PMPI_##name args

typedef void MPI_User_function_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);

/* ---- point to point ---- */
AMPI_DECL(int, Send_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Bsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Ssend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Rsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
AMPI_DECL(int, Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                        MPI_Status *status));
AMPI_DECL(int, Isend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                         MPI_Request *request));
AMPI_DECL(int, Ibsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request));
AMPI_DECL(int, Issend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request));
AMPI_DECL(int, Irsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request *request));
AMPI_DECL(int, Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Request *request));
AMPI_DECL(int, Send_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Bsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Ssend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Rsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Recv_init_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             MPI_Request *request));
AMPI_DECL(int, Sendrecv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                            MPI_Comm comm, MPI_Status *status));
AMPI_DECL(int, Sendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                                    int source, int recvtag, MPI_Comm comm, MPI_Status *status));
AMPI_DECL(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                         MPI_Status *status));
AMPI_DECL(int, Imrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                          MPI_Request *request));
AMPI_DECL(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count));
AMPI_DECL(int, Get_elements_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count));

/* ---- collectives ---- */
AMPI_DECL(int, Op_create_c, (MPI_User_function_c *user_fn, int commute, MPI_Op *op));
AMPI_DECL(int, Bcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm));
AMPI_DECL(int, Ibcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Request *request));
AMPI_DECL(int, Gather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm));
AMPI_DECL(int, Igather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request *request));
AMPI_DECL(int, Gatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                           MPI_Comm comm));
AMPI_DECL(int, Igatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Scatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm));
AMPI_DECL(int, Iscatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request *request));
AMPI_DECL(int, Scatterv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            int root, MPI_Comm comm));
AMPI_DECL(int, Iscatterv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             int root, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Allgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Iallgather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Allgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                              MPI_Comm comm));
AMPI_DECL(int, Iallgatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Alltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Ialltoall_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm));
AMPI_DECL(int, Ialltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm));
AMPI_DECL(int, Ialltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                              MPI_Request *request));
AMPI_DECL(int, Reduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          int root, MPI_Comm comm));
AMPI_DECL(int, Ireduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           int root, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Allreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm));
AMPI_DECL(int, Iallreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Reduce_local_c, (const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                                MPI_Op op));
AMPI_DECL(int, Reduce_scatter_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm));
AMPI_DECL(int, Ireduce_scatter_c, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Reduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm));
AMPI_DECL(int, Ireduce_scatter_block_c, (const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Scan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm));
AMPI_DECL(int, Iscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request *request));
AMPI_DECL(int, Exscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm));
AMPI_DECL(int, Iexscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request *request));

/* ---- datatypes ---- */
AMPI_DECL(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_hvector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                       MPI_Datatype oldtype, MPI_Datatype *newtype));
AMPI_DECL(int, Type_indexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_hindexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[],
                                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                        MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_indexed_block_c, (MPI_Count count, MPI_Count blocklength,
                                             const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                             MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_hindexed_block_c, (MPI_Count count, MPI_Count blocklength,
                                              const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                              MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_struct_c, (MPI_Count count, const MPI_Count array_of_blocklengths[],
                                      const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                                      MPI_Datatype *newtype));
AMPI_DECL(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                       MPI_Datatype *newtype));
AMPI_DECL(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size));
AMPI_DECL(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent));
AMPI_DECL(int, Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent));
AMPI_DECL(int, Pack_c, (const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                        MPI_Count outsize, MPI_Count *position, MPI_Comm comm));
AMPI_DECL(int, Unpack_c, (const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                          MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm));
AMPI_DECL(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size));

#undef AMPI_DECL

#ifdef __cplusplus
}
#endif

#endif /* AMPI_MPI_LARGE_H */
