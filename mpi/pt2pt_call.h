// Shared by the point-to-point bindings (pt2pt.cpp, sendrecv.cpp): the checks of a send or a
// receive and the operations they start. Counts are MPI_Count, so the large-count (_c) forms
// take the same path. MPI_SUCCESS or the raised error code.
#pragma once
#include <functional>
#include <string>

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

// Buffered sends (MPI 4.1): the attached spaces a buffered send on e may use (made on first
// use), and the one a request owned by communicator handle `comm` used (MPI_Cancel).
BsendScopes bsend_scopes(CommEntry& e);
BufferedSends& buffered_sends_of(int comm);
// Attach, detach and the non-blocking flush of one attached space (the process's, a
// communicator's or a session's); errors go through fail (error class, detail), which raises
// them on the space's object.
using BufferFail = std::function<int(int error_class, const std::string& detail)>;
int attach_buffer(const char* fn, BufferedSends& b, void* buffer, MPI_Count size, const BufferFail& fail);
// *size as MPI_Count; max: the largest size the caller's type holds (MPI_ERR_VALUE_TOO_LARGE past it).
int detach_buffer(const char* fn, BufferedSends& b, void* buffer_addr, MPI_Count* size, MPI_Count max,
                  const BufferFail& fail);
int iflush_buffer(const char* fn, BufferedSends& b, MPI_Request* request, const BufferFail& fail);

}  // namespace weft::mpi
