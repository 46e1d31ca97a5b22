/*
 * weft/mpi_functions.h - every MPI routine of weft's C interface, once.
 *
 * Not a header of its own: it has no include guard and declares nothing by
 * itself.  Each line names a routine through a macro that the includer
 * defines first (and undefines after), so that one list gives mpi.h both
 * the MPI_ and the PMPI_ prototypes and gives tests the list of names:
 *
 *   WEFT_MPI_FUNCTION(ret, name, (params))           MPI_name and PMPI_name
 *   WEFT_MPIX_FUNCTION(ret, name, (params))          MPIX_name and PMPIX_name
 *   WEFT_MPIX_FUNCTION_NO_PMPI(ret, name, (params))  MPIX_name only
 *
 * Programs get it through <mpi.h>.  A file that includes the list itself
 * defines all three macros, and includes <mpi.h> first if they expand to
 * anything that needs the MPI types.  tools/gen_unsupported.py parses the
 * list after the C preprocessor and tests/tools/check_link_all.sh expands it
 * to names: keep it to comments, these macros and the shared pieces below (and the
 * include of its large-count part, weft/mpi_functions_large.h).
 *
 * What several routines share is written once, in macros the list defines
 * first and undefines at its end: the parameters of a send of any mode, of
 * a receive and of each collective (which the blocking, nonblocking,
 * persistent and enqueued forms extend), the three forms of a collective
 * (WEFT_COLLECTIVE), the attribute routines of a kind of object
 * (WEFT_ATTR_ROUTINES) and MPI-IO's data access routines for one count type
 * (WEFT_FILE_ACCESS_ALL, from WEFT_FILE_ACCESS and WEFT_FILE_SHARED_ACCESS); each
 * of those lines declares several routines.
 */
#define WEFT_SEND_PARAMS const void *buf, int count, MPI_Datatype datatype, int dest, int tag, \
  MPI_Comm comm
#define WEFT_RECV_PARAMS void *buf, int count, MPI_Datatype datatype, int source, int tag, \
  MPI_Comm comm
/* A send-receive's parameters (and in place: one buffer), with counts of type Count. */
#define WEFT_SENDRECV_PARAMS(Count) const void *sendbuf, Count sendcount, \
  MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, Count recvcount, \
  MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm
#define WEFT_SENDRECV_REPLACE_PARAMS(Count) void *buf, Count count, MPI_Datatype datatype, \
  int dest, int sendtag, int source, int recvtag, MPI_Comm comm

/* The collectives' parameters, named after the first routine that takes them: ALLREDUCE's are
 * Scan's and Exscan's too, GATHER's Scatter's, ALLGATHER's Alltoall's and their neighbourhood
 * forms', ALLGATHERV's and ALLTOALLV's their neighbourhood forms'. */
#define WEFT_BCAST_PARAMS void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm
#define WEFT_REDUCE_PARAMS const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, \
  MPI_Op op, int root, MPI_Comm comm
#define WEFT_ALLREDUCE_PARAMS const void *sendbuf, void *recvbuf, int count, \
  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define WEFT_GATHER_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm
#define WEFT_GATHERV_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype,        \
  void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, \
  MPI_Comm comm
#define WEFT_SCATTERV_PARAMS const void *sendbuf, const int sendcounts[], const int displs[], \
  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,       \
  MPI_Comm comm
#define WEFT_ALLGATHER_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define WEFT_ALLGATHERV_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype,         \
  void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm
#define WEFT_ALLTOALLV_PARAMS const void *sendbuf, const int sendcounts[], const int sdispls[], \
  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],            \
  MPI_Datatype recvtype, MPI_Comm comm
#define WEFT_ALLTOALLW_PARAMS const void *sendbuf, const int sendcounts[], const int sdispls[], \
  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],   \
  const MPI_Datatype recvtypes[], MPI_Comm comm
#define WEFT_NEIGHBOR_ALLTOALLW_PARAMS const void *sendbuf, const int sendcounts[],                \
  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], \
  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define WEFT_REDUCE_SCATTER_PARAMS const void *sendbuf, void *recvbuf, const int recvcounts[], \
  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm
#define WEFT_REDUCE_SCATTER_BLOCK_PARAMS const void *sendbuf, void *recvbuf, int recvcount, \
  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm

/* A collective in its three forms: WEFT_COLLECTIVE(X, IX, params) declares X (params), the
 * nonblocking IX (params, MPI_Request *request) and the persistent X_init (params,
 * MPI_Info info, MPI_Request *request). */
#define WEFT_COLLECTIVE(name, iname, params)                                  \
  WEFT_MPI_FUNCTION(int, name, (params))                                      \
  WEFT_MPI_FUNCTION(int, iname, (params, MPI_Request *request))               \
  WEFT_MPI_FUNCTION(int, name##_init, (params, MPI_Info info, MPI_Request *request))

/* The block-indexed datatype constructors with counts of type Count and displacements of
 * type Displ (in extents) and HDispl (in bytes), named with the suffix c (_c: large-count). */
#define WEFT_BLOCK_INDEXED(c, Count, Displ, HDispl)                                       \
  WEFT_MPI_FUNCTION(int, Type_create_indexed_block##c,                                    \
                    (Count count, Count blocklength, const Displ array_of_displacements[], \
                     MPI_Datatype oldtype, MPI_Datatype *newtype))                         \
  WEFT_MPI_FUNCTION(int, Type_create_hindexed_block##c,                                   \
                    (Count count, Count blocklength, const HDispl array_of_displacements[], \
                     MPI_Datatype oldtype, MPI_Datatype *newtype))

/* MPI_Type_create_darray with global sizes of type Count, named with the suffix c. */
#define WEFT_DARRAY(c, Count)                                                                  \
  WEFT_MPI_FUNCTION(int, Type_create_darray##c,                                               \
                    (int size, int rank, int ndims, const Count array_of_gsizes[],            \
                     const int array_of_distribs[], const int array_of_dargs[],               \
                     const int array_of_psizes[], int order, MPI_Datatype oldtype,            \
                     MPI_Datatype *newtype))

/* The five attribute routines of a kind of object (communicators, windows, datatypes):
 * WEFT_ATTR_ROUTINES(Kind, handle parameter) declares Kind_create_keyval,
 * Kind_free_keyval, Kind_set_attr, Kind_get_attr and Kind_delete_attr. */
#define WEFT_ATTR_ROUTINES(kind, object)                                                          \
  WEFT_MPI_FUNCTION(int, kind##_create_keyval, (MPI_##kind##_copy_attr_function *copy_attr_fn,     \
                                                MPI_##kind##_delete_attr_function *delete_attr_fn, \
                                                int *keyval, void *extra_state))                   \
  WEFT_MPI_FUNCTION(int, kind##_free_keyval, (int *keyval))                                       \
  WEFT_MPI_FUNCTION(int, kind##_set_attr, (object, int keyval, void *attribute_val))              \
  WEFT_MPI_FUNCTION(int, kind##_get_attr, (object, int keyval, void *attribute_val, int *flag))   \
  WEFT_MPI_FUNCTION(int, kind##_delete_attr, (object, int keyval))

/* -- Environment: start-up, shutdown, threads, timers, identification -- */
WEFT_MPI_FUNCTION(int, Init, (int *argc, char ***argv))
WEFT_MPI_FUNCTION(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
WEFT_MPI_FUNCTION(int, Initialized, (int *flag))
WEFT_MPI_FUNCTION(int, Finalize, (void))
WEFT_MPI_FUNCTION(int, Finalized, (int *flag))
WEFT_MPI_FUNCTION(int, Abort, (MPI_Comm comm, int errorcode))
WEFT_MPI_FUNCTION(int, Query_thread, (int *provided))
WEFT_MPI_FUNCTION(int, Is_thread_main, (int *flag))
WEFT_MPI_FUNCTION(double, Wtime, (void))
WEFT_MPI_FUNCTION(double, Wtick, (void))
WEFT_MPI_FUNCTION(int, Get_processor_name, (char *name, int *resultlen))
WEFT_MPI_FUNCTION(int, Get_version, (int *version, int *subversion))
WEFT_MPI_FUNCTION(int, Get_library_version, (char *version, int *resultlen))

/* -- Sessions (MPI-4.0) -- */
WEFT_MPI_FUNCTION(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler,
                                      MPI_Session *session))
WEFT_MPI_FUNCTION(int, Session_finalize, (MPI_Session *session))
WEFT_MPI_FUNCTION(int, Session_get_num_psets, (MPI_Session session, MPI_Info info,
                                               int *npset_names))
WEFT_MPI_FUNCTION(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info, int n,
                                              int *pset_len, char *pset_name))
WEFT_MPI_FUNCTION(int, Session_get_info, (MPI_Session session, MPI_Info *info_used))
WEFT_MPI_FUNCTION(int, Session_get_pset_info, (MPI_Session session, const char *pset_name,
                                               MPI_Info *info))
WEFT_MPI_FUNCTION(int, Group_from_session_pset, (MPI_Session session, const char *pset_name,
                                                 MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Comm_create_from_group, (MPI_Group group, const char *stringtag,
                                                MPI_Info info, MPI_Errhandler errhandler,
                                                MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Intercomm_create_from_groups,
                  (MPI_Group local_group, int local_leader, MPI_Group remote_group,
                   int remote_leader, const char *stringtag, MPI_Info info,
                   MPI_Errhandler errhandler, MPI_Comm *newintercomm))
WEFT_MPI_FUNCTION(int, Session_create_errhandler,
                  (MPI_Session_errhandler_function *session_errhandler_fn,
                   MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler))
WEFT_MPI_FUNCTION(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Session_call_errhandler, (MPI_Session session, int errorcode))

/* -- Communicator queries and names -- */
WEFT_MPI_FUNCTION(int, Comm_rank, (MPI_Comm comm, int *rank))
WEFT_MPI_FUNCTION(int, Comm_size, (MPI_Comm comm, int *size))
WEFT_MPI_FUNCTION(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
WEFT_MPI_FUNCTION(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))

/* -- Communicator creation, comparison and info -- */
WEFT_MPI_FUNCTION(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                             MPI_Request *request))
WEFT_MPI_FUNCTION(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info,
                                         MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag,
                                           MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_free, (MPI_Comm *comm))
WEFT_MPI_FUNCTION(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
WEFT_MPI_FUNCTION(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
WEFT_MPI_FUNCTION(int, Comm_test_inter, (MPI_Comm comm, int *flag))
WEFT_MPI_FUNCTION(int, Comm_remote_size, (MPI_Comm comm, int *size))
WEFT_MPI_FUNCTION(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
WEFT_MPI_FUNCTION(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
WEFT_MPI_FUNCTION(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))

/* -- Communicator attributes (and their MPI-1 forms) -- */
WEFT_ATTR_ROUTINES(Comm, MPI_Comm comm)
WEFT_MPI_FUNCTION(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                                       int *keyval, void *extra_state))
WEFT_MPI_FUNCTION(int, Keyval_free, (int *keyval))
WEFT_MPI_FUNCTION(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
WEFT_MPI_FUNCTION(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
WEFT_MPI_FUNCTION(int, Attr_delete, (MPI_Comm comm, int keyval))

/* -- Groups -- */
WEFT_MPI_FUNCTION(int, Group_size, (MPI_Group group, int *size))
WEFT_MPI_FUNCTION(int, Group_rank, (MPI_Group group, int *rank))
WEFT_MPI_FUNCTION(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3],
                                          MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3],
                                          MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_intersection, (MPI_Group group1, MPI_Group group2,
                                            MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
WEFT_MPI_FUNCTION(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
WEFT_MPI_FUNCTION(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[],
                                               MPI_Group group2, int ranks2[]))
WEFT_MPI_FUNCTION(int, Group_free, (MPI_Group *group))

/* -- Cartesian topologies -- */
WEFT_MPI_FUNCTION(int, Dims_create, (int nnodes, int ndims, int dims[]))
WEFT_MPI_FUNCTION(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[],
                                     const int periods[], int reorder, MPI_Comm *comm_cart))
WEFT_MPI_FUNCTION(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
WEFT_MPI_FUNCTION(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
WEFT_MPI_FUNCTION(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source,
                                    int *rank_dest))
WEFT_MPI_FUNCTION(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[],
                                  int coords[]))
WEFT_MPI_FUNCTION(int, Cartdim_get, (MPI_Comm comm, int *ndims))
WEFT_MPI_FUNCTION(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[],
                                  int *newrank))
WEFT_MPI_FUNCTION(int, Topo_test, (MPI_Comm comm, int *status))

/* -- Graph and distributed-graph topologies -- */
WEFT_MPI_FUNCTION(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int indx[],
                                      const int edges[], int reorder, MPI_Comm *comm_graph))
WEFT_MPI_FUNCTION(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int indx[],
                                   int edges[]))
WEFT_MPI_FUNCTION(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
WEFT_MPI_FUNCTION(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors,
                                         int neighbors[]))
WEFT_MPI_FUNCTION(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
WEFT_MPI_FUNCTION(int, Graph_map, (MPI_Comm comm, int nnodes, const int indx[], const int edges[],
                                   int *newrank))
WEFT_MPI_FUNCTION(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[],
                                           const int degrees[], const int destinations[],
                                           const int weights[], MPI_Info info, int reorder,
                                           MPI_Comm *comm_dist_graph))
WEFT_MPI_FUNCTION(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree,
                                                    const int sources[], const int sourceweights[],
                                                    int outdegree, const int destinations[],
                                                    const int destweights[], MPI_Info info,
                                                    int reorder, MPI_Comm *comm_dist_graph))
WEFT_MPI_FUNCTION(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[],
                                              int sourceweights[], int maxoutdegree,
                                              int destinations[], int destweights[]))
WEFT_MPI_FUNCTION(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree,
                                                    int *weighted))

/* -- Blocking point-to-point -- */
WEFT_MPI_FUNCTION(int, Send, (WEFT_SEND_PARAMS))
WEFT_MPI_FUNCTION(int, Ssend, (WEFT_SEND_PARAMS))
WEFT_MPI_FUNCTION(int, Rsend, (WEFT_SEND_PARAMS))
WEFT_MPI_FUNCTION(int, Bsend, (WEFT_SEND_PARAMS))
WEFT_MPI_FUNCTION(int, Recv, (WEFT_RECV_PARAMS, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Sendrecv, (WEFT_SENDRECV_PARAMS(int), MPI_Status *status))
WEFT_MPI_FUNCTION(int, Sendrecv_replace, (WEFT_SENDRECV_REPLACE_PARAMS(int), MPI_Status *status))
WEFT_MPI_FUNCTION(int, Isendrecv, (WEFT_SENDRECV_PARAMS(int), MPI_Request *request))
WEFT_MPI_FUNCTION(int, Isendrecv_replace, (WEFT_SENDRECV_REPLACE_PARAMS(int),
                                           MPI_Request *request))

/* -- Buffered-mode send buffer -- */
WEFT_MPI_FUNCTION(int, Buffer_attach, (void *buffer, int size))
WEFT_MPI_FUNCTION(int, Buffer_detach, (void *buffer_addr, int *size))
WEFT_MPI_FUNCTION(int, Buffer_flush, (void))
WEFT_MPI_FUNCTION(int, Buffer_iflush, (MPI_Request *request))
WEFT_MPI_FUNCTION(int, Comm_attach_buffer, (MPI_Comm comm, void *buffer, int size))
WEFT_MPI_FUNCTION(int, Comm_detach_buffer, (MPI_Comm comm, void *buffer_addr, int *size))
WEFT_MPI_FUNCTION(int, Comm_flush_buffer, (MPI_Comm comm))
WEFT_MPI_FUNCTION(int, Comm_iflush_buffer, (MPI_Comm comm, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Session_attach_buffer, (MPI_Session session, void *buffer, int size))
WEFT_MPI_FUNCTION(int, Session_detach_buffer, (MPI_Session session, void *buffer_addr, int *size))
WEFT_MPI_FUNCTION(int, Session_flush_buffer, (MPI_Session session))
WEFT_MPI_FUNCTION(int, Session_iflush_buffer, (MPI_Session session, MPI_Request *request))

/* -- Nonblocking point-to-point -- */
WEFT_MPI_FUNCTION(int, Isend, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Issend, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Irsend, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Ibsend, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Irecv, (WEFT_RECV_PARAMS, MPI_Request *request))

/* -- Persistent requests -- */
WEFT_MPI_FUNCTION(int, Send_init, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Ssend_init, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Rsend_init, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Bsend_init, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Recv_init, (WEFT_RECV_PARAMS, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Start, (MPI_Request *request))
WEFT_MPI_FUNCTION(int, Startall, (int count, MPI_Request array_of_requests[]))

/* -- Partitioned point-to-point (MPI-4.0) -- */
WEFT_MPI_FUNCTION(int, Psend_init, (const void *buf, int partitions, MPI_Count count,
                                    MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Precv_init, (void *buf, int partitions, MPI_Count count,
                                    MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Pready, (int partition, MPI_Request request))
WEFT_MPI_FUNCTION(int, Pready_range, (int partition_low, int partition_high, MPI_Request request))
WEFT_MPI_FUNCTION(int, Pready_list, (int length, int array_of_partitions[],
                                     MPI_Request request))
WEFT_MPI_FUNCTION(int, Parrived, (MPI_Request request, int partition, int *flag))

/* -- Request completion, cancellation and release -- */
WEFT_MPI_FUNCTION(int, Wait, (MPI_Request *request, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Waitall, (int count, MPI_Request array_of_requests[],
                                 MPI_Status *array_of_statuses))
WEFT_MPI_FUNCTION(int, Waitany, (int count, MPI_Request array_of_requests[], int *indx,
                                 MPI_Status *status))
WEFT_MPI_FUNCTION(int, Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount,
                                  int array_of_indices[], MPI_Status *array_of_statuses))
WEFT_MPI_FUNCTION(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Testall, (int count, MPI_Request array_of_requests[], int *flag,
                                 MPI_Status *array_of_statuses))
WEFT_MPI_FUNCTION(int, Testany, (int count, MPI_Request array_of_requests[], int *indx, int *flag,
                                 MPI_Status *status))
WEFT_MPI_FUNCTION(int, Testsome, (int incount, MPI_Request array_of_requests[], int *outcount,
                                  int array_of_indices[], MPI_Status *array_of_statuses))
WEFT_MPI_FUNCTION(int, Request_free, (MPI_Request *request))
WEFT_MPI_FUNCTION(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Cancel, (MPI_Request *request))

/* -- Probing and matched receives -- */
WEFT_MPI_FUNCTION(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message,
                                MPI_Status *status))
WEFT_MPI_FUNCTION(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag,
                                 MPI_Message *message, MPI_Status *status))
WEFT_MPI_FUNCTION(int, Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                               MPI_Status *status))
WEFT_MPI_FUNCTION(int, Imrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                                MPI_Request *request))

/* -- Status inspection -- */
WEFT_MPI_FUNCTION(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
WEFT_MPI_FUNCTION(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))

/* -- Status manipulation -- */
WEFT_MPI_FUNCTION(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype,
                                        MPI_Count *count))
WEFT_MPI_FUNCTION(int, Status_set_elements, (MPI_Status *status, MPI_Datatype datatype, int count))
WEFT_MPI_FUNCTION(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype datatype,
                                               MPI_Count count))
WEFT_MPI_FUNCTION(int, Status_set_cancelled, (MPI_Status *status, int flag))
WEFT_MPI_FUNCTION(int, Test_cancelled, (const MPI_Status *status, int *flag))

/* -- Datatype queries -- */
WEFT_MPI_FUNCTION(int, Type_size, (MPI_Datatype datatype, int *size))
WEFT_MPI_FUNCTION(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))

/* -- Derived datatype constructors, commit and free -- */
WEFT_MPI_FUNCTION(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_hvector, (int count, int blocklength, MPI_Aint stride,
                                      MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride,
                                             MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_indexed, (int count, const int array_of_blocklengths[],
                                      const int array_of_displacements[], MPI_Datatype oldtype,
                                      MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_hindexed, (int count, int array_of_blocklengths[],
                                       MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                       MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_hindexed, (int count, const int array_of_blocklengths[],
                                              const MPI_Aint array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_BLOCK_INDEXED(, int, int, MPI_Aint)
WEFT_MPI_FUNCTION(int, Type_create_struct, (int count, const int array_of_blocklengths[],
                                            const MPI_Aint array_of_displacements[],
                                            const MPI_Datatype array_of_types[],
                                            MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_struct, (int count, int array_of_blocklengths[],
                                     MPI_Aint array_of_displacements[],
                                     MPI_Datatype array_of_types[], MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                             MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_subarray, (int ndims, const int array_of_sizes[],
                                              const int array_of_subsizes[],
                                              const int array_of_starts[], int order,
                                              MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_DARRAY(, int)
WEFT_MPI_FUNCTION(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_commit, (MPI_Datatype *datatype))
WEFT_MPI_FUNCTION(int, Type_free, (MPI_Datatype *datatype))

/* -- Datatype extents, envelopes and names -- */
WEFT_MPI_FUNCTION(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
WEFT_MPI_FUNCTION(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
WEFT_MPI_FUNCTION(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
WEFT_MPI_FUNCTION(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb,
                                              MPI_Aint *true_extent))
WEFT_MPI_FUNCTION(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count *true_lb,
                                                MPI_Count *true_extent))
WEFT_MPI_FUNCTION(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
WEFT_MPI_FUNCTION(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
WEFT_MPI_FUNCTION(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
WEFT_MPI_FUNCTION(int, Type_get_envelope, (MPI_Datatype datatype, int *num_integers,
                                           int *num_addresses, int *num_datatypes, int *combiner))
WEFT_MPI_FUNCTION(int, Type_get_contents, (MPI_Datatype datatype, int max_integers,
                                           int max_addresses, int max_datatypes,
                                           int array_of_integers[], MPI_Aint array_of_addresses[],
                                           MPI_Datatype array_of_datatypes[]))
WEFT_MPI_FUNCTION(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))

/* -- Addresses -- */
WEFT_MPI_FUNCTION(int, Get_address, (const void *location, MPI_Aint *address))
WEFT_MPI_FUNCTION(int, Address, (void *location, MPI_Aint *address))
WEFT_MPI_FUNCTION(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
WEFT_MPI_FUNCTION(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))

/* -- Packing -- */
WEFT_MPI_FUNCTION(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                              int outsize, int *position, MPI_Comm comm))
WEFT_MPI_FUNCTION(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf,
                                int outcount, MPI_Datatype datatype, MPI_Comm comm))
WEFT_MPI_FUNCTION(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))

/* -- Fortran interoperability: statuses and parameterised types -- */
WEFT_MPI_FUNCTION(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
WEFT_MPI_FUNCTION(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))
WEFT_MPI_FUNCTION(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
WEFT_MPI_FUNCTION(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))

/* -- Packing in the external32 representation -- */
WEFT_MPI_FUNCTION(int, Pack_external, (const char *datarep, const void *inbuf, int incount,
                                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
                                       MPI_Aint *position))
WEFT_MPI_FUNCTION(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize,
                                         MPI_Aint *position, void *outbuf, int outcount,
                                         MPI_Datatype datatype))
WEFT_MPI_FUNCTION(int, Pack_external_size, (const char *datarep, int incount,
                                            MPI_Datatype datatype, MPI_Aint *size))
WEFT_MPI_FUNCTION(int, Pack_external_c, (const char *datarep, const void *inbuf,
                                         MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                                         MPI_Count outsize, MPI_Count *position))
WEFT_MPI_FUNCTION(int, Unpack_external_c, (const char datarep[], const void *inbuf,
                                           MPI_Count insize, MPI_Count *position, void *outbuf,
                                           MPI_Count outcount, MPI_Datatype datatype))
WEFT_MPI_FUNCTION(int, Pack_external_size_c, (const char *datarep, MPI_Count incount,
                                              MPI_Datatype datatype, MPI_Count *size))

/* -- Error handlers -- */
WEFT_MPI_FUNCTION(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *comm_errhandler_fn,
                                                MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
WEFT_MPI_FUNCTION(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
WEFT_MPI_FUNCTION(int, Errhandler_free, (MPI_Errhandler *errhandler))

/* -- Error handlers, MPI-1 forms (deprecated) -- */
WEFT_MPI_FUNCTION(int, Errhandler_create, (MPI_Comm_errhandler_function *comm_errhandler_fn,
                                           MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
WEFT_MPI_FUNCTION(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))

/* -- Error codes, classes and strings -- */
WEFT_MPI_FUNCTION(int, Error_string, (int errorcode, char *string, int *resultlen))
WEFT_MPI_FUNCTION(int, Error_class, (int errorcode, int *errorclass))
WEFT_MPI_FUNCTION(int, Add_error_class, (int *errorclass))
WEFT_MPI_FUNCTION(int, Add_error_code, (int errorclass, int *errorcode))
WEFT_MPI_FUNCTION(int, Add_error_string, (int errorcode, const char *string))

/* -- Info objects -- */
WEFT_MPI_FUNCTION(int, Info_create, (MPI_Info *info))
WEFT_MPI_FUNCTION(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))
WEFT_MPI_FUNCTION(int, Info_set, (MPI_Info info, const char *key, const char *value))
WEFT_MPI_FUNCTION(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value,
                                  int *flag))
WEFT_MPI_FUNCTION(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
WEFT_MPI_FUNCTION(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
WEFT_MPI_FUNCTION(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen,
                                           int *flag))
WEFT_MPI_FUNCTION(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value,
                                         int *flag))
WEFT_MPI_FUNCTION(int, Info_delete, (MPI_Info info, const char *key))
WEFT_MPI_FUNCTION(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
WEFT_MPI_FUNCTION(int, Info_free, (MPI_Info *info))

/* -- Memory allocation -- */
WEFT_MPI_FUNCTION(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
WEFT_MPI_FUNCTION(int, Free_mem, (void *base))

/* -- User-defined reduction operations -- */
WEFT_MPI_FUNCTION(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op))
WEFT_MPI_FUNCTION(int, Op_free, (MPI_Op *op))
WEFT_MPI_FUNCTION(int, Op_commutative, (MPI_Op op, int *commute))
WEFT_MPI_FUNCTION(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op))

/* -- Collectives: each in its blocking, nonblocking and persistent (MPI-4) form -- */
WEFT_COLLECTIVE(Barrier, Ibarrier, MPI_Comm comm)
WEFT_COLLECTIVE(Bcast, Ibcast, WEFT_BCAST_PARAMS)
WEFT_COLLECTIVE(Reduce, Ireduce, WEFT_REDUCE_PARAMS)
WEFT_COLLECTIVE(Allreduce, Iallreduce, WEFT_ALLREDUCE_PARAMS)
WEFT_COLLECTIVE(Gather, Igather, WEFT_GATHER_PARAMS)
WEFT_COLLECTIVE(Gatherv, Igatherv, WEFT_GATHERV_PARAMS)
WEFT_COLLECTIVE(Scatter, Iscatter, WEFT_GATHER_PARAMS)
WEFT_COLLECTIVE(Scatterv, Iscatterv, WEFT_SCATTERV_PARAMS)
WEFT_COLLECTIVE(Allgather, Iallgather, WEFT_ALLGATHER_PARAMS)
WEFT_COLLECTIVE(Allgatherv, Iallgatherv, WEFT_ALLGATHERV_PARAMS)
WEFT_COLLECTIVE(Alltoall, Ialltoall, WEFT_ALLGATHER_PARAMS)
WEFT_COLLECTIVE(Alltoallv, Ialltoallv, WEFT_ALLTOALLV_PARAMS)
WEFT_COLLECTIVE(Alltoallw, Ialltoallw, WEFT_ALLTOALLW_PARAMS)
WEFT_COLLECTIVE(Reduce_scatter, Ireduce_scatter, WEFT_REDUCE_SCATTER_PARAMS)
WEFT_COLLECTIVE(Reduce_scatter_block, Ireduce_scatter_block, WEFT_REDUCE_SCATTER_BLOCK_PARAMS)
WEFT_COLLECTIVE(Scan, Iscan, WEFT_ALLREDUCE_PARAMS)
WEFT_COLLECTIVE(Exscan, Iexscan, WEFT_ALLREDUCE_PARAMS)

/* -- Neighbourhood collectives: WEFT_NEIGHBOR_COLLECTIVES(FORMS, c, wparams) declares the five
 * through FORMS (WEFT_COLLECTIVE, or WEFT_COLLECTIVE_C with c _C), with the parameters of the
 * collective each is named after (suffix c) and Neighbor_alltoallw's WEFT_<w>. -- */
#define WEFT_NEIGHBOR_COLLECTIVES(FORMS, c, w)                                     \
  FORMS(Neighbor_allgather, Ineighbor_allgather, WEFT_ALLGATHER_PARAMS##c)         \
  FORMS(Neighbor_allgatherv, Ineighbor_allgatherv, WEFT_ALLGATHERV_PARAMS##c)      \
  FORMS(Neighbor_alltoall, Ineighbor_alltoall, WEFT_ALLGATHER_PARAMS##c)           \
  FORMS(Neighbor_alltoallv, Ineighbor_alltoallv, WEFT_ALLTOALLV_PARAMS##c)         \
  FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, WEFT_##w)
WEFT_NEIGHBOR_COLLECTIVES(WEFT_COLLECTIVE, , NEIGHBOR_ALLTOALLW_PARAMS)

/* Some routines from here down to MPI_Pcontrol are declared so that
 * programs link and run up to their first use: until weft implements
 * them they fail with MPI_ERR_UNSUPPORTED_OPERATION (MPI_Pcontrol is a
 * no-op).  `weft_info --unsupported` lists them. */

/* -- One-sided: window creation and release -- */
WEFT_MPI_FUNCTION(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                                    MPI_Comm comm, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                      void *baseptr, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info,
                                             MPI_Comm comm, void *baseptr, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                          void *baseptr))
WEFT_MPI_FUNCTION(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
WEFT_MPI_FUNCTION(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
WEFT_MPI_FUNCTION(int, Win_detach, (MPI_Win win, const void *base))
WEFT_MPI_FUNCTION(int, Win_free, (MPI_Win *win))

/* -- One-sided: window attributes, names, info and error handlers -- */
WEFT_ATTR_ROUTINES(Win, MPI_Win win)
WEFT_MPI_FUNCTION(int, Win_set_name, (MPI_Win win, const char *win_name))
WEFT_MPI_FUNCTION(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
WEFT_MPI_FUNCTION(int, Win_get_group, (MPI_Win win, MPI_Group *group))
WEFT_MPI_FUNCTION(int, Win_set_info, (MPI_Win win, MPI_Info info))
WEFT_MPI_FUNCTION(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
WEFT_MPI_FUNCTION(int, Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn,
                                               MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
WEFT_MPI_FUNCTION(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, Win_call_errhandler, (MPI_Win win, int errorcode))

/* -- One-sided: communication -- */
WEFT_MPI_FUNCTION(int, Put, (const void *origin_addr, int origin_count,
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                             int target_count, MPI_Datatype target_datatype, MPI_Win win))
WEFT_MPI_FUNCTION(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                             int target_rank, MPI_Aint target_disp, int target_count,
                             MPI_Datatype target_datatype, MPI_Win win))
WEFT_MPI_FUNCTION(int, Accumulate, (const void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, int target_rank,
                                    MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
WEFT_MPI_FUNCTION(int, Get_accumulate, (const void *origin_addr, int origin_count,
                                        MPI_Datatype origin_datatype, void *result_addr,
                                        int result_count, MPI_Datatype result_datatype,
                                        int target_rank, MPI_Aint target_disp, int target_count,
                                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
WEFT_MPI_FUNCTION(int, Fetch_and_op, (const void *origin_addr, void *result_addr,
                                      MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                      MPI_Op op, MPI_Win win))
WEFT_MPI_FUNCTION(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr,
                                          void *result_addr, MPI_Datatype datatype, int target_rank,
                                          MPI_Aint target_disp, MPI_Win win))
WEFT_MPI_FUNCTION(int, Rput, (const void *origin_addr, int origin_count,
                              MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                              int target_count, MPI_Datatype target_datatype, MPI_Win win,
                              MPI_Request *request))
WEFT_MPI_FUNCTION(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                              int target_rank, MPI_Aint target_disp, int target_count,
                              MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
WEFT_MPI_FUNCTION(int, Raccumulate, (const void *origin_addr, int origin_count,
                                     MPI_Datatype origin_datatype, int target_rank,
                                     MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                     MPI_Request *request))
WEFT_MPI_FUNCTION(int, Rget_accumulate, (const void *origin_addr, int origin_count,
                                         MPI_Datatype origin_datatype, void *result_addr,
                                         int result_count, MPI_Datatype result_datatype,
                                         int target_rank, MPI_Aint target_disp, int target_count,
                                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                         MPI_Request *request))

/* -- One-sided: synchronisation -- */
WEFT_MPI_FUNCTION(int, Win_fence, (int assert, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_complete, (MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_wait, (MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_test, (MPI_Win win, int *flag))
WEFT_MPI_FUNCTION(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_unlock, (int rank, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_lock_all, (int assert, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_unlock_all, (MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_flush, (int rank, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_flush_local, (int rank, MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_flush_all, (MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_flush_local_all, (MPI_Win win))
WEFT_MPI_FUNCTION(int, Win_sync, (MPI_Win win))

/* -- Datatype attributes and size matching -- */
WEFT_ATTR_ROUTINES(Type, MPI_Datatype datatype)
WEFT_MPI_FUNCTION(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype))

/* -- Process creation and intercommunicators -- */
WEFT_MPI_FUNCTION(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info,
                                    int root, MPI_Comm comm, MPI_Comm *intercomm,
                                    int array_of_errcodes[]))
WEFT_MPI_FUNCTION(int, Comm_get_parent, (MPI_Comm *parent))
WEFT_MPI_FUNCTION(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                          int remote_leader, int tag, MPI_Comm *newintercomm))
WEFT_MPI_FUNCTION(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))

/* -- Client/server connection -- */
WEFT_MPI_FUNCTION(int, Open_port, (MPI_Info info, char *port_name))
WEFT_MPI_FUNCTION(int, Close_port, (const char *port_name))
WEFT_MPI_FUNCTION(int, Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                     MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                      MPI_Comm *newcomm))
WEFT_MPI_FUNCTION(int, Comm_disconnect, (MPI_Comm *comm))

/* -- Generalized requests -- */
WEFT_MPI_FUNCTION(int, Grequest_start, (MPI_Grequest_query_function *query_fn,
                                        MPI_Grequest_free_function *free_fn,
                                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                                        MPI_Request *request))
WEFT_MPI_FUNCTION(int, Grequest_complete, (MPI_Request request))

/* -- Files (MPI-IO; MPI_Register_datarep is not supported yet). Each data access routine
 * comes as read and write, with an explicit offset or at the file pointer. -- */
#define WEFT_FILE_ACCESS(name, Buf, at, offset_param, c, Count)                                 \
  WEFT_MPI_FUNCTION(int, File_##name##at##c, (MPI_File fh, offset_param Buf *buf, Count count,  \
                                              MPI_Datatype datatype, MPI_Status *status))      \
  WEFT_MPI_FUNCTION(int, File_##name##at##_all##c, (MPI_File fh, offset_param Buf *buf,        \
                                                    Count count, MPI_Datatype datatype,        \
                                                    MPI_Status *status))                       \
  WEFT_MPI_FUNCTION(int, File_i##name##at##c, (MPI_File fh, offset_param Buf *buf, Count count, \
                                               MPI_Datatype datatype, MPI_Request *request))   \
  WEFT_MPI_FUNCTION(int, File_i##name##at##_all##c, (MPI_File fh, offset_param Buf *buf,       \
                                                     Count count, MPI_Datatype datatype,       \
                                                     MPI_Request *request))                    \
  WEFT_MPI_FUNCTION(int, File_##name##at##_all_begin##c, (MPI_File fh, offset_param Buf *buf,  \
                                                          Count count, MPI_Datatype datatype))
#define WEFT_FILE_SHARED_ACCESS(name, Buf, c, Count)                                            \
  WEFT_MPI_FUNCTION(int, File_##name##_shared##c, (MPI_File fh, Buf *buf, Count count,         \
                                                   MPI_Datatype datatype, MPI_Status *status)) \
  WEFT_MPI_FUNCTION(int, File_i##name##_shared##c, (MPI_File fh, Buf *buf, Count count,        \
                                                    MPI_Datatype datatype,                     \
                                                    MPI_Request *request))                     \
  WEFT_MPI_FUNCTION(int, File_##name##_ordered##c, (MPI_File fh, Buf *buf, Count count,        \
                                                    MPI_Datatype datatype, MPI_Status *status)) \
  WEFT_MPI_FUNCTION(int, File_##name##_ordered_begin##c, (MPI_File fh, Buf *buf, Count count,  \
                                                          MPI_Datatype datatype))
/* Every data access routine of MPI-IO, with counts of type Count, named with the suffix c. */
#define WEFT_FILE_ACCESS_ALL(c, Count)                                                          \
  WEFT_FILE_ACCESS(read, void, _at, WEFT_FILE_OFFSET, c, Count)                                 \
  WEFT_FILE_ACCESS(write, const void, _at, WEFT_FILE_OFFSET, c, Count)                          \
  WEFT_FILE_ACCESS(read, void, , , c, Count)                                                    \
  WEFT_FILE_ACCESS(write, const void, , , c, Count)                                             \
  WEFT_FILE_SHARED_ACCESS(read, void, c, Count)                                                 \
  WEFT_FILE_SHARED_ACCESS(write, const void, c, Count)
#define WEFT_FILE_OFFSET MPI_Offset offset,
WEFT_MPI_FUNCTION(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                                   MPI_File *fh))
WEFT_MPI_FUNCTION(int, File_close, (MPI_File *fh))
WEFT_MPI_FUNCTION(int, File_delete, (const char *filename, MPI_Info info))
WEFT_MPI_FUNCTION(int, File_set_size, (MPI_File fh, MPI_Offset size))
WEFT_MPI_FUNCTION(int, File_preallocate, (MPI_File fh, MPI_Offset size))
WEFT_MPI_FUNCTION(int, File_get_size, (MPI_File fh, MPI_Offset *size))
WEFT_MPI_FUNCTION(int, File_get_group, (MPI_File fh, MPI_Group *group))
WEFT_MPI_FUNCTION(int, File_get_amode, (MPI_File fh, int *amode))
WEFT_MPI_FUNCTION(int, File_set_info, (MPI_File fh, MPI_Info info))
WEFT_MPI_FUNCTION(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
WEFT_MPI_FUNCTION(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                       MPI_Datatype filetype, const char *datarep, MPI_Info info))
WEFT_MPI_FUNCTION(int, File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                                       MPI_Datatype *filetype, char *datarep))
WEFT_FILE_ACCESS_ALL(, int)
WEFT_MPI_FUNCTION(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
WEFT_MPI_FUNCTION(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
WEFT_MPI_FUNCTION(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
WEFT_MPI_FUNCTION(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
WEFT_MPI_FUNCTION(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
WEFT_MPI_FUNCTION(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
WEFT_MPI_FUNCTION(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
WEFT_MPI_FUNCTION(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
WEFT_MPI_FUNCTION(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
WEFT_MPI_FUNCTION(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
WEFT_MPI_FUNCTION(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
WEFT_MPI_FUNCTION(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
WEFT_MPI_FUNCTION(int, Register_datarep, (const char *datarep,
                                          MPI_Datarep_conversion_function *read_conversion_fn,
                                          MPI_Datarep_conversion_function *write_conversion_fn,
                                          MPI_Datarep_extent_function *dtype_file_extent_fn,
                                          void *extra_state))
WEFT_MPI_FUNCTION(int, File_set_atomicity, (MPI_File fh, int flag))
WEFT_MPI_FUNCTION(int, File_get_atomicity, (MPI_File fh, int *flag))
WEFT_MPI_FUNCTION(int, File_sync, (MPI_File fh))
WEFT_MPI_FUNCTION(int, File_create_errhandler, (MPI_File_errhandler_function *file_errhandler_fn,
                                                MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
WEFT_MPI_FUNCTION(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
WEFT_MPI_FUNCTION(int, File_call_errhandler, (MPI_File fh, int errorcode))
WEFT_MPI_FUNCTION(MPI_Fint, File_c2f, (MPI_File file))
WEFT_MPI_FUNCTION(MPI_File, File_f2c, (MPI_Fint file))

/* -- Profiling control -- */
WEFT_MPI_FUNCTION(int, Pcontrol, (const int level, ...))

/* Extension: nonzero when device (CUDA) buffers may be passed to MPI calls */
WEFT_MPIX_FUNCTION_NO_PMPI(int, Query_cuda_support, (void))

/* Extension (MPICH 4.1 names): stream-ordered operations.  A stream wraps a
 * cudaStream_t given through info keys "type" = "cudaStream_t" and "value"
 * (set with MPIX_Info_set_hex); MPI_INFO_NULL gives a stream with no GPU
 * stream.  The *_enqueue calls take a communicator from
 * MPIX_Stream_comm_create with a GPU stream and run in that stream's order.
 * Bcast, Allgather, Reduce, Reduce_scatter and Reduce_scatter_block enqueue
 * are weft's, named the same way.  docs/ARCHITECTURE.md says which of them are stream-native. */
WEFT_MPIX_FUNCTION(int, Info_set_hex, (MPI_Info info, const char *key, const void *value,
                                       int value_size))
WEFT_MPIX_FUNCTION(int, Stream_create, (MPI_Info info, MPIX_Stream *stream))
WEFT_MPIX_FUNCTION(int, Stream_free, (MPIX_Stream *stream))
WEFT_MPIX_FUNCTION(int, Stream_comm_create, (MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm))
WEFT_MPIX_FUNCTION(int, Send_enqueue, (WEFT_SEND_PARAMS))
WEFT_MPIX_FUNCTION(int, Recv_enqueue, (WEFT_RECV_PARAMS, MPI_Status *status))
WEFT_MPIX_FUNCTION(int, Isend_enqueue, (WEFT_SEND_PARAMS, MPI_Request *request))
WEFT_MPIX_FUNCTION(int, Irecv_enqueue, (WEFT_RECV_PARAMS, MPI_Request *request))
WEFT_MPIX_FUNCTION(int, Wait_enqueue, (MPI_Request *request, MPI_Status *status))
WEFT_MPIX_FUNCTION(int, Waitall_enqueue, (int count, MPI_Request array_of_requests[],
                                          MPI_Status *array_of_statuses))
WEFT_MPIX_FUNCTION(int, Allreduce_enqueue, (WEFT_ALLREDUCE_PARAMS))
WEFT_MPIX_FUNCTION(int, Bcast_enqueue, (WEFT_BCAST_PARAMS))
WEFT_MPIX_FUNCTION(int, Allgather_enqueue, (WEFT_ALLGATHER_PARAMS))
WEFT_MPIX_FUNCTION(int, Reduce_scatter_block_enqueue, (WEFT_REDUCE_SCATTER_BLOCK_PARAMS))
WEFT_MPIX_FUNCTION(int, Reduce_scatter_enqueue, (WEFT_REDUCE_SCATTER_PARAMS))
WEFT_MPIX_FUNCTION(int, Reduce_enqueue, (WEFT_REDUCE_PARAMS))

/* Extension (weft's, MPIX style; the counterpart of NCCL's user buffer registration): registers
 * this rank's device buffer [buf, buf + size) with comm's GPU collectives.  Collective over
 * comm (every rank registers a buffer of its own; sizes may differ); every rank gets a handle or
 * every rank an error.  Allreduce calls (blocking, non-blocking, persistent and *_enqueue)
 * whose buffers lie inside registrations then read and write them in place on every peer, with
 * no host exchange per call.  At most 64 live registrations per communicator.  Deregistering is
 * local: it waits for this process's device work and drops the handle. */
WEFT_MPIX_FUNCTION(int, Comm_register_buffer, (MPI_Comm comm, const void *buf, MPI_Aint size,
                                               void **handle))
WEFT_MPIX_FUNCTION(int, Comm_deregister_buffer, (MPI_Comm comm, void *handle))

/* The MPI-4 large-count (_c) forms, listed apart; they use the shared pieces above. */
#include "mpi_functions_large.h"

#undef WEFT_SEND_PARAMS
#undef WEFT_FILE_ACCESS
#undef WEFT_FILE_SHARED_ACCESS
#undef WEFT_FILE_ACCESS_ALL
#undef WEFT_FILE_OFFSET
#undef WEFT_RECV_PARAMS
#undef WEFT_SENDRECV_PARAMS
#undef WEFT_SENDRECV_REPLACE_PARAMS
#undef WEFT_COLLECTIVE
#undef WEFT_BLOCK_INDEXED
#undef WEFT_DARRAY
#undef WEFT_NEIGHBOR_COLLECTIVES
#undef WEFT_ATTR_ROUTINES
#undef WEFT_BCAST_PARAMS
#undef WEFT_REDUCE_PARAMS
#undef WEFT_ALLREDUCE_PARAMS
#undef WEFT_GATHER_PARAMS
#undef WEFT_GATHERV_PARAMS
#undef WEFT_SCATTERV_PARAMS
#undef WEFT_ALLGATHER_PARAMS
#undef WEFT_ALLGATHERV_PARAMS
#undef WEFT_ALLTOALLV_PARAMS
#undef WEFT_ALLTOALLW_PARAMS
#undef WEFT_NEIGHBOR_ALLTOALLW_PARAMS
#undef WEFT_REDUCE_SCATTER_PARAMS
#undef WEFT_REDUCE_SCATTER_BLOCK_PARAMS

/* Fault tolerance (ULFM, as MPICH and Open MPI 5 name them) and straggler diagnosis: see
 * docs/RELIABILITY.md. MPIX_Comm_monitored_barrier: rank 0 waits up to timeout_ms for every
 * rank; *late_group receives the ranks that did not arrive (MPI_GROUP_EMPTY when all did). */
WEFT_MPIX_FUNCTION(int, Comm_revoke, (MPI_Comm comm))
WEFT_MPIX_FUNCTION(int, Comm_is_revoked, (MPI_Comm comm, int *flag))
WEFT_MPIX_FUNCTION(int, Comm_shrink, (MPI_Comm comm, MPI_Comm *newcomm))
WEFT_MPIX_FUNCTION(int, Comm_agree, (MPI_Comm comm, int *flag))
WEFT_MPIX_FUNCTION(int, Comm_failure_ack, (MPI_Comm comm))
WEFT_MPIX_FUNCTION(int, Comm_failure_get_acked, (MPI_Comm comm, MPI_Group *failedgrp))
WEFT_MPIX_FUNCTION(int, Comm_get_failed, (MPI_Comm comm, MPI_Group *failedgrp))
WEFT_MPIX_FUNCTION(int, Comm_monitored_barrier, (MPI_Comm comm, int timeout_ms, MPI_Group *late_group))

/* -- The tool information interface (MPI_T): see docs/ARCHITECTURE.md, "MPI_T" -- */
WEFT_MPI_FUNCTION(int, T_init_thread, (int required, int *provided))
WEFT_MPI_FUNCTION(int, T_finalize, (void))
WEFT_MPI_FUNCTION(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
WEFT_MPI_FUNCTION(int, T_enum_get_item, (MPI_T_enum enumtype, int indx, int *value, char *name,
                                         int *name_len))
WEFT_MPI_FUNCTION(int, T_cvar_get_num, (int *num_cvar))
WEFT_MPI_FUNCTION(int, T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity,
                                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                                         int *desc_len, int *bind, int *scope))
WEFT_MPI_FUNCTION(int, T_cvar_get_index, (const char *name, int *cvar_index))
WEFT_MPI_FUNCTION(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle,
                                             MPI_T_cvar_handle *handle, int *count))
WEFT_MPI_FUNCTION(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle))
WEFT_MPI_FUNCTION(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
WEFT_MPI_FUNCTION(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
WEFT_MPI_FUNCTION(int, T_pvar_get_num, (int *num_pvar))
WEFT_MPI_FUNCTION(int, T_pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity,
                                         int *var_class, MPI_Datatype *datatype,
                                         MPI_T_enum *enumtype, char *desc, int *desc_len,
                                         int *bind, int *readonly, int *continuous, int *atomic))
WEFT_MPI_FUNCTION(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index))
WEFT_MPI_FUNCTION(int, T_pvar_session_create, (MPI_T_pvar_session *session))
WEFT_MPI_FUNCTION(int, T_pvar_session_free, (MPI_T_pvar_session *session))
WEFT_MPI_FUNCTION(int, T_pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index,
                                             void *obj_handle, MPI_T_pvar_handle *handle,
                                             int *count))
WEFT_MPI_FUNCTION(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
WEFT_MPI_FUNCTION(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
WEFT_MPI_FUNCTION(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
WEFT_MPI_FUNCTION(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                     void *buf))
WEFT_MPI_FUNCTION(int, T_pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                      const void *buf))
WEFT_MPI_FUNCTION(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
WEFT_MPI_FUNCTION(int, T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                          void *buf))
WEFT_MPI_FUNCTION(int, T_category_get_num, (int *num_cat))
WEFT_MPI_FUNCTION(int, T_category_get_info, (int cat_index, char *name, int *name_len, char *desc,
                                             int *desc_len, int *num_cvars, int *num_pvars,
                                             int *num_categories))
WEFT_MPI_FUNCTION(int, T_category_get_index, (const char *name, int *cat_index))
WEFT_MPI_FUNCTION(int, T_category_get_cvars, (int cat_index, int len, int indices[]))
WEFT_MPI_FUNCTION(int, T_category_get_pvars, (int cat_index, int len, int indices[]))
WEFT_MPI_FUNCTION(int, T_category_get_categories, (int cat_index, int len, int indices[]))
WEFT_MPI_FUNCTION(int, T_category_changed, (int *update_number))
/* MPI 4.0 events: weft has no event sources (the counts are 0); the routines that need an
 * event or a registration are not supported. */
WEFT_MPI_FUNCTION(int, T_category_get_num_events, (int cat_index, int *num_events))
WEFT_MPI_FUNCTION(int, T_category_get_events, (int cat_index, int len, int indices[]))
WEFT_MPI_FUNCTION(int, T_source_get_num, (int *num_sources))
WEFT_MPI_FUNCTION(int, T_source_get_info, (int source_index, char *name, int *name_len, char *desc,
                                           int *desc_len, MPI_T_source_order *ordering,
                                           MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                                           MPI_Info *info))
WEFT_MPI_FUNCTION(int, T_source_get_timestamp, (int source_index, MPI_Count *timestamp))
WEFT_MPI_FUNCTION(int, T_event_get_num, (int *num_events))
WEFT_MPI_FUNCTION(int, T_event_get_info, (int event_index, char *name, int *name_len,
                                          int *verbosity, MPI_Datatype array_of_datatypes[],
                                          MPI_Aint array_of_displacements[], int *num_elements,
                                          MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                                          int *desc_len, int *bind))
WEFT_MPI_FUNCTION(int, T_event_get_index, (const char *name, int *event_index))
WEFT_MPI_FUNCTION(int, T_event_handle_alloc, (int event_index, void *obj_handle, MPI_Info info,
                                              MPI_T_event_registration *event_registration))
WEFT_MPI_FUNCTION(int, T_event_handle_free, (MPI_T_event_registration event_registration,
                                             void *user_data,
                                             MPI_T_event_free_cb_function free_cb_function))
WEFT_MPI_FUNCTION(int, T_event_register_callback, (MPI_T_event_registration event_registration,
                                                   MPI_T_cb_safety cb_safety, MPI_Info info,
                                                   void *user_data,
                                                   MPI_T_event_cb_function event_cb_function))
WEFT_MPI_FUNCTION(int, T_event_read, (MPI_T_event_instance event_instance, int element_index,
                                      void *buffer))
WEFT_MPI_FUNCTION(int, T_event_copy, (MPI_T_event_instance event_instance, void *buffer))
WEFT_MPI_FUNCTION(int, T_event_get_timestamp, (MPI_T_event_instance event_instance,
                                               MPI_Count *event_timestamp))
WEFT_MPI_FUNCTION(int, T_event_get_source, (MPI_T_event_instance event_instance,
                                            int *source_index))
