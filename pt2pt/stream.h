// Point-to-point on a user's CUDA stream (MPIX_Send/Recv/Isend/Irecv_enqueue and the
// MPIX_Wait(all)_enqueue of their requests), and the calls on that stream the stream-ordered
// bindings share.
//
// Stream-native protocol (stream_p2p.cpp), on a communicator whose ranks share one node and map
// each other's flag words (StreamFlags), to or from another rank, contiguous device buffers
// (a 0-byte side needs none), a receive naming its source and tag. The sender sends a host
// header {IPC descriptor, bytes, seq} on the communicator's collective context (user tag | bit
// 23) and enqueues "ready[receiver] = seq" (and, blocking, the wait for the receiver's done
// slot; non-blocking: at the wait). The receiver takes the header on the host (a host wait for
// the sender's enqueue call, not for the GPU; a non-blocking receive defers it to its wait),
// maps the sender's buffer and enqueues "wait ready >= seq, copy, done slot = seq". Each side
// decides alone: both sides of a message must take the same path (device memory in contiguous
// datatypes on both, or a fallback on both).
// A call on a stream being captured into a CUDA graph uses words that count messages on the
// device instead (StreamFlags::graph_*), so the graph may be replayed any number of times; the
// header then carries the message's number among the pair's captured ones, and the receiver
// requires it to be the next (captured messages of one pair are received in send order) and
// both sides to be captured.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm.h"
#include "runtime/request.h"
#include "runtime/status.h"
#include "transport.h"

namespace weft {

// The stream a stream communicator carries (MPIX_Stream_comm_create).
struct UserStream {
  bool gpu = false;               // a cudaStream_t (else a "CPU stream")
  void* cuda = nullptr;           // the cudaStream_t
  mutable bool enqueued = false;  // weft enqueued work on it: freeing the communicator waits
};

// Calls on a user's stream (stream_cuda.cpp; without CUDA, stream_none.cpp: they fail with
// Status::not_supported). Failures are logged and recorded where detected.
// Whether s names a live stream (cudaStreamQuery answers for it); *why says why not.
bool stream_valid(void* s, std::string* why);
// Before `fn` runs as a host call (which `what`s from the host, e.g. "sends"; `why` it cannot
// run stream-native): Status::not_supported under WEFT_REQUIRE_FAST_PATH and while s is
// captured into a CUDA graph; else warns once per call and reason, and waits for the work
// enqueued on s so far.
Status stream_host_fallback(void* s, const char* fn, const char* what, const std::string& why,
                            bool require_fast_path);
// Whether s is being captured into a CUDA graph (false on a failed query, which is logged).
bool stream_capturing(void* s);
// Stream-ordered copy; nothing when dst is src (in place) or bytes is 0.
Status stream_copy(void* s, void* dst, const void* src, size_t bytes);
// Before a stream communicator's GPU workspace goes: waits for the work weft enqueued on its
// stream (unless the stream is being captured).
void stream_drain(const UserStream& s);

// The device words a stream-native message moves through, in memory every rank of the
// communicator maps (coll/gpu keeps them in the communicator's GPU workspace).
class StreamFlags {
 public:
  virtual ~StreamFlags() = default;
  // Why the words cannot be used on c now (empty: they can).
  virtual std::string unusable(const Comm& c) const = 0;
  // Sequence numbers a sender may have in flight to one peer before waiting for the oldest.
  virtual int slots() const = 0;
  // Sender: publishes ready[peer] = seq after the stream's preceding work.
  virtual Status ready(const Comm& c, int peer, uint64_t seq, void* stream) const = 0;
  // Sender: waits until `peer` has copied message seq (its buffer may then be reused).
  virtual Status wait_done(const Comm& c, int peer, uint64_t seq, void* stream) const = 0;
  // Receiver: waits until `peer` made message seq ready, copies `bytes` from src (the sender's
  // buffer, mapped here) to dst, publishes done. bytes 0: no copy.
  virtual Status copy(const Comm& c, int peer, uint64_t seq, const void* src, void* dst, size_t bytes,
                      void* stream) const = 0;
  // The same three for calls captured into a CUDA graph: the words count messages on the
  // device (a replay counts on), and one pair's captured messages are received in send order.
  // wait_done: for the message made ready `back` captured sends to peer ago (0: the last).
  virtual Status graph_ready(const Comm& c, int peer, void* stream) const = 0;
  virtual Status graph_wait_done(const Comm& c, int peer, uint64_t back, void* stream) const = 0;
  virtual Status graph_copy(const Comm& c, int peer, const void* src, void* dst, size_t bytes,
                            void* stream) const = 0;
};

// The protocol's state on one stream communicator. Sequence numbers start at 1 and grow by one
// per message from one rank to another.
class StreamP2p {
 public:
  // why: why the communicator cannot run the protocol, agreed by every rank (empty: it can).
  void init(const Comm& c, std::string why, const StreamFlags* flags);
  const std::string& why() const { return why_; }

  // Why one side of a message cannot run stream-native (empty: it can), logged at INFO once
  // per communicator, call and reason. peer: the other side's communicator rank; wildcard: a
  // receive from any source or with any tag; buf, bytes: the message (send) or the buffer and
  // its capacity (receive), at its first byte.
  std::string native_why(const char* fn, const Comm& c, int peer, bool wildcard, bool contiguous,
                         const void* buf, size_t bytes) const;
  // Stream-native send (native_why said yes). request null: blocking; else *request is complete
  // on the host and its wait (complete) enqueues the wait for the receiver's copy.
  Status send(Transport& t, const Comm& c, const UserStream& s, const void* buf, size_t bytes, int dest,
              int tag, Request** request) const;
  // Stream-native receive, blocking: waits on the host for the sender's header (its enqueue
  // call, never the GPU) and enqueues the copy. A message larger than capacity:
  // Status::truncated, no copy, but done is still published, so the sender completes.
  Status recv(Transport& t, const Comm& c, const UserStream& s, void* buf, size_t capacity, int source,
              int tag, RequestStatus* rs) const;
  // The same, non-blocking: posts the header's receive; complete does the rest.
  Status irecv(Transport& t, const Comm& c, const UserStream& s, void* buf, size_t capacity, int source,
               int tag, Request** request) const;

  // Whether r is a stream-native send or receive; complete such requests with complete() only.
  static bool is_native(const Request& r);
  // Completes and releases a stream-native request (MPIX_Wait(all)_enqueue): a send enqueues
  // its wait for the receiver's copy, a receive waits for the header and enqueues the copy.
  Status complete(Transport& t, const Comm& c, const UserStream& s, Request* r, RequestStatus* rs) const;

 private:
  struct Header;  // what a sender tells the receiver on the host
  struct Native;  // what a stream-native request carries
  Status enqueue_recv(const Comm& c, const UserStream& s, int source, int tag, const Header& h, void* buf,
                      size_t capacity, RequestStatus* rs) const;
  std::string why_ = "not a stream communicator";
  const StreamFlags* flags_ = nullptr;
  // The last sequence number sent to each rank, and per rank those of the non-blocking sends
  // whose wait is not enqueued yet (at most slots() - 1 back).
  mutable std::vector<uint64_t> send_seq_;
  // Captured messages sent to and received from each rank, counted at capture.
  mutable std::vector<uint64_t> graph_sent_, graph_received_;
  mutable std::vector<std::vector<uint64_t>> unwaited_;
};

}  // namespace weft
