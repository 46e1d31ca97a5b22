// Point-to-point bindings: validate, call the point-to-point engine (pt2pt/p2p.h), map errors.
#include <cstring>

#include "pt2pt/p2p.h"
#include "pt2pt/tag.h"
#include "state.h"

static_assert(weft::kBsendOverhead == MPI_BSEND_OVERHEAD);

namespace weft::mpi {

namespace {

int check_common(const char* fn, const void* buf, int count, MPI_Datatype dt, MPI_Comm comm, Message* m) {
  Comm* c = lookup_comm(comm);
  if (!c) [[unlikely]]
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  if (g_state->boot->failures_seen()) [[unlikely]] {
    if (int rc = check_comm_alive(fn, comm, *c); rc != MPI_SUCCESS) return rc;
  }
  if (count < 0) [[unlikely]]
    return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument 'count')", count);
  const Datatype* type;
  if (int rc = check_datatype(comm, fn, dt, &type)) [[unlikely]] return rc;
  switch (describe_message(c, type, size_t(count), buf, m)) {
    case Status::ok: break;
    case Status::invalid_buffer: return raise_unsupported_device(comm, fn, buf);
    default: return raise(comm, MPI_ERR_TYPE, fn, "%s", error_detail().c_str());
  }
  // MPI_BOTTOM (NULL) is a valid base for derived types with absolute displacements.
  if (!buf && m->bytes > 0 && type->predefined) [[unlikely]]
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d (argument 'buf')", count);
  return MPI_SUCCESS;
}

// A device buffer travels as it is or staged through host memory; WEFT_REQUIRE_FAST_PATH may
// forbid the staging.
int choose_path(const char* fn, MPI_Comm comm, Message* m) {
  if (choose_device_path(*g_state->transport, m) != Status::ok) [[unlikely]]
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", error_detail().c_str());
  return MPI_SUCCESS;
}

int check_send(const char* fn, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, Message* m) {
  int rc = check_common(fn, buf, count, dt, comm, m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  const int size = m->comm->peer_count();
  if (dest == MPI_PROC_NULL) {
    m->peer = kNoPeer;
  } else if (dest < 0 || dest >= size) [[unlikely]] {
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'dest'; %s has %d ranks)",
                 dest, m->comm->label().c_str(), size);
  } else {
    m->peer = m->comm->peer_world_rank(dest);
  }
  if (tag < 0 || tag > tag::kMaxUserTag) [[unlikely]]
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d)", tag,
                 tag::kMaxUserTag);
  set_send_tag(m, tag);
  return choose_path(fn, comm, m);
}

int check_recv(const char* fn, const void* buf, int count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, Message* m) {
  int rc = check_common(fn, buf, count, dt, comm, m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  const int size = m->comm->peer_count();
  if (source == MPI_PROC_NULL) m->peer = kNoPeer;
  else if (source == MPI_ANY_SOURCE) m->peer = kAnyPeer;
  else if (source < 0 || source >= size) [[unlikely]]
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'source'; %s has %d ranks)",
                 source, m->comm->label().c_str(), size);
  else m->peer = m->comm->peer_world_rank(source);
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag)) [[unlikely]]
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d or MPI_ANY_TAG)",
                 tag, tag::kMaxUserTag);
  set_recv_tag(m, source, source == MPI_ANY_SOURCE, tag, tag == MPI_ANY_TAG);
  return choose_path(fn, comm, m);
}

int do_blocking_send(const char* fn, const void* buf, int count, MPI_Datatype dt, int dest,
                     int tag, MPI_Comm comm, SendMode mode) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = check_send(fn, buf, count, dt, dest, tag, comm, &m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (m.peer == kNoPeer) return MPI_SUCCESS;
  Status s = send(*g_state->transport, m, buf, mode);
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  return MPI_SUCCESS;
}

// MPI_Isend and its modes (receive false), MPI_Irecv: a new request owned by comm.
int do_immediate(const char* fn, bool receive, const void* buf, int count, MPI_Datatype dt, int peer, int tag,
                 MPI_Comm comm, SendMode mode, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = receive ? check_recv(fn, buf, count, dt, peer, tag, comm, &m)
                   : check_send(fn, buf, count, dt, peer, tag, comm, &m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (!request) [[unlikely]] return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  const RequestKind kind = receive ? RequestKind::recv : RequestKind::send;
  if (m.peer == kNoPeer) {
    *request = request_handle(completed_request(g_state->requests, kind, proc_null_status()));
    return MPI_SUCCESS;
  }
  Request* r;
  Status s = post_immediate(*g_state->transport, g_state->requests, m, const_cast<void*>(buf), receive, mode, comm, &r);
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  *request = request_handle(r);
  return MPI_SUCCESS;
}

int do_recv(const char* fn, void* buf, int count, MPI_Datatype dt, int source, int tag,
            MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = check_recv(fn, buf, count, dt, source, tag, comm, &m);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (m.peer == kNoPeer) {
    set_status_proc_null(status);
    return MPI_SUCCESS;
  }
  RequestStatus rs;
  Status s = recv(*g_state->transport, m, buf, &rs);
  fill_status(status, rs);
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  return MPI_SUCCESS;
}

// Buffered send; immediate (MPI_Ibsend): *request is a request already complete.
int do_bsend(const char* fn, const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
             bool immediate, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = check_send(fn, buf, count, dt, dest, tag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  if (immediate && !request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  if (m.peer != kNoPeer) {
    copy_out_of_device(&m);
    if (Status s = bsend(*g_state->transport, g_state->bsend, m, buf); s != Status::ok) return raise_status(comm, s, fn);
  }
  if (immediate)  // the data was copied: the user's buffer is free again
    *request = request_handle(completed_request(g_state->requests, RequestKind::send, RequestStatus{}));
  return MPI_SUCCESS;
}

int make_persistent(const char* fn, void* buf, int count, MPI_Datatype dt, int peer_rank, int tag,
                    MPI_Comm comm, PersistentKind kind, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = kind == PersistentKind::recv ? check_recv(fn, buf, count, dt, peer_rank, tag, comm, &m)
                                        : check_send(fn, buf, count, dt, peer_rank, tag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  if (kind == PersistentKind::bsend) copy_out_of_device(&m);
  *request = request_handle(persistent_request(*g_state->transport, g_state->requests, m, buf, kind, &g_state->bsend,
                                               proc_null_status(), comm));
  return MPI_SUCCESS;
}

}  // namespace

void fill_status(MPI_Status* st, const RequestStatus& rs) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = rs.source;
  st->MPI_TAG = rs.tag;
  st->count_lo = int(uint32_t(rs.bytes & 0xffffffffu));
  st->count_hi_and_cancelled = int((uint64_t(rs.bytes) >> 32) << 1) | (rs.cancelled ? 1 : 0);
}

void set_status_proc_null(MPI_Status* st) { fill_status(st, proc_null_status()); }

void set_status_empty(MPI_Status* st) { fill_status(st, RequestStatus{MPI_ANY_SOURCE, MPI_ANY_TAG, 0}); }

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

// The three forms of a send mode from one line: blocking, immediate and persistent. Ready mode
// sends as standard: the matching receive is posted, so the semantics are the same.
#define WEFT_SEND_FORMS(Blocking, Immediate, Persistent, mode, kind)                                        \
  int PMPI_##Blocking(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {     \
    return do_blocking_send("MPI_" #Blocking, buf, count, dt, dest, tag, comm, SendMode::mode);             \
  }                                                                                                         \
  int PMPI_##Immediate(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,      \
                       MPI_Request* request) {                                                              \
    return do_immediate("MPI_" #Immediate, false, buf, count, dt, dest, tag, comm, SendMode::mode, request); \
  }                                                                                                         \
  int PMPI_##Persistent(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,     \
                        MPI_Request* request) {                                                             \
    return make_persistent("MPI_" #Persistent, const_cast<void*>(buf), count, dt, dest, tag, comm,         \
                           PersistentKind::kind, request);                                                  \
  }

WEFT_SEND_FORMS(Send, Isend, Send_init, standard, send)
WEFT_SEND_FORMS(Ssend, Issend, Ssend_init, synchronous, ssend)
WEFT_SEND_FORMS(Rsend, Irsend, Rsend_init, standard, send)
#undef WEFT_SEND_FORMS

int PMPI_Bsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return do_bsend("MPI_Bsend", buf, count, dt, dest, tag, comm, false, nullptr);
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return do_bsend("MPI_Ibsend", buf, count, dt, dest, tag, comm, true, request);
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return make_persistent("MPI_Bsend_init", const_cast<void*>(buf), count, dt, dest, tag, comm,
                         PersistentKind::bsend, request);
}

int PMPI_Buffer_attach(void* buffer, int size) {
  WEFT_REQUIRE_INIT("MPI_Buffer_attach");
  if (size < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Buffer_attach", "negative size %d", size);
  if (!buffer && size > 0) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "NULL buffer");
  BufferedSends& b = g_state->bsend;
  if (b.buffer) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach", "a buffer is already attached");
  b.buffer = static_cast<char*>(buffer);
  b.capacity = size_t(size);
  return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  WEFT_REQUIRE_INIT("MPI_Buffer_detach");
  if (!buffer_addr || !size) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Buffer_detach", "buffer_addr or size is NULL");
  BufferedSends& b = g_state->bsend;
  *static_cast<void**>(buffer_addr) = b.buffer;
  *size = int(b.capacity);
  detach(*g_state->transport, b);
  return MPI_SUCCESS;
}

int PMPI_Recv(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  return do_recv("MPI_Recv", buf, count, dt, source, tag, comm, status);
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return do_immediate("MPI_Irecv", true, buf, count, dt, source, tag, comm, SendMode::standard, request);
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Sendrecv");
  MPI_Request req;
  int rc = do_immediate("MPI_Sendrecv", true, recvbuf, recvcount, recvtype, source, recvtag, comm, SendMode::standard, &req);
  if (rc != MPI_SUCCESS) return rc;
  rc = do_blocking_send("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm,
                        SendMode::standard);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&req);
    PMPI_Request_free(&req);
    return rc;
  }
  return PMPI_Wait(&req, status);
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status* status) {
  const char* fn = "MPI_Sendrecv_replace";
  WEFT_REQUIRE_INIT(fn);
  Message m;
  int rc = check_send(fn, buf, count, dt, dest, sendtag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  // The outgoing data is copied (packed) first, so the receive can land in the same buffer.
  StagingBuffer copy;
  if (Status s = copy_message(&m, buf, &copy); s != Status::ok) return raise_status(comm, s, fn);
  MPI_Request req;
  rc = do_immediate(fn, true, buf, count, dt, source, recvtag, comm, SendMode::standard, &req);
  if (rc != MPI_SUCCESS) return rc;
  if (m.peer != kNoPeer) {
    Status s = g_state->transport->send(copy.get(), m.bytes, m.peer, m.tag, SendMode::standard, m.comm);
    if (s != Status::ok) {
      PMPI_Cancel(&req);
      PMPI_Request_free(&req);
      return raise_status(comm, s, fn);
    }
  }
  return PMPI_Wait(&req, status);
}

int PMPI_Recv_init(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return make_persistent("MPI_Recv_init", buf, count, dt, source, tag, comm, PersistentKind::recv,
                         request);
}

int PMPI_Start(MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Start");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start", "request is NULL");
  Request* r = lookup_request(*request);
  if (!r || !r->persistent)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start", "not a persistent request (0x%x)", unsigned(*request));
  if (r->active) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Start", "request is already active");
  r->status = RequestStatus{};
  Status s = r->start(*r);
  if (s != Status::ok) return raise_status(MPI_COMM_NULL, s, "MPI_Start");
  r->active = true;
  return MPI_SUCCESS;
}

int PMPI_Startall(int count, MPI_Request requests[]) {
  WEFT_REQUIRE_INIT("MPI_Startall");
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Startall", "negative count %d", count);
  if (count > 0 && !requests) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Startall", "requests is NULL");
  for (int i = 0; i < count; ++i) {
    int rc = PMPI_Start(&requests[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Send, Ssend, Rsend, Bsend, Isend, Issend, Irsend, Ibsend, Buffer_attach,
                  Buffer_detach, Recv, Irecv, Sendrecv, Sendrecv_replace, Send_init, Ssend_init,
                  Rsend_init, Bsend_init, Recv_init, Start, Startall)
