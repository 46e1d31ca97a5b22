// Shared by the point-to-point bindings (pt2pt.cpp, sendrecv.cpp): the checks of a send or a
// receive and the operations they start. Counts are MPI_Count, so the large-count (_c) forms
// take the same path. MPI_SUCCESS or the raised error code.
#pragma once
#include "pt2pt/p2p.h"
#include "state.h"

namespace weft::mpi {

// A send's (receive's) arguments checked and described in *m (peer kNoPeer: MPI_PROC_NULL).
int check_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, Message* m);
int check_recv(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, Message* m);
int do_blocking_send(const char* fn, const void* buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                     MPI_Comm comm, SendMode mode);
// A send (receive false) or a receive posted as a request owned by comm into *out; null for
// MPI_PROC_NULL.
int post_operation(const char* fn, bool receive, const void* buf, MPI_Count count, MPI_Datatype dt, int peer,
                   int tag, MPI_Comm comm, SendMode mode, Request** out);
// MPI_Isend and its modes (receive false), MPI_Irecv: a new request owned by comm.
int do_immediate(const char* fn, bool receive, const void* buf, MPI_Count count, MPI_Datatype dt, int peer,
                 int tag, MPI_Comm comm, SendMode mode, MPI_Request* request);

}  // namespace weft::mpi
