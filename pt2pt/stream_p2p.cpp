// The stream-native point-to-point protocol (stream.h): host headers, device ready and done
// words (StreamFlags), a CUDA IPC copy by the receiver.
#include <algorithm>
#include <memory>

#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "stream.h"
#include "tag.h"

namespace weft {

namespace {

// A stream-native send announces itself with a host message to the receiver: on the
// communicator's collective context (user receives, wildcards included, match only the
// point-to-point context), under the user's tag with bit 23 set (reserved for internal
// protocols; the collectives' sequence tags stay below it for 2^23 collective calls).
constexpr uint32_t kTagBit = 1u << 23;

uint64_t header_tag(const Comm& c, int source, int tag) {
  return tag::make(c.coll_context(), uint32_t(source), kTagBit | uint32_t(tag));
}

Status fail(Status kind, const std::string& msg) {
  WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}

}  // namespace

struct StreamP2p::Header {
  IpcDescriptor desc;  // the sender's buffer (bytes > 0)
  uint64_t bytes = 0;
  uint64_t seq = 0;     // the sender's sequence number for this receiver (from 1); captured:
                        // the message's number among the pair's captured ones (from 1)
  int32_t failed = 0;   // the sender could not describe its buffer: nothing was made ready
  uint32_t captured = 0;  // the send was captured into a CUDA graph
};

// What a stream-native request carries, as its finish step (which does nothing:
// std::function::target finds it, and it goes with the request). A send's request is complete
// on the host; a receive's is the transport's receive of the sender's header.
struct StreamP2p::Native {
  int peer = -1;  // communicator rank
  int tag = 0;
  uint64_t seq = 0;  // send (captured: its number among the captured sends to peer)
  bool send = false;
  bool captured = false;  // send: captured into a CUDA graph
  std::shared_ptr<Header> header;  // receive: where the header lands
  void* buf = nullptr;             // receive: the contiguous buffer and its capacity
  size_t capacity = 0;
  void operator()(Request&) const {}
};

void StreamP2p::init(const Comm& c, std::string why, const StreamFlags* flags) {
  why_ = std::move(why);
  flags_ = flags;
  send_seq_.assign(size_t(c.size), 0);
  unwaited_.assign(size_t(c.size), {});
  graph_sent_.assign(size_t(c.size), 0);
  graph_received_.assign(size_t(c.size), 0);
}

std::string StreamP2p::native_why(const char* fn, const Comm& c, int peer, bool wildcard, bool contiguous,
                                  const void* buf, size_t bytes) const {
  std::string why;
  if (wildcard) why = "MPI_ANY_SOURCE or MPI_ANY_TAG";
  else if (!why_.empty()) why = why_;
  else if (peer == c.rank) why = "a message to or from the calling rank";
  else if (bytes > 0 && !contiguous) why = "non-contiguous datatype";
  else if (bytes > 0 && memkind_query(buf).kind != MemKind::cuda_device) why = "buffer not in CUDA device memory";
  else if (!flags_) why = "no device flags on " + c.label();
  else why = flags_->unusable(c);
  // The key is built only where INFO is on: this runs on every enqueued call.
  if (log_enabled(LogLevel::info, Subsys::gpu) &&
      log_first_time(std::string("stream-p2p:") + c.label() + ":" + fn + ":" + why)) {
    if (why.empty())
      WEFT_INFO(Subsys::gpu, "%s on %s: stream-native (flag kernels and a CUDA IPC copy)", fn, c.label().c_str());
    else WEFT_INFO(Subsys::gpu, "%s on %s: falls back (%s)", fn, c.label().c_str(), why.c_str());
  }
  return why;
}

Status StreamP2p::send(Transport& t, const Comm& c, const UserStream& s, const void* buf, size_t bytes, int dest,
                       int tag, Request** request) const {
  const bool captured = stream_capturing(s.cuda);
  const uint64_t seq = (captured ? graph_sent_ : send_seq_)[size_t(dest)] + 1;
  const int slots = flags_->slots();
  if (!captured)
    for (uint64_t old : unwaited_[size_t(dest)])
      if (old + uint64_t(slots) <= seq)
        return fail(Status::transport, std::to_string(slots - 1) + " stream-native sends to rank " +
                                           std::to_string(dest) + " are not waited for: enqueue the wait of the oldest "
                                           "(MPIX_Wait_enqueue) before more sends to that rank");
  Header h;
  h.bytes = bytes;
  h.seq = seq;
  h.captured = captured;
  Status st = bytes > 0 ? cuda_ipc_describe(buf, &h.desc) : Status::ok;
  h.failed = st != Status::ok;
  // The header goes out even when the buffer could not be described, so the receiver fails too.
  const Status sent = t.send(&h, sizeof h, c.world_rank(dest), header_tag(c, c.rank, tag), SendMode::standard);
  WEFT_TRY(st);
  WEFT_TRY(sent);
  (captured ? graph_sent_ : send_seq_)[size_t(dest)] = seq;
  s.enqueued = true;  // the communicator's free waits for the stream
  if (captured) {
    WEFT_TRY(flags_->graph_ready(c, dest, s.cuda));
    if (!request) return flags_->graph_wait_done(c, dest, 0, s.cuda);
  } else {
    WEFT_TRY(flags_->ready(c, dest, seq, s.cuda));
    if (!request) return flags_->wait_done(c, dest, seq, s.cuda);
  }
  Request* r = t.pool().alloc(RequestKind::send);
  r->complete = true;
  r->owner = c.handle;
  r->peer = c.world_rank(dest);
  r->finish = Native{dest, tag, seq, true, captured, nullptr, nullptr, 0};
  if (!captured) unwaited_[size_t(dest)].push_back(seq);
  *request = r;
  return Status::ok;
}

// Once the sender's header has arrived: maps its buffer and enqueues the receive (wait for
// ready, copy, publish done).
Status StreamP2p::enqueue_recv(const Comm& c, const UserStream& s, int source, int tag, const Header& h, void* buf,
                               size_t capacity, RequestStatus* rs) const {
  rs->source = source;
  rs->tag = tag;
  rs->bytes = std::min<uint64_t>(h.bytes, capacity);
  if (h.failed)
    return fail(Status::transport, "rank " + std::to_string(source) + " could not describe its send buffer (tag " +
                                       std::to_string(tag) + ") for CUDA IPC");
  const bool captured = stream_capturing(s.cuda);
  if (captured != (h.captured != 0))
    return fail(Status::transport, std::string("a message from rank ") + std::to_string(source) + " (tag " +
                                       std::to_string(tag) + ") was " + (h.captured ? "" : "not ") +
                                       "sent from a stream being captured into a CUDA graph, and this receive is " +
                                       (captured ? "" : "not ") + "captured: capture both sides or neither");
  if (captured && h.seq != graph_received_[size_t(source)] + 1)
    return fail(Status::transport, "captured receives from rank " + std::to_string(source) +
                                       " must match its captured sends in send order: this is its captured message " +
                                       std::to_string(h.seq) + ", expected " +
                                       std::to_string(graph_received_[size_t(source)] + 1));
  const bool truncated = h.bytes > capacity;
  void* src = nullptr;
  if (h.bytes > 0 && !truncated) WEFT_TRY(cuda_ipc_map(c.world_rank(source), h.desc, &src, captured, true));
  s.enqueued = true;  // the communicator's free waits for the stream
  if (captured) {
    graph_received_[size_t(source)] = h.seq;
    WEFT_TRY(flags_->graph_copy(c, source, src, buf, truncated ? 0 : h.bytes, s.cuda));
  } else {
    WEFT_TRY(flags_->copy(c, source, h.seq, src, buf, truncated ? 0 : h.bytes, s.cuda));
  }
  if (!truncated) return Status::ok;
  set_error_detail("message of " + std::to_string(h.bytes) + " bytes from rank " + std::to_string(source) + " (tag " +
                   std::to_string(tag) + ") into a buffer of " + std::to_string(capacity) + " bytes");
  return Status::truncated;
}

Status StreamP2p::recv(Transport& t, const Comm& c, const UserStream& s, void* buf, size_t capacity, int source,
                       int tag, RequestStatus* rs) const {
  Header h;
  MatchInfo info;
  WEFT_TRY(t.recv(&h, sizeof h, c.world_rank(source), header_tag(c, source, tag), ~0ull, &info));
  return enqueue_recv(c, s, source, tag, h, buf, capacity, rs);
}

Status StreamP2p::irecv(Transport& t, const Comm& c, const UserStream&, void* buf, size_t capacity, int source,
                        int tag, Request** request) const {
  Request* r = t.pool().alloc(RequestKind::recv);
  r->owner = c.handle;
  r->peer = c.world_rank(source);
  Native n{source, tag, 0, false, false, std::make_shared<Header>(), buf, capacity};
  Header* h = n.header.get();
  r->finish = std::move(n);
  const Status st = t.irecv(h, sizeof *h, r->peer, header_tag(c, source, tag), ~0ull, r);
  if (st != Status::ok) {
    t.pool().release(r);
    return st;
  }
  *request = r;
  return Status::ok;
}

bool StreamP2p::is_native(const Request& r) { return r.finish.target<Native>() != nullptr; }

Status StreamP2p::complete(Transport& t, const Comm& c, const UserStream& s, Request* r, RequestStatus* rs) const {
  const Native* n = r->finish.target<Native>();
  Status st = Status::ok;
  if (n->send && n->captured) {
    // The wait names the message by how many captured sends to peer followed it, which only
    // holds inside the same capture.
    if (!stream_capturing(s.cuda))
      st = fail(Status::transport, "the wait of a send captured into a CUDA graph must be captured too");
    else st = flags_->graph_wait_done(c, n->peer, graph_sent_[size_t(n->peer)] - n->seq, s.cuda);
    *rs = r->status;
  } else if (n->send) {
    auto& list = unwaited_[size_t(n->peer)];
    const auto it = std::find(list.begin(), list.end(), n->seq);
    if (it != list.end()) list.erase(it);
    st = flags_->wait_done(c, n->peer, n->seq, s.cuda);
    *rs = r->status;
  } else {
    t.wait(r);  // the sender's header: its enqueue call, not the GPU
    *rs = RequestStatus{};
    st = r->status.error;
    if (st == Status::ok) st = enqueue_recv(c, s, n->peer, n->tag, *n->header, n->buf, n->capacity, rs);
  }
  r->finish = nullptr;
  t.pool().release(r);
  return st;
}

}  // namespace weft
