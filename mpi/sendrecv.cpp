// Send-receive bindings: MPI_Sendrecv and MPI_Sendrecv_replace, their non-blocking forms
// MPI_Isendrecv and MPI_Isendrecv_replace (a send and a receive joined into one request,
// pt2pt/request_pair.h) and the large-count (_c) forms of all four.
#include "pt2pt_call.h"

namespace weft::mpi {

namespace {

// A receive posted and then a send: both requests, or the first error (the receive then
// cancelled and freed).
int post_pair(const char* fn, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
              Request** send, Request** recv) {
  int rc = post_operation(fn, true, recvbuf, recvcount, recvtype, source, recvtag, comm, SendMode::standard, recv);
  if (rc != MPI_SUCCESS) return rc;
  rc = post_operation(fn, false, sendbuf, sendcount, sendtype, dest, sendtag, comm, SendMode::standard, send);
  if (rc != MPI_SUCCESS && *recv) {
    (void)g_state->transport->cancel(*recv);
    g_state->free_request(*recv);
  }
  return rc;
}

// The outgoing data of a send-receive in place copied (packed) first, so that the receive can
// land in the same buffer, and sent from the copy as a request owned by comm (*send; null for
// MPI_PROC_NULL).
int post_copied_send(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int dest, int sendtag,
                     MPI_Comm comm, StagingBuffer* copy, Request** send) {
  Message m;
  int rc = check_send(fn, buf, count, dt, dest, sendtag, comm, &m);
  if (rc != MPI_SUCCESS) return rc;
  if (Status s = copy_message(&m, buf, copy); s != Status::ok) return raise_status(comm, s, fn);
  *send = nullptr;
  if (m.peer == kNoPeer) return MPI_SUCCESS;
  Request* r = g_state->requests.alloc(RequestKind::send);
  r->owner = comm;
  if (Status s = g_state->transport->isend(copy->get(), m.bytes, m.peer, m.tag, SendMode::standard, r);
      s != Status::ok) {
    g_state->requests.release(r);
    return raise_status(comm, s, fn);
  }
  *send = r;
  return MPI_SUCCESS;
}

int sendrecv(const char* fn, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
             int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
             MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT(fn);
  MPI_Request req;
  int rc = do_immediate(fn, true, recvbuf, recvcount, recvtype, source, recvtag, comm, SendMode::standard, &req);
  if (rc != MPI_SUCCESS) return rc;
  rc = do_blocking_send(fn, sendbuf, sendcount, sendtype, dest, sendtag, comm, SendMode::standard);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&req);
    PMPI_Request_free(&req);
    return rc;
  }
  return PMPI_Wait(&req, status);
}

int sendrecv_replace(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int dest, int sendtag, int source,
                     int recvtag, MPI_Comm comm, MPI_Status* status) {
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

int isendrecv(const char* fn, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
              int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
              MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  Request *send, *recv;
  int rc = post_pair(fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                     comm, &send, &recv);
  if (rc != MPI_SUCCESS) return rc;
  *request = request_handle(
      g_state->request_pairs.join(*g_state->transport, send, recv, comm, StagingBuffer{}, proc_null_status()));
  return MPI_SUCCESS;
}

int isendrecv_replace(const char* fn, void* buf, MPI_Count count, MPI_Datatype dt, int dest, int sendtag,
                      int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  StagingBuffer copy;
  Request *send, *recv;
  int rc = post_copied_send(fn, buf, count, dt, dest, sendtag, comm, &copy, &send);
  if (rc != MPI_SUCCESS) return rc;
  rc = post_operation(fn, true, buf, count, dt, source, recvtag, comm, SendMode::standard, &recv);
  if (rc != MPI_SUCCESS) {
    // The send is under way from the copy: it goes on alone, the copy with it.
    if (send) {
      send->owned_buffer = std::move(copy);
      g_state->free_request(send);
    }
    return rc;
  }
  *request = request_handle(
      g_state->request_pairs.join(*g_state->transport, send, recv, comm, std::move(copy), proc_null_status()));
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// The four send-receive bindings for counts of type Count, with the names' suffix c.
#define WEFT_SENDRECV_BINDINGS(Count, c)                                                                            \
  int PMPI_Sendrecv##c(const void* sendbuf, Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,         \
                       void* recvbuf, Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, \
                       MPI_Status* status) {                                                                        \
    WEFT_ENTRY;                                                                                                    \
    return sendrecv("MPI_Sendrecv" #c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,  \
                    source, recvtag, comm, status);                                                                 \
  }                                                                                                                 \
  int PMPI_Sendrecv_replace##c(void* buf, Count count, MPI_Datatype dt, int dest, int sendtag, int source,          \
                               int recvtag, MPI_Comm comm, MPI_Status* status) {                                    \
    WEFT_ENTRY;                                                                                                       \
    return sendrecv_replace("MPI_Sendrecv_replace" #c, buf, count, dt, dest, sendtag, source, recvtag, comm, status); \
  }                                                                                                                 \
  int PMPI_Isendrecv##c(const void* sendbuf, Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,        \
                        void* recvbuf, Count recvcount, MPI_Datatype recvtype, int source, int recvtag,             \
                        MPI_Comm comm, MPI_Request* request) {                                                      \
    WEFT_ENTRY;                                                                                                     \
    return isendrecv("MPI_Isendrecv" #c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, \
                     source, recvtag, comm, request);                                                               \
  }                                                                                                                 \
  int PMPI_Isendrecv_replace##c(void* buf, Count count, MPI_Datatype dt, int dest, int sendtag, int source,         \
                                int recvtag, MPI_Comm comm, MPI_Request* request) {                                 \
    WEFT_ENTRY;                                                                                                     \
    return isendrecv_replace("MPI_Isendrecv_replace" #c, buf, count, dt, dest, sendtag, source, recvtag, comm,      \
                             request);                                                                              \
  }

WEFT_SENDRECV_BINDINGS(int, )
WEFT_SENDRECV_BINDINGS(MPI_Count, _c)
#undef WEFT_SENDRECV_BINDINGS

}  // extern "C"

WEFT_PMPI_ALIASES(Sendrecv, Sendrecv_replace, Isendrecv, Isendrecv_replace, Sendrecv_c, Sendrecv_replace_c,
                  Isendrecv_c, Isendrecv_replace_c)
