// Point-to-point messages over the transport: how `count` elements of a datatype travel
// (packed size, in place or staged, the device path), and the send, receive, buffered and
// persistent operations built on Transport. Arguments are valid (mpi/ checks them).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pt2pt/comm.h"
#include "pt2pt/tag.h"
#include "pt2pt/transport.h"
#include "runtime/datatype.h"
#include "runtime/memkind.h"
#include "runtime/request.h"
#include "runtime/staging.h"
#include "runtime/typemap.h"

namespace weft {

inline constexpr int kNoPeer = -1;     // a message to or from MPI_PROC_NULL: completes at once
inline constexpr int kAnyPeer = -2;    // a receive from any source

struct Message {
  const Comm* comm = nullptr;
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
  int peer = kNoPeer;       // job rank of the peer, kNoPeer or kAnyPeer
  uint64_t tag = 0, mask = 0;  // transport tag and receive mask
};

// The layout of `count` elements of type at buf; the one memory-kind query of the call.
// Status::invalid_buffer: device memory in a build without CUDA; Status::invalid_type: a
// non-contiguous type on device memory (detail set).
// describe_message's memory-kind query, for a process that may hold device memory.
Status describe_device_message(const void* buf, Message* m);
// Inline, as the rest of a message's fast path: every small send and receive takes it.
inline Status describe_message(const Comm* c, const Datatype* type, size_t count, const void* buf, Message* m) {
  m->comm = c;
  m->type = type;
  m->count = count;
  m->bytes = type_packed_size(type, count);  // predefined: count * extent, padding included
  m->contiguous = type_is_contiguous(type, count, &m->offset);
  // A build without CUDA asks only while the CUDA driver is loaded, and refuses device memory.
  if (m->bytes > 0 && memkind_device_possible()) [[unlikely]] return describe_device_message(buf, m);
  return Status::ok;
}

inline void set_send_tag(Message* m, int tag) {
  m->tag = tag::make(m->comm->pt2pt_context(), uint32_t(m->comm->rank), uint32_t(tag));
}
inline void set_recv_tag(Message* m, int source, bool any_source, int tag, bool any_tag) {
  m->tag = tag::make(m->comm->pt2pt_context(), any_source ? 0u : uint32_t(source), any_tag ? 0u : uint32_t(tag));
  m->mask = tag::recv_mask(any_source, any_tag);
}

// Chooses how a device buffer travels once the peer is known: as it is, or staged through
// host memory (one WARN). Status::not_supported, with the reason in the detail, when staging
// would be needed and WEFT_REQUIRE_FAST_PATH forbids it.
Status choose_device_path_slow(Transport& t, Message* m);
inline Status choose_device_path(Transport& t, Message* m) {
  if (!m->on_device || m->peer == kNoPeer) [[likely]] return Status::ok;
  return choose_device_path_slow(t, m);
}
// Buffered sends copy the data out at once: from device memory too, into host memory.
void copy_out_of_device(Message* m);

// Copies the outgoing data into dst: packs it, or copies it out of device memory.
Status pack_message(const Message& m, const void* buf, void* dst);

// Blocking and non-blocking send and receive; r from t.pool(), status filled on completion.
Status send(Transport& t, const Message& m, const void* buf, SendMode mode);
Status isend(Transport& t, const Message& m, const void* buf, SendMode mode, Request* r);
Status recv(Transport& t, const Message& m, void* buf, RequestStatus* out);
Status irecv(Transport& t, const Message& m, void* buf, Request* r);
// MPI_Isend and its modes, or MPI_Irecv (receive): a request from pool, owned by the
// communicator handle `owner`, posted into *out; when posting fails it goes back to the pool.
Status post_immediate(Transport& t, RequestPool& pool, const Message& m, void* buf, bool receive, SendMode mode,
                      int owner, Request** out);
// Receives the message matched by a probe (Transport::probe with remove) that r holds (its
// transport handle) into buf. Device memory takes CUDA IPC or the pipeline over UCX where the
// transport has them, else the host and a copy.
Status mrecv(Transport& t, Message m, void* buf, Request* r);
// The outgoing data of m copied (packed) out of buf into *out, so that a receive may land in
// buf (MPI_Sendrecv_replace); device memory is copied out of the device.
Status copy_message(Message* m, const void* buf, StagingBuffer* out);
// A request already complete with `null_status` (the status of an operation on MPI_PROC_NULL).
Request* completed_request(RequestPool& pool, RequestKind kind, const RequestStatus& null_status);

// The space attached for buffered sends and the copies in flight in it. Copies are made into
// staging memory of their own; the attached space only bounds how much may be in flight.
struct BufferedSends {
  char* buffer = nullptr;
  size_t capacity = 0;
  bool automatic = false;  // MPI_BUFFER_AUTOMATIC: no bound
  size_t in_use = 0;
  std::vector<Request*> pending;
  uint64_t copies = 0;  // copies made so far: each copy's number (Request::buffered)
  // MPI_Buffer_iflush requests not complete yet: each waits for the copies numbered up to `last`.
  struct Flush {
    Request* request;
    uint64_t last;
  };
  std::vector<Flush> flushes;
  Transport* transport = nullptr;      // the flush poller's, once one was registered
  Progress::PollerId flush_poller = 0;
  bool attached() const { return buffer || automatic; }
};
// Which attached space a buffered send on a communicator uses (MPI 4.1): the communicator's if
// one is attached, else its session's, else the process's. Shared: a persistent buffered send
// keeps its communicator's scopes alive. session may be null (a communicator of the world model).
struct BsendScopes {
  std::shared_ptr<BufferedSends> comm, session, process;
  BufferedSends& pick() const {
    if (comm && comm->attached()) return *comm;
    if (session && session->attached()) return *session;
    return *process;
  }
};
inline constexpr size_t kBsendOverhead = 96;  // bytes each buffered message takes beside its data
// Copies the message out and sends the copy. When the attached space is short, progresses for
// up to a second so that copies already received free theirs; Status::invalid_buffer (detail
// set) when it is still too small. *number (if given): the copy's number, for cancel_buffered.
Status bsend(Transport& t, BufferedSends& b, const Message& m, const void* buf, uint64_t* number = nullptr);
// Cancels the buffered send that r stands for (MPI_Ibsend, a started MPI_Bsend_init; its
// Request::buffered names the copy): the copy still in flight is recalled (Transport::cancel),
// waiting for the receiver's answer; if recalled, its space is free again and r reports
// cancelled. A copy gone out and reclaimed already is not recalled.
Status cancel_buffered(Transport& t, BufferedSends& b, Request* r);
// Waits for every buffered message to go out (MPI_Buffer_flush); the space stays attached.
void flush(Transport& t, BufferedSends& b);
// MPI_Buffer_iflush: r completes once every message buffered before the call has gone out (a
// poller reclaims the copies as they finish).
void iflush(Transport& t, BufferedSends& b, Request* r);
// Waits for every buffered message to go out and forgets the buffer.
void detach(Transport& t, BufferedSends& b);

enum class PersistentKind { send, ssend, bsend, recv };
// The start function of a persistent request (Request::start); the datatype stays retained
// while the request exists.
std::function<Status(Request&)> persistent_start(Transport& t, const Message& m, void* buf, PersistentKind kind,
                                                 const BsendScopes& b, const RequestStatus& null_status);
// A persistent request (MPI_Send_init and friends) from pool with that start function, owned by
// the communicator handle `owner`, inactive until started.
Request* persistent_request(Transport& t, RequestPool& pool, const Message& m, void* buf, PersistentKind kind,
                            const BsendScopes& b, const RequestStatus& null_status, int owner);

}  // namespace weft
