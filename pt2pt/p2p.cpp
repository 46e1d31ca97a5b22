// Point-to-point messages: layout, device path, send and receive over the transport, buffered
// and persistent sends.
#include "pt2pt/p2p.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "pt2pt/tag.h"
#include "runtime/device_staging.h"
#include "runtime/log.h"
#include "runtime/typemap.h"

namespace weft {

namespace {

// The reverse of pack_message, for the `bytes` that arrived.
Status unpack_message(const Message& m, const void* src, size_t bytes, void* buf) {
  if (m.device) return memkind_copy(static_cast<char*>(buf) + m.offset, src, bytes);
  type_unpack(m.type, src, bytes, buf, m.count, 0);
  return Status::ok;
}

// The bytes to send: the user's buffer itself when contiguous, else packed into *owned.
const void* send_data(const Message& m, const void* buf, StagingBuffer* owned, Status* s) {
  *s = Status::ok;
  if (m.contiguous) return static_cast<const char*>(buf) + m.offset;
  *owned = staging_buffer(m.bytes);
  *s = pack_message(m, buf, owned->get());
  return owned->get();
}

// Where to receive: the user's buffer when contiguous, else a staging buffer in *owned.
void* recv_target(const Message& m, void* buf, StagingBuffer* owned) {
  if (m.contiguous) return static_cast<char*>(buf) + m.offset;
  if (!*owned) *owned = staging_buffer(m.bytes);
  return owned->get();
}

// A staged receive unpacks from the request's staging buffer when the user completes it;
// `release_type`: the finish step also drops the datatype reference the receive holds.
void arm_unpack(Request* r, const Message& m, void* buf, bool release_type) {
  if (m.contiguous) return;
  r->finish = [m, buf, release_type](Request& q) {
    if (q.status.error == Status::ok || q.status.error == Status::truncated) {
      Status s = unpack_message(m, q.owned_buffer.get(), q.status.bytes, buf);
      if (s != Status::ok) q.status.error = s;
    }
    if (release_type) type_release(m.type);
  };
}

int source_of(const Message& m) { return m.peer == kAnyPeer ? -1 : m.peer; }

void log_device_path(DevicePath path, int peer) {
  switch (path) {
    case DevicePath::cuda_ipc:
      if (log_first_time("pt2pt-device-ipc"))
        WEFT_INFO(Subsys::gpu, "point-to-point on GPU device buffers between ranks of one node: CUDA IPC "
                  "(the receiver copies from the sender's buffer once)");
      break;
    case DevicePath::pipelined:
      if (log_first_time(peer >= 0 ? "pt2pt-device-pipelined-" + std::to_string(peer)
                                   : std::string("pt2pt-device-pipelined-any")))
        WEFT_INFO(Subsys::gpu, "device point-to-point with %s over UCX: pipelined through pinned "
                  "chunks of %zu bytes (two per message, WEFT_CUDA_STAGING_CHUNK)",
                  peer >= 0 ? ("rank " + std::to_string(peer)).c_str() : "any source",
                  device_staging_chunk());
      break;
    case DevicePath::mixed:
      if (log_first_time("pt2pt-device-mixed"))
        WEFT_INFO(Subsys::gpu, "device point-to-point with any source: CUDA IPC from this node's "
                  "ranks, pipelined through pinned chunks of %zu bytes over UCX from the others",
                  device_staging_chunk());
      break;
    case DevicePath::staged:
      break;
  }
}

// Blocking operations on device buffers go through a request: the transport's request-free
// fast paths are for host memory.
Status through_request(Transport& t, const Message& m, Request* r, Status posted, RequestStatus* out) {
  Status s = posted;
  if (s == Status::ok) {
    if (!r->complete) t.wait(r, m.comm);
    s = r->status.error;
    if (out) *out = r->status;
  }
  t.pool().release(r);
  return s;
}

}  // namespace

Status describe_device_message(const void* buf, Message* m) {
  const MemInfo kind = memkind_query(buf);
  if (kind.kind == MemKind::unsupported_device) return Status::invalid_buffer;
  if (!host_accessible(kind)) {
    if (!m->contiguous) {
      set_error_detail("non-contiguous datatypes on GPU device buffers are not supported yet");
      return Status::invalid_type;
    }
    m->on_device = true;
  }
  return Status::ok;
}

// A device buffer goes to the transport as it is where the peer is reached through weft
// shared memory with CUDA IPC, or over UCX with pipelined staging through pinned host chunks
// (the intended path between nodes: logged at INFO, allowed under WEFT_REQUIRE_FAST_PATH).
Status choose_device_path_slow(Transport& t, Message* m) {
  std::string reason;
  const DevicePath path = t.device_path(source_of(*m), &reason);
  if (path != DevicePath::staged) {
    m->device_direct = true;
    log_device_path(path, source_of(*m));
    return Status::ok;
  }
  if (t.require_fast_path()) {
    set_error_detail("a GPU device buffer would be staged through host memory (" + reason +
                     "), and WEFT_REQUIRE_FAST_PATH forbids slower paths");
    return Status::not_supported;
  }
  if (log_first_time("pt2pt-device-staging"))
    WEFT_WARN(Subsys::gpu, "point-to-point on GPU device buffers is staged through host memory "
              "(cudaMemcpy per message): %s", reason.c_str());
  m->device = true;
  m->contiguous = false;
  return Status::ok;
}

void copy_out_of_device(Message* m) {
  if (!m->device_direct) return;
  m->device_direct = false;
  m->device = true;
  m->contiguous = false;
}

Status pack_message(const Message& m, const void* buf, void* dst) {
  if (m.device) return memkind_copy(dst, static_cast<const char*>(buf) + m.offset, m.bytes);
  type_pack(m.type, buf, m.count, dst, 0, SIZE_MAX);
  return Status::ok;
}

Status send(Transport& t, const Message& m, const void* buf, SendMode mode) {
  if (m.device_direct) {
    Request* r = t.pool().alloc(RequestKind::send);
    r->device_buffer = true;
    return through_request(t, m, r, t.isend(static_cast<const char*>(buf) + m.offset, m.bytes, m.peer, m.tag, mode, r),
                           nullptr);
  }
  StagingBuffer packed;
  Status s;
  const void* data = send_data(m, buf, &packed, &s);
  if (s != Status::ok) return s;
  return t.send(data, m.bytes, m.peer, m.tag, mode, m.comm);
}

Status isend(Transport& t, const Message& m, const void* buf, SendMode mode, Request* r) {
  r->device_buffer = m.device_direct;
  Status s;
  const void* data = send_data(m, buf, &r->owned_buffer, &s);
  if (s != Status::ok) return s;
  return t.isend(data, m.bytes, m.peer, m.tag, mode, r);
}

Status recv(Transport& t, const Message& m, void* buf, RequestStatus* out) {
  if (m.device_direct) {
    Request* r = t.pool().alloc(RequestKind::recv);
    r->device_buffer = true;
    return through_request(t, m, r, t.irecv(static_cast<char*>(buf) + m.offset, m.bytes, source_of(m), m.tag, m.mask, r),
                           out);
  }
  MatchInfo info;
  StagingBuffer staging;
  void* target = recv_target(m, buf, &staging);
  Status s = t.recv(target, m.bytes, source_of(m), m.tag, m.mask, &info, m.comm);
  if (!m.contiguous && (s == Status::ok || s == Status::truncated)) {
    Status u = unpack_message(m, staging.get(), info.bytes, buf);
    if (u != Status::ok) s = u;
  }
  out->source = info.source;
  out->tag = info.tag;
  out->bytes = info.bytes;
  return s;
}

Status irecv(Transport& t, const Message& m, void* buf, Request* r) {
  r->device_buffer = m.device_direct;
  void* target = recv_target(m, buf, &r->owned_buffer);
  if (!m.contiguous) type_retain(m.type);
  arm_unpack(r, m, buf, true);
  return t.irecv(target, m.bytes, source_of(m), m.tag, m.mask, r);
}

Status post_immediate(Transport& t, RequestPool& pool, const Message& m, void* buf, bool receive, SendMode mode,
                      int owner, Request** out) {
  Request* r = pool.alloc(receive ? RequestKind::recv : RequestKind::send);
  r->owner = owner;
  const Status s = receive ? irecv(t, m, buf, r) : isend(t, m, buf, mode, r);
  if (s != Status::ok) [[unlikely]] {
    pool.release(r);
    return s;
  }
  *out = r;
  return Status::ok;
}

Status mrecv(Transport& t, Message m, void* buf, Request* r) {
  if (m.on_device) {
    m.device_direct = t.device_direct(-1);
    m.device = !m.device_direct;
    m.contiguous = m.device_direct;
  }
  void* matched = r->transport_handle;
  r->transport_handle = nullptr;
  r->device_buffer = m.device_direct;
  void* target = recv_target(m, buf, &r->owned_buffer);
  if (!m.contiguous) type_retain(m.type);
  arm_unpack(r, m, buf, true);
  return t.mrecv(target, m.bytes, matched, r);
}

Status copy_message(Message* m, const void* buf, StagingBuffer* out) {
  copy_out_of_device(m);
  *out = staging_buffer(m->bytes);
  if (!m->contiguous) return pack_message(*m, buf, out->get());
  if (m->bytes) memcpy(out->get(), static_cast<const char*>(buf) + m->offset, m->bytes);
  return Status::ok;
}

Request* completed_request(RequestPool& pool, RequestKind kind, const RequestStatus& null_status) {
  Request* r = pool.alloc(kind);
  r->complete = true;
  r->status = null_status;
  return r;
}

namespace {

// Frees the space of the buffered copies whose sends have finished.
void reclaim_finished(Transport& t, BufferedSends& b) {
  for (size_t i = 0; i < b.pending.size();) {
    Request* r = b.pending[i];
    if (r->complete) {
      b.in_use -= r->owned_bytes + kBsendOverhead;
      t.pool().release(r);
      b.pending[i] = b.pending.back();
      b.pending.pop_back();
    } else {
      ++i;
    }
  }
}

// Completes the flush requests none of whose copies is still pending.
void complete_flushes(BufferedSends& b) {
  uint64_t oldest = UINT64_MAX;  // the lowest number of a copy still in flight
  for (const Request* r : b.pending) oldest = std::min(oldest, r->buffered);
  for (size_t i = 0; i < b.flushes.size();) {
    if (b.flushes[i].last < oldest) {
      b.flushes[i].request->complete = true;
      b.flushes[i] = b.flushes.back();
      b.flushes.pop_back();
    } else {
      ++i;
    }
  }
}

// The poller of a BufferedSends with flush requests: armed while it has any.
int poll_flushes(void* ctx) {
  auto& b = *static_cast<BufferedSends*>(ctx);
  const size_t before = b.flushes.size();
  reclaim_finished(*b.transport, b);
  complete_flushes(b);
  if (b.flushes.empty()) b.transport->progress_engine().disarm(b.flush_poller);
  return int(before - b.flushes.size());
}

// How long a buffered send that finds the attached space short waits for earlier copies to go
// out before it fails: bounded, so that a peer that never receives cannot hang it.
constexpr auto kBsendSpaceWait = std::chrono::seconds(1);

}  // namespace

Status bsend(Transport& t, BufferedSends& b, const Message& m, const void* buf, uint64_t* number) {
  StagingBuffer packed;
  Status s;
  const void* data = send_data(m, buf, &packed, &s);
  if (s != Status::ok) return s;
  reclaim_finished(t, b);
  const size_t bytes = m.bytes;
  auto fits = [&] { return b.automatic || b.in_use + bytes + kBsendOverhead <= b.capacity; };
  if (!fits() && !b.pending.empty()) {
    // Copies the receivers have taken may not be reclaimed yet (a rendezvous send completes
    // through progress, and other threads may be sending from the same buffer): progress
    // until enough space is free, for a bounded time.
    const auto deadline = std::chrono::steady_clock::now() + kBsendSpaceWait;
    uint32_t idle = 0;
    for (uint32_t n = 0; !fits() && !b.pending.empty(); ++n) {
      if (n % 64 == 63 && std::chrono::steady_clock::now() > deadline) break;
      t.progress_engine().pass(&idle);
      reclaim_finished(t, b);
    }
  }
  if (!fits()) {
    char msg[160];
    snprintf(msg, sizeof msg, "attached buffer too small: %zu bytes needed, %zu of %zu free (MPI_Buffer_attach)",
             bytes + kBsendOverhead, b.capacity - b.in_use, b.capacity);
    set_error_detail(msg);
    return Status::invalid_buffer;
  }
  Request* r = t.pool().alloc(RequestKind::send);
  r->owned_buffer = staging_buffer(bytes);
  r->owned_bytes = bytes;
  if (bytes) memcpy(r->owned_buffer.get(), data, bytes);
  s = t.isend(r->owned_buffer.get(), bytes, m.peer, m.tag, SendMode::standard, r);
  if (s != Status::ok) {
    t.pool().release(r);
    return s;
  }
  b.in_use += bytes + kBsendOverhead;
  b.pending.push_back(r);
  r->buffered = ++b.copies;
  if (number) *number = r->buffered;
  return Status::ok;
}

Status cancel_buffered(Transport& t, BufferedSends& b, Request* r) {
  auto it = std::find_if(b.pending.begin(), b.pending.end(), [&](const Request* c) { return c->buffered == r->buffered; });
  if (r->buffered == 0 || it == b.pending.end()) return Status::ok;
  Request* copy = *it;
  WEFT_TRY(t.cancel(copy));
  if (!copy->complete) t.wait(copy);
  if (!copy->status.cancelled) return Status::ok;
  r->status.cancelled = true;
  r->buffered = 0;
  b.in_use -= copy->owned_bytes + kBsendOverhead;
  b.pending.erase(it);
  t.pool().release(copy);
  return Status::ok;
}

void flush(Transport& t, BufferedSends& b) {
  for (Request* r : b.pending) {
    if (!r->complete) t.wait(r);
    t.pool().release(r);
  }
  b.pending.clear();
  b.in_use = 0;
  complete_flushes(b);
}

void iflush(Transport& t, BufferedSends& b, Request* r) {
  reclaim_finished(t, b);
  b.flushes.push_back({r, b.copies});
  complete_flushes(b);
  if (b.flushes.empty()) return;
  if (!b.transport) {
    b.transport = &t;
    b.flush_poller = t.progress_engine().add_poller(poll_flushes, &b);
  } else {
    t.progress_engine().arm(b.flush_poller);
  }
}

void detach(Transport& t, BufferedSends& b) {
  flush(t, b);  // detaching waits for every buffered message to go out
  if (b.transport) t.progress_engine().remove_poller(poll_flushes, &b);
  b = BufferedSends{};
}

std::function<Status(Request&)> persistent_start(Transport& t, const Message& m, void* buf, PersistentKind kind,
                                                 const BsendScopes& b, const RequestStatus& null_status) {
  if (m.peer == kNoPeer) {
    return [null_status](Request& q) {
      q.complete = true;
      q.status = null_status;
      return Status::ok;
    };
  }
  // The datatype stays alive while the request exists: the hold goes with the start function.
  type_retain(m.type);
  std::shared_ptr<const Datatype> hold(m.type, [](const Datatype* d) { type_release(d); });
  Transport* tp = &t;
  if (kind == PersistentKind::recv) {
    return [tp, m, buf, hold](Request& q) {
      void* target = recv_target(m, buf, &q.owned_buffer);
      arm_unpack(&q, m, buf, false);
      q.device_buffer = m.device_direct;
      return tp->irecv(target, m.bytes, source_of(m), m.tag, m.mask, &q);
    };
  }
  if (kind == PersistentKind::bsend) {
    return [tp, m, buf, hold, b](Request& q) {
      q.status = RequestStatus{};
      WEFT_TRY(bsend(*tp, b.pick(), m, buf, &q.buffered));
      q.complete = true;
      return Status::ok;
    };
  }
  const SendMode mode = kind == PersistentKind::ssend ? SendMode::synchronous : SendMode::standard;
  return [tp, m, buf, hold, mode](Request& q) {
    // Packed again at every start: the user may change the data between starts.
    if (!m.contiguous && !q.owned_buffer) q.owned_buffer = staging_buffer(m.bytes);
    if (!m.contiguous) WEFT_TRY(pack_message(m, buf, q.owned_buffer.get()));
    const void* data = m.contiguous ? static_cast<const char*>(buf) + m.offset : q.owned_buffer.get();
    q.device_buffer = m.device_direct;
    return tp->isend(data, m.bytes, m.peer, m.tag, mode, &q);
  };
}

Request* persistent_request(Transport& t, RequestPool& pool, const Message& m, void* buf, PersistentKind kind,
                            const BsendScopes& b, const RequestStatus& null_status, int owner) {
  Request* r = pool.alloc(kind == PersistentKind::recv ? RequestKind::recv : RequestKind::send);
  r->persistent = true;
  r->owner = owner;
  r->complete = true;  // inactive until started
  r->start = persistent_start(t, m, buf, kind, b, null_status);
  return r;
}

}  // namespace weft
