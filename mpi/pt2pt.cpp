// Point-to-point bindings: validate, call the transport, map errors.
#include <cstring>

#include "datatype_api.h"
#include "pt2pt/tag.h"
#include "runtime/cuda_ipc.h"
#include "runtime/device_staging.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "state.h"

namespace weft::mpi {

namespace {

constexpr int kNoPeer = -1;  // MPI_PROC_NULL: the call completes at once

struct Args {
  Comm* comm = nullptr;
  const Datatype* type = nullptr;
  size_t count = 0;
  size_t bytes = 0;         // on the wire: the packed size
  bool contiguous = true;   // the data is one run of host memory at buf + offset: no staging
  bool on_device = false;   // the buffer is GPU device memory
  bool device = false;      // ... staged through host memory (contiguous is false then)
  // ... handed to the transport as it is: CUDA IPC within a node, pipelined through pinned
  // host chunks over UCX (Transport::device_path)
  bool device_direct = false;
  ptrdiff_t offset = 0;
  int peer = kNoPeer;  // job rank of the peer; kNoPeer for MPI_PROC_NULL, -2 for any source
};

// Copies the message out of the user's buffer: packs a non-contiguous datatype, or copies out
// of device memory (contiguous there: check_common refuses the rest).
Status pack_message(const Args& a, const void* buf, void* dst) {
  if (a.device) return memkind_copy(dst, static_cast<const char*>(buf) + a.offset, a.bytes);
  pack(a.type, buf, a.count, dst);
  return Status::ok;
}

// The reverse, for the `bytes` that arrived.
Status unpack_message(const Args& a, const void* src, size_t bytes, void* buf) {
  if (a.device) return memkind_copy(static_cast<char*>(buf) + a.offset, src, bytes);
  unpack(a.type, src, bytes, buf, a.count);
  return Status::ok;
}

// The bytes to send: the user's buffer itself when contiguous, else packed into *owned.
const void* send_data(const Args& a, const void* buf, StagingBuffer* owned, Status* s) {
  *s = Status::ok;
  if (a.contiguous) return static_cast<const char*>(buf) + a.offset;
  *owned = staging_buffer(a.bytes);
  *s = pack_message(a, buf, owned->get());
  return owned->get();
}

// Where to receive: the user's buffer when contiguous, else a staging buffer in *owned.
void* recv_target(const Args& a, void* buf, StagingBuffer* owned) {
  if (a.contiguous) return static_cast<char*>(buf) + a.offset;
  *owned = staging_buffer(a.bytes);
  return owned->get();
}

// A staged receive unpacks from the request's staging buffer when the user completes it.
void arm_unpack(Request* r, const Args& a, void* buf) {
  if (a.contiguous) return;
  retain(a.type);
  r->finish = [a, buf](Request& q) {
    if (q.status.error == Status::ok || q.status.error == Status::truncated) {
      Status s = unpack_message(a, q.owned_buffer.get(), q.status.bytes, buf);
      if (s != Status::ok) q.status.error = s;
    }
    release(a.type);
  };
}

int check_common(const char* fn, const void* buf, int count, MPI_Datatype dt, MPI_Comm comm,
                 Args* a) {
  a->comm = lookup_comm(comm);
  if (!a->comm) [[unlikely]]
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')",
                 unsigned(comm));
  if (g_state->boot->failures_seen()) [[unlikely]] {
    if (int rc = check_comm_alive(fn, comm, *a->comm); rc != MPI_SUCCESS) return rc;
  }
  if (count < 0) [[unlikely]]
    return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument 'count')", count);
  int rc = check_datatype(comm, fn, dt, &a->type);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  a->count = size_t(count);
  a->bytes = packed_size(a->type, a->count);  // predefined: count * extent, padding included
  a->contiguous = contiguous_span(a->type, a->count, &a->offset);
  // The one memory-kind query of the call; choose_device_path decides once the peer is known.
  // A build without CUDA asks only while the CUDA driver is loaded, and refuses device memory.
  if (a->bytes > 0 && memkind_device_possible()) [[unlikely]] {
    const MemInfo kind = memkind_query(buf);
    if (kind.kind == MemKind::unsupported_device) return raise_unsupported_device(comm, fn, buf);
    if (!host_accessible(kind)) {
      if (!a->contiguous)
        return raise(comm, MPI_ERR_TYPE, fn, "non-contiguous datatypes on GPU device buffers are not supported yet");
      a->on_device = true;
    }
  }
  // MPI_BOTTOM (NULL) is a valid base for derived types with absolute displacements.
  if (!buf && a->bytes > 0 && a->type->predefined) [[unlikely]]
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d (argument 'buf')", count);
  return MPI_SUCCESS;
}

// A device buffer goes to the transport as it is where the peer is reached through weft
// shared memory with CUDA IPC, or over UCX with pipelined staging through pinned host chunks
// (the intended path between nodes: logged at INFO, allowed under WEFT_REQUIRE_FAST_PATH).
// Otherwise the whole message is staged through host memory, with one WARN (or an error under
// WEFT_REQUIRE_FAST_PATH). peer: a job rank, or -1 for any source.
int choose_device_path(const char* fn, MPI_Comm comm, int peer, Args* a) {
  if (!a->on_device || a->peer == kNoPeer) return MPI_SUCCESS;
  std::string reason;
  switch (g_state->transport->device_path(peer, &reason)) {
    case DevicePath::cuda_ipc:
      a->device_direct = true;
      if (log_first_time("pt2pt-device-ipc"))
        WEFT_INFO(Subsys::gpu, "point-to-point on GPU device buffers between ranks of one node: CUDA IPC "
                  "(the receiver copies from the sender's buffer once)");
      return MPI_SUCCESS;
    case DevicePath::pipelined:
      a->device_direct = true;
      if (log_first_time(peer >= 0 ? "pt2pt-device-pipelined-" + std::to_string(peer)
                                   : std::string("pt2pt-device-pipelined-any")))
        WEFT_INFO(Subsys::gpu, "device point-to-point with %s over UCX: pipelined through pinned "
                  "chunks of %zu bytes (two per message, WEFT_CUDA_STAGING_CHUNK)",
                  peer >= 0 ? ("rank " + std::to_string(peer)).c_str() : "any source",
                  device_staging_chunk());
      return MPI_SUCCESS;
    case DevicePath::mixed:
      a->device_direct = true;
      if (log_first_time("pt2pt-device-mixed"))
        WEFT_INFO(Subsys::gpu, "device point-to-point with any source: CUDA IPC from this node's "
                  "ranks, pipelined through pinned chunks of %zu bytes over UCX from the others",
                  device_staging_chunk());
      return MPI_SUCCESS;
    case DevicePath::staged:
      break;
  }
  if (g_state->require_fast_path)
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "a GPU device buffer would be staged through host memory (%s), and "
                 "WEFT_REQUIRE_FAST_PATH forbids slower paths", reason.c_str());
  if (log_first_time("pt2pt-device-staging"))
    WEFT_WARN(Subsys::gpu, "point-to-point on GPU device buffers is staged through host memory "
              "(cudaMemcpy per message): %s", reason.c_str());
  a->device = true;
  a->contiguous = false;
  return MPI_SUCCESS;
}

int check_send(const char* fn, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, Args* a) {
  int rc = check_common(fn, buf, count, dt, comm, a);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (dest == MPI_PROC_NULL) {
    a->peer = kNoPeer;
  } else if (dest < 0 || dest >= a->comm->size) [[unlikely]] {
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'dest'; %s has %d ranks)",
                 dest, a->comm->label().c_str(), a->comm->size);
  } else {
    a->peer = a->comm->world_rank(dest);
  }
  if (tag < 0 || tag > tag::kMaxUserTag) [[unlikely]]
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d)", tag,
                 tag::kMaxUserTag);
  return choose_device_path(fn, comm, a->peer, a);
}

int check_recv(const char* fn, const void* buf, int count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, Args* a) {
  int rc = check_common(fn, buf, count, dt, comm, a);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  rc = MPI_SUCCESS;
  if (source == MPI_PROC_NULL) a->peer = kNoPeer;
  else if (source == MPI_ANY_SOURCE) a->peer = -2;
  else if (source < 0 || source >= a->comm->size) [[unlikely]]
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'source'; %s has %d ranks)",
                 source, a->comm->label().c_str(), a->comm->size);
  else a->peer = a->comm->world_rank(source);
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag)) [[unlikely]]
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d or MPI_ANY_TAG)",
                 tag, tag::kMaxUserTag);
  return choose_device_path(fn, comm, a->peer == -2 ? -1 : a->peer, a);
}

inline uint64_t send_tag(const Comm& c, int tag) {
  return tag::make(c.pt2pt_context(), uint32_t(c.rank), uint32_t(tag));
}

inline void recv_tag(const Comm& c, int source, int tag, uint64_t* t, uint64_t* mask) {
  bool any_src = source == MPI_ANY_SOURCE, any_tag = tag == MPI_ANY_TAG;
  *t = tag::make(c.pt2pt_context(), any_src ? 0u : uint32_t(source), any_tag ? 0u : uint32_t(tag));
  *mask = tag::recv_mask(any_src, any_tag);
}

Request* completed_null_request(RequestKind kind) {
  Request* r = g_state->requests.alloc(kind);
  r->complete = true;
  r->status.source = MPI_PROC_NULL;
  r->status.tag = MPI_ANY_TAG;
  r->status.bytes = 0;
  return r;
}

// Blocking calls on device buffers go through a request: the transport's request-free fast
// paths are for host memory.
int send_device_and_wait(const Args& a, const void* buf, int tag, SendMode mode, MPI_Comm comm, const char* fn) {
  Request* r = g_state->requests.alloc(RequestKind::send);
  r->device_buffer = true;
  Status s = g_state->transport->isend(static_cast<const char*>(buf) + a.offset, a.bytes, a.peer,
                                       send_tag(*a.comm, tag), mode, r);
  if (s == Status::ok) {
    if (!r->complete) g_state->transport->wait(r, a.comm);
    s = r->status.error;
  }
  g_state->requests.release(r);
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  return MPI_SUCCESS;
}

int do_blocking_send(const char* fn, const void* buf, int count, MPI_Datatype dt, int dest,
                     int tag, MPI_Comm comm, SendMode mode) {
  WEFT_REQUIRE_INIT(fn);
  Args a;
  int rc = check_send(fn, buf, count, dt, dest, tag, comm, &a);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (a.peer == kNoPeer) return MPI_SUCCESS;
  if (a.device_direct) return send_device_and_wait(a, buf, tag, mode, comm, fn);
  StagingBuffer packed;
  Status s;
  const void* data = send_data(a, buf, &packed, &s);
  if (s == Status::ok) s = g_state->transport->send(data, a.bytes, a.peer, send_tag(*a.comm, tag), mode, a.comm);
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  return MPI_SUCCESS;
}

int do_isend(const char* fn, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
             MPI_Comm comm, SendMode mode, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Args a;
  int rc = check_send(fn, buf, count, dt, dest, tag, comm, &a);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (!request) [[unlikely]] return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  if (a.peer == kNoPeer) {
    *request = request_handle(completed_null_request(RequestKind::send));
    return MPI_SUCCESS;
  }
  Request* r = g_state->requests.alloc(RequestKind::send);
  r->owner = comm;
  r->device_buffer = a.device_direct;
  Status s;
  const void* data = send_data(a, buf, &r->owned_buffer, &s);
  if (s == Status::ok) s = g_state->transport->isend(data, a.bytes, a.peer, send_tag(*a.comm, tag), mode, r);
  if (s != Status::ok) [[unlikely]] {
    g_state->requests.release(r);
    return raise_status(comm, s, fn);
  }
  *request = request_handle(r);
  return MPI_SUCCESS;
}

// Buffered send: the data is copied out at once, so the call completes locally; the copy
// counts against the space the user attached.
Status post_bsend(const void* buf, size_t bytes, int peer, uint64_t t, const char* fn, MPI_Comm comm,
                  int* rc) {
  BufferedSends& b = g_state->bsend;
  for (size_t i = 0; i < b.pending.size();) {  // reclaim finished copies
    Request* r = b.pending[i];
    if (r->complete) {
      b.in_use -= r->owned_bytes + MPI_BSEND_OVERHEAD;
      g_state->requests.release(r);
      b.pending[i] = b.pending.back();
      b.pending.pop_back();
    } else {
      ++i;
    }
  }
  if (b.in_use + bytes + MPI_BSEND_OVERHEAD > b.capacity) {
    *rc = raise(comm, MPI_ERR_BUFFER, fn,
                "attached buffer too small: %zu bytes needed, %zu of %zu free (MPI_Buffer_attach)",
                bytes + MPI_BSEND_OVERHEAD, b.capacity - b.in_use, b.capacity);
    return Status::invalid_buffer;
  }
  Request* r = g_state->requests.alloc(RequestKind::send);
  r->owned_buffer = staging_buffer(bytes);
  r->owned_bytes = bytes;
  if (bytes) memcpy(r->owned_buffer.get(), buf, bytes);
  Status s = g_state->transport->isend(r->owned_buffer.get(), bytes, peer, t, SendMode::standard, r);
  if (s != Status::ok) {
    g_state->requests.release(r);
    *rc = raise_status(comm, s, fn);
    return s;
  }
  b.in_use += bytes + MPI_BSEND_OVERHEAD;
  b.pending.push_back(r);
  *rc = MPI_SUCCESS;
  return Status::ok;
}

int do_recv(const char* fn, void* buf, int count, MPI_Datatype dt, int source, int tag,
            MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT(fn);
  Args a;
  int rc = check_recv(fn, buf, count, dt, source, tag, comm, &a);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (a.peer == kNoPeer) {
    set_status_proc_null(status);
    return MPI_SUCCESS;
  }
  uint64_t t, mask;
  recv_tag(*a.comm, source, tag, &t, &mask);
  if (a.device_direct) {  // through a request, as send_device_and_wait
    Request* r = g_state->requests.alloc(RequestKind::recv);
    r->device_buffer = true;
    Status s = g_state->transport->irecv(static_cast<char*>(buf) + a.offset, a.bytes,
                                         a.peer == -2 ? -1 : a.peer, t, mask, r);
    if (s == Status::ok) {
      if (!r->complete) g_state->transport->wait(r, a.comm);
      s = r->status.error;
      fill_status(status, r->status);
    }
    g_state->requests.release(r);
    if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
    return MPI_SUCCESS;
  }
  MatchInfo info;
  StagingBuffer staging;
  void* target = recv_target(a, buf, &staging);
  Status s = g_state->transport->recv(target, a.bytes, a.peer == -2 ? -1 : a.peer, t, mask, &info, a.comm);
  if (!a.contiguous && (s == Status::ok || s == Status::truncated)) {
    Status u = unpack_message(a, staging.get(), info.bytes, buf);
    if (u != Status::ok) s = u;
  }
  if (status != MPI_STATUS_IGNORE) {
    RequestStatus rs;
    rs.source = info.source;
    rs.tag = info.tag;
    rs.bytes = info.bytes;
    fill_status(status, rs);
  }
  if (s != Status::ok) [[unlikely]] return raise_status(comm, s, fn);
  return MPI_SUCCESS;
}

int do_irecv(const char* fn, void* buf, int count, MPI_Datatype dt, int source, int tag,
             MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Args a;
  int rc = check_recv(fn, buf, count, dt, source, tag, comm, &a);
  if (rc != MPI_SUCCESS) [[unlikely]] return rc;
  if (!request) [[unlikely]] return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  if (a.peer == kNoPeer) {
    *request = request_handle(completed_null_request(RequestKind::recv));
    return MPI_SUCCESS;
  }
  uint64_t t, mask;
  recv_tag(*a.comm, source, tag, &t, &mask);
  Request* r = g_state->requests.alloc(RequestKind::recv);
  r->owner = comm;
  r->device_buffer = a.device_direct;
  void* target = recv_target(a, buf, &r->owned_buffer);
  arm_unpack(r, a, buf);
  Status s = g_state->transport->irecv(target, a.bytes, a.peer == -2 ? -1 : a.peer, t, mask, r);
  if (s != Status::ok) [[unlikely]] {
    g_state->requests.release(r);
    return raise_status(comm, s, fn);
  }
  *request = request_handle(r);
  return MPI_SUCCESS;
}

enum class PersistentKind { send, ssend, bsend, recv };

// Buffered sends copy the data out at once anyway: from device memory, into host memory.
void copy_out_of_device(Args* a) {
  if (!a->device_direct) return;
  a->device_direct = false;
  a->device = true;
  a->contiguous = false;
}

int make_persistent(const char* fn, void* buf, int count, MPI_Datatype dt, int peer_rank, int tag,
                    MPI_Comm comm, PersistentKind kind, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  Args a;
  int rc = kind == PersistentKind::recv ? check_recv(fn, buf, count, dt, peer_rank, tag, comm, &a)
                                        : check_send(fn, buf, count, dt, peer_rank, tag, comm, &a);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  if (kind == PersistentKind::bsend) copy_out_of_device(&a);
  Request* r = g_state->requests.alloc(kind == PersistentKind::recv ? RequestKind::recv : RequestKind::send);
  r->persistent = true;
  r->owner = comm;
  r->complete = true;  // inactive until started
  const size_t bytes = a.bytes;
  const int peer = a.peer;
  Comm* c = a.comm;
  // The datatype stays alive while the request exists: the hold is released with the start
  // function when the request is freed.
  retain(a.type);
  std::shared_ptr<const Datatype> hold(a.type, [](const Datatype* d) { release(d); });
  const Args args = a;
  if (peer == kNoPeer) {
    r->start = [](Request& q) {
      q.complete = true;
      q.status = RequestStatus{};
      q.status.source = MPI_PROC_NULL;
      q.status.tag = MPI_ANY_TAG;
      return Status::ok;
    };
  } else if (kind == PersistentKind::recv) {
    uint64_t t, mask;
    recv_tag(*c, peer_rank, tag, &t, &mask);
    r->start = [buf, bytes, peer, t, mask, args, hold](Request& q) {
      void* target = args.contiguous ? static_cast<char*>(buf) + args.offset
                                     : (q.owned_buffer ? q.owned_buffer.get() : recv_target(args, buf, &q.owned_buffer));
      if (!args.contiguous) {
        q.finish = [args, buf](Request& done) {
          if (done.status.error == Status::ok || done.status.error == Status::truncated) {
            Status s = unpack_message(args, done.owned_buffer.get(), done.status.bytes, buf);
            if (s != Status::ok) done.status.error = s;
          }
        };
      }
      q.device_buffer = args.device_direct;
      return g_state->transport->irecv(target, bytes, peer == -2 ? -1 : peer, t, mask, &q);
    };
  } else if (kind == PersistentKind::bsend) {
    uint64_t t = send_tag(*c, tag);
    MPI_Comm ch = comm;
    r->start = [buf, bytes, peer, t, ch, args, hold](Request& q) {
      int code = MPI_SUCCESS;
      StagingBuffer packed;
      Status s;
      const void* data = send_data(args, buf, &packed, &s);
      WEFT_TRY(s);
      WEFT_TRY(post_bsend(data, bytes, peer, t, "MPI_Start", ch, &code));
      q.complete = true;
      q.status = RequestStatus{};
      return Status::ok;
    };
  } else {
    uint64_t t = send_tag(*c, tag);
    SendMode mode = kind == PersistentKind::ssend ? SendMode::synchronous : SendMode::standard;
    r->start = [buf, bytes, peer, t, mode, args, hold](Request& q) {
      // Packed again at every start: the user may change the data between starts.
      if (!args.contiguous && !q.owned_buffer) q.owned_buffer = staging_buffer(bytes);
      if (!args.contiguous) WEFT_TRY(pack_message(args, buf, q.owned_buffer.get()));
      const void* data = args.contiguous ? static_cast<const char*>(buf) + args.offset : q.owned_buffer.get();
      q.device_buffer = args.device_direct;
      return g_state->transport->isend(data, bytes, peer, t, mode, &q);
    };
  }
  *request = request_handle(r);
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

void set_status_proc_null(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_PROC_NULL;
  st->MPI_TAG = MPI_ANY_TAG;
  st->count_lo = 0;
  st->count_hi_and_cancelled = 0;
}

void set_status_empty(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->count_lo = 0;
  st->count_hi_and_cancelled = 0;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return do_blocking_send("MPI_Send", buf, count, dt, dest, tag, comm, SendMode::standard);
}

int PMPI_Ssend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return do_blocking_send("MPI_Ssend", buf, count, dt, dest, tag, comm, SendMode::synchronous);
}

// Ready mode: the matching receive is posted, so a standard send has the same semantics.
int PMPI_Rsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return do_blocking_send("MPI_Rsend", buf, count, dt, dest, tag, comm, SendMode::standard);
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Bsend");
  Args a;
  int rc = check_send("MPI_Bsend", buf, count, dt, dest, tag, comm, &a);
  if (rc != MPI_SUCCESS || a.peer == kNoPeer) return rc;
  copy_out_of_device(&a);
  StagingBuffer packed;
  Status s;
  const void* data = send_data(a, buf, &packed, &s);
  if (s != Status::ok) return raise_status(comm, s, "MPI_Bsend");
  (void)post_bsend(data, a.bytes, a.peer, send_tag(*a.comm, tag), "MPI_Bsend", comm, &rc);
  return rc;
}

int PMPI_Isend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return do_isend("MPI_Isend", buf, count, dt, dest, tag, comm, SendMode::standard, request);
}

int PMPI_Issend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return do_isend("MPI_Issend", buf, count, dt, dest, tag, comm, SendMode::synchronous, request);
}

int PMPI_Irsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return do_isend("MPI_Irsend", buf, count, dt, dest, tag, comm, SendMode::standard, request);
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ibsend");
  Args a;
  int rc = check_send("MPI_Ibsend", buf, count, dt, dest, tag, comm, &a);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, "MPI_Ibsend", "request is NULL");
  if (a.peer != kNoPeer) {
    copy_out_of_device(&a);
    StagingBuffer packed;
    Status s;
    const void* data = send_data(a, buf, &packed, &s);
    if (s != Status::ok) return raise_status(comm, s, "MPI_Ibsend");
    (void)post_bsend(data, a.bytes, a.peer, send_tag(*a.comm, tag), "MPI_Ibsend", comm, &rc);
    if (rc != MPI_SUCCESS) return rc;
  }
  Request* r = g_state->requests.alloc(RequestKind::send);
  r->complete = true;  // the data was copied: the user's buffer is free again
  *request = request_handle(r);
  return MPI_SUCCESS;
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
  for (Request* r : b.pending) {  // detaching waits for every buffered message to go out
    if (!r->complete) g_state->transport->wait(r);
    g_state->requests.release(r);
  }
  b.pending.clear();
  *static_cast<void**>(buffer_addr) = b.buffer;
  *size = int(b.capacity);
  b = BufferedSends{};
  return MPI_SUCCESS;
}

int PMPI_Recv(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  return do_recv("MPI_Recv", buf, count, dt, source, tag, comm, status);
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return do_irecv("MPI_Irecv", buf, count, dt, source, tag, comm, request);
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Sendrecv");
  MPI_Request req;
  int rc = do_irecv("MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm, &req);
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
  WEFT_REQUIRE_INIT("MPI_Sendrecv_replace");
  Args sa;
  int rc = check_send("MPI_Sendrecv_replace", buf, count, dt, dest, sendtag, comm, &sa);
  if (rc != MPI_SUCCESS) return rc;
  // The outgoing data is copied (packed) first, so the receive can land in the same buffer.
  copy_out_of_device(&sa);
  StagingBuffer copy = staging_buffer(sa.bytes);
  if (sa.contiguous) {
    if (sa.bytes) memcpy(copy.get(), static_cast<const char*>(buf) + sa.offset, sa.bytes);
  } else if (Status s = pack_message(sa, buf, copy.get()); s != Status::ok) {
    return raise_status(comm, s, "MPI_Sendrecv_replace");
  }
  MPI_Request req;
  rc = do_irecv("MPI_Sendrecv_replace", buf, count, dt, source, recvtag, comm, &req);
  if (rc != MPI_SUCCESS) return rc;
  if (sa.peer != kNoPeer) {
    Status s = g_state->transport->send(copy.get(), sa.bytes, sa.peer, send_tag(*sa.comm, sendtag),
                                        SendMode::standard, sa.comm);
    if (s != Status::ok) {
      PMPI_Cancel(&req);
      PMPI_Request_free(&req);
      return raise_status(comm, s, "MPI_Sendrecv_replace");
    }
  }
  return PMPI_Wait(&req, status);
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return make_persistent("MPI_Send_init", const_cast<void*>(buf), count, dt, dest, tag, comm,
                         PersistentKind::send, request);
}

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return make_persistent("MPI_Ssend_init", const_cast<void*>(buf), count, dt, dest, tag, comm,
                         PersistentKind::ssend, request);
}

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return make_persistent("MPI_Rsend_init", const_cast<void*>(buf), count, dt, dest, tag, comm,
                         PersistentKind::send, request);
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return make_persistent("MPI_Bsend_init", const_cast<void*>(buf), count, dt, dest, tag, comm,
                         PersistentKind::bsend, request);
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

WEFT_PMPI_ALIAS(Send)
WEFT_PMPI_ALIAS(Ssend)
WEFT_PMPI_ALIAS(Rsend)
WEFT_PMPI_ALIAS(Bsend)
WEFT_PMPI_ALIAS(Isend)
WEFT_PMPI_ALIAS(Issend)
WEFT_PMPI_ALIAS(Irsend)
WEFT_PMPI_ALIAS(Ibsend)
WEFT_PMPI_ALIAS(Buffer_attach)
WEFT_PMPI_ALIAS(Buffer_detach)
WEFT_PMPI_ALIAS(Recv)
WEFT_PMPI_ALIAS(Irecv)
WEFT_PMPI_ALIAS(Sendrecv)
WEFT_PMPI_ALIAS(Sendrecv_replace)
WEFT_PMPI_ALIAS(Send_init)
WEFT_PMPI_ALIAS(Ssend_init)
WEFT_PMPI_ALIAS(Rsend_init)
WEFT_PMPI_ALIAS(Bsend_init)
WEFT_PMPI_ALIAS(Recv_init)
WEFT_PMPI_ALIAS(Start)
WEFT_PMPI_ALIAS(Startall)
