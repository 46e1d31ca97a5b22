/*
 * weft/mpi_functions_large.h - the MPI-4 large-count (_c) forms of weft's routines, once.
 *
 * Part of the list in weft/mpi_functions.h, which includes it before its end (it relies on
 * the macros and shared pieces that list defines): each line names a routine through
 * WEFT_MPI_FUNCTION. The _c forms take MPI_Count counts and MPI_Aint (collectives) or
 * MPI_Count (datatype constructors) displacements, with MPICH 4's prototypes.
 */
#define WEFT_SEND_PARAMS_C const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, \
  int tag, MPI_Comm comm
#define WEFT_RECV_PARAMS_C void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, \
  MPI_Comm comm

/* The large-count (_c) forms' parameters: MPI_Count counts, MPI_Aint displacements. */
#define WEFT_BCAST_PARAMS_C void *buffer, MPI_Count count, MPI_Datatype datatype, int root, \
  MPI_Comm comm
#define WEFT_REDUCE_PARAMS_C const void *sendbuf, void *recvbuf, MPI_Count count, \
  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm
#define WEFT_ALLREDUCE_PARAMS_C const void *sendbuf, void *recvbuf, MPI_Count count, \
  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define WEFT_GATHER_PARAMS_C const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, \
  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm
#define WEFT_GATHERV_PARAMS_C const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, \
  void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,  \
  int root, MPI_Comm comm
#define WEFT_SCATTERV_PARAMS_C const void *sendbuf, const MPI_Count sendcounts[],              \
  const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,          \
  MPI_Datatype recvtype, int root, MPI_Comm comm
#define WEFT_ALLGATHER_PARAMS_C const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, \
  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define WEFT_ALLGATHERV_PARAMS_C const void *sendbuf, MPI_Count sendcount,                     \
  MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], \
  MPI_Datatype recvtype, MPI_Comm comm
#define WEFT_ALLTOALLV_PARAMS_C const void *sendbuf, const MPI_Count sendcounts[],             \
  const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], \
  const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm
#define WEFT_ALLTOALLW_PARAMS_C const void *sendbuf, const MPI_Count sendcounts[],             \
  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,                      \
  const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],       \
  MPI_Comm comm
#define WEFT_REDUCE_SCATTER_PARAMS_C const void *sendbuf, void *recvbuf,                       \
  const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define WEFT_REDUCE_SCATTER_BLOCK_PARAMS_C const void *sendbuf, void *recvbuf,                 \
  MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm

/* The same three forms in their large-count variants, named X_c, IX_c and X_init_c. */
#define WEFT_COLLECTIVE_C(name, iname, params)                                \
  WEFT_MPI_FUNCTION(int, name##_c, (params))                                  \
  WEFT_MPI_FUNCTION(int, iname##_c, (params, MPI_Request *request))           \
  WEFT_MPI_FUNCTION(int, name##_init_c, (params, MPI_Info info, MPI_Request *request))

/* The one-sided large-count forms' origin, result and target parameters. */
#define WEFT_RMA_ORIGIN_C MPI_Count origin_count, MPI_Datatype origin_datatype
#define WEFT_RMA_RESULT_C void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype
#define WEFT_RMA_TARGET_C int target_rank, MPI_Aint target_disp, MPI_Count target_count, \
  MPI_Datatype target_datatype

/* -- Point-to-point, large-count (MPI-4 _c) forms: MPI_Count counts -- */
WEFT_MPI_FUNCTION(int, Send_c, (WEFT_SEND_PARAMS_C))
WEFT_MPI_FUNCTION(int, Ssend_c, (WEFT_SEND_PARAMS_C))
WEFT_MPI_FUNCTION(int, Rsend_c, (WEFT_SEND_PARAMS_C))
WEFT_MPI_FUNCTION(int, Bsend_c, (WEFT_SEND_PARAMS_C))
WEFT_MPI_FUNCTION(int, Recv_c, (WEFT_RECV_PARAMS_C, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Isend_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Issend_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Irsend_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Ibsend_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Irecv_c, (WEFT_RECV_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Send_init_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Ssend_init_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Rsend_init_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Bsend_init_c, (WEFT_SEND_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Recv_init_c, (WEFT_RECV_PARAMS_C, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Sendrecv_c, (WEFT_SENDRECV_PARAMS(MPI_Count), MPI_Status *status))
WEFT_MPI_FUNCTION(int, Sendrecv_replace_c, (WEFT_SENDRECV_REPLACE_PARAMS(MPI_Count),
                                            MPI_Status *status))
WEFT_MPI_FUNCTION(int, Isendrecv_c, (WEFT_SENDRECV_PARAMS(MPI_Count), MPI_Request *request))
WEFT_MPI_FUNCTION(int, Isendrecv_replace_c, (WEFT_SENDRECV_REPLACE_PARAMS(MPI_Count),
                                             MPI_Request *request))
WEFT_MPI_FUNCTION(int, Buffer_attach_c, (void *buffer, MPI_Count size))
WEFT_MPI_FUNCTION(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size))
WEFT_MPI_FUNCTION(int, Comm_attach_buffer_c, (MPI_Comm comm, void *buffer, MPI_Count size))
WEFT_MPI_FUNCTION(int, Comm_detach_buffer_c, (MPI_Comm comm, void *buffer_addr, MPI_Count *size))
WEFT_MPI_FUNCTION(int, Session_attach_buffer_c, (MPI_Session session, void *buffer, MPI_Count size))
WEFT_MPI_FUNCTION(int, Session_detach_buffer_c, (MPI_Session session, void *buffer_addr, MPI_Count *size))

/* -- Matched receives, status and datatypes, large-count (MPI-4 _c) forms -- */
WEFT_MPI_FUNCTION(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Message *message, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Imrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
                                  MPI_Message *message, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype,
                                     MPI_Count *count))
WEFT_MPI_FUNCTION(int, Get_elements_c, (const MPI_Status *status, MPI_Datatype datatype,
                                        MPI_Count *count))
WEFT_MPI_FUNCTION(int, Status_set_elements_c, (MPI_Status *status, MPI_Datatype datatype,
                                               MPI_Count count))
WEFT_MPI_FUNCTION(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size))
WEFT_MPI_FUNCTION(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb,
                                           MPI_Count *extent))
WEFT_MPI_FUNCTION(int, Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count *true_lb,
                                                MPI_Count *true_extent))
WEFT_MPI_FUNCTION(int, Type_get_envelope_c, (MPI_Datatype datatype, MPI_Count *num_integers,
                                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                             MPI_Count *num_datatypes, int *combiner))
WEFT_MPI_FUNCTION(int, Type_get_contents_c, (MPI_Datatype datatype, MPI_Count max_integers,
                                             MPI_Count max_addresses, MPI_Count max_large_counts,
                                             MPI_Count max_datatypes, int array_of_integers[],
                                             MPI_Aint array_of_addresses[],
                                             MPI_Count array_of_large_counts[],
                                             MPI_Datatype array_of_datatypes[]))
WEFT_MPI_FUNCTION(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype,
                                           MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                       MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_hvector_c, (MPI_Count count, MPI_Count blocklength,
                                               MPI_Count stride, MPI_Datatype oldtype,
                                               MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_indexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[],
                                        const MPI_Count array_of_displacements[],
                                        MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_hindexed_c, (MPI_Count count,
                                                const MPI_Count array_of_blocklengths[],
                                                const MPI_Count array_of_displacements[],
                                                MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_BLOCK_INDEXED(_c, MPI_Count, MPI_Count, MPI_Count)
WEFT_MPI_FUNCTION(int, Type_create_struct_c, (MPI_Count count,
                                              const MPI_Count array_of_blocklengths[],
                                              const MPI_Count array_of_displacements[],
                                              const MPI_Datatype array_of_types[],
                                              MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_subarray_c, (int ndims, const MPI_Count array_of_sizes[],
                                                const MPI_Count array_of_subsizes[],
                                                const MPI_Count array_of_starts[], int order,
                                                MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_DARRAY(_c, MPI_Count)
WEFT_MPI_FUNCTION(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb,
                                               MPI_Count extent, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Pack_c, (const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                                void *outbuf, MPI_Count outsize, MPI_Count *position,
                                MPI_Comm comm))
WEFT_MPI_FUNCTION(int, Unpack_c, (const void *inbuf, MPI_Count insize, MPI_Count *position,
                                  void *outbuf, MPI_Count outcount, MPI_Datatype datatype,
                                  MPI_Comm comm))
WEFT_MPI_FUNCTION(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                                     MPI_Count *size))
WEFT_MPI_FUNCTION(int, Op_create_c, (MPI_User_function_c *user_fn, int commute, MPI_Op *op))
WEFT_MPI_FUNCTION(int, Reduce_local_c, (const void *inbuf, void *inoutbuf, MPI_Count count,
                                        MPI_Datatype datatype, MPI_Op op))

/* -- Collectives, large-count (MPI-4 _c) forms -- */
WEFT_COLLECTIVE_C(Bcast, Ibcast, WEFT_BCAST_PARAMS_C)
WEFT_COLLECTIVE_C(Reduce, Ireduce, WEFT_REDUCE_PARAMS_C)
WEFT_COLLECTIVE_C(Allreduce, Iallreduce, WEFT_ALLREDUCE_PARAMS_C)
WEFT_COLLECTIVE_C(Gather, Igather, WEFT_GATHER_PARAMS_C)
WEFT_COLLECTIVE_C(Gatherv, Igatherv, WEFT_GATHERV_PARAMS_C)
WEFT_COLLECTIVE_C(Scatter, Iscatter, WEFT_GATHER_PARAMS_C)
WEFT_COLLECTIVE_C(Scatterv, Iscatterv, WEFT_SCATTERV_PARAMS_C)
WEFT_COLLECTIVE_C(Allgather, Iallgather, WEFT_ALLGATHER_PARAMS_C)
WEFT_COLLECTIVE_C(Allgatherv, Iallgatherv, WEFT_ALLGATHERV_PARAMS_C)
WEFT_COLLECTIVE_C(Alltoall, Ialltoall, WEFT_ALLGATHER_PARAMS_C)
WEFT_COLLECTIVE_C(Alltoallv, Ialltoallv, WEFT_ALLTOALLV_PARAMS_C)
WEFT_COLLECTIVE_C(Alltoallw, Ialltoallw, WEFT_ALLTOALLW_PARAMS_C)
WEFT_COLLECTIVE_C(Reduce_scatter, Ireduce_scatter, WEFT_REDUCE_SCATTER_PARAMS_C)
WEFT_COLLECTIVE_C(Reduce_scatter_block, Ireduce_scatter_block, WEFT_REDUCE_SCATTER_BLOCK_PARAMS_C)
WEFT_COLLECTIVE_C(Scan, Iscan, WEFT_ALLREDUCE_PARAMS_C)
WEFT_COLLECTIVE_C(Exscan, Iexscan, WEFT_ALLREDUCE_PARAMS_C)
WEFT_NEIGHBOR_COLLECTIVES(WEFT_COLLECTIVE_C, _C, ALLTOALLW_PARAMS_C)

/* -- One-sided, large-count (MPI-4 _c) forms -- */
WEFT_MPI_FUNCTION(int, Win_create_c, (void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                      MPI_Comm comm, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_allocate_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                        MPI_Comm comm, void *baseptr, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_allocate_shared_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                               MPI_Comm comm, void *baseptr, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_shared_query_c, (MPI_Win win, int rank, MPI_Aint *size,
                                            MPI_Aint *disp_unit, void *baseptr))
WEFT_MPI_FUNCTION(int, Put_c, (const void *origin_addr, WEFT_RMA_ORIGIN_C,
                               WEFT_RMA_TARGET_C, MPI_Win win))
WEFT_MPI_FUNCTION(int, Get_c, (void *origin_addr, WEFT_RMA_ORIGIN_C, WEFT_RMA_TARGET_C,
                               MPI_Win win))
WEFT_MPI_FUNCTION(int, Accumulate_c, (const void *origin_addr, WEFT_RMA_ORIGIN_C,
                                      WEFT_RMA_TARGET_C, MPI_Op op, MPI_Win win))
WEFT_MPI_FUNCTION(int, Get_accumulate_c, (const void *origin_addr, WEFT_RMA_ORIGIN_C,
                                          WEFT_RMA_RESULT_C, WEFT_RMA_TARGET_C, MPI_Op op,
                                          MPI_Win win))
WEFT_MPI_FUNCTION(int, Rput_c, (const void *origin_addr, WEFT_RMA_ORIGIN_C,
                                WEFT_RMA_TARGET_C, MPI_Win win, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Rget_c, (void *origin_addr, WEFT_RMA_ORIGIN_C, WEFT_RMA_TARGET_C,
                                MPI_Win win, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Raccumulate_c, (const void *origin_addr, WEFT_RMA_ORIGIN_C,
                                       WEFT_RMA_TARGET_C, MPI_Op op, MPI_Win win,
                                       MPI_Request *request))
WEFT_MPI_FUNCTION(int, Rget_accumulate_c, (const void *origin_addr, WEFT_RMA_ORIGIN_C,
                                           WEFT_RMA_RESULT_C, WEFT_RMA_TARGET_C, MPI_Op op,
                                           MPI_Win win, MPI_Request *request))

/* Files (MPI-IO; MPI_Register_datarep_c is not supported yet). */
WEFT_FILE_ACCESS_ALL(_c, MPI_Count)
WEFT_MPI_FUNCTION(int, File_get_type_extent_c, (MPI_File fh, MPI_Datatype datatype, MPI_Count *extent))
WEFT_MPI_FUNCTION(int, Register_datarep_c, (const char *datarep,
                                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                                            MPI_Datarep_extent_function *dtype_file_extent_fn,
                                            void *extra_state))

#undef WEFT_SEND_PARAMS_C
#undef WEFT_RECV_PARAMS_C
#undef WEFT_COLLECTIVE_C
#undef WEFT_BCAST_PARAMS_C
#undef WEFT_REDUCE_PARAMS_C
#undef WEFT_ALLREDUCE_PARAMS_C
#undef WEFT_GATHER_PARAMS_C
#undef WEFT_GATHERV_PARAMS_C
#undef WEFT_SCATTERV_PARAMS_C
#undef WEFT_ALLGATHER_PARAMS_C
#undef WEFT_ALLGATHERV_PARAMS_C
#undef WEFT_ALLTOALLV_PARAMS_C
#undef WEFT_ALLTOALLW_PARAMS_C
#undef WEFT_REDUCE_SCATTER_PARAMS_C
#undef WEFT_REDUCE_SCATTER_BLOCK_PARAMS_C
#undef WEFT_RMA_ORIGIN_C
#undef WEFT_RMA_RESULT_C
#undef WEFT_RMA_TARGET_C
