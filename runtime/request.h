// Requests: the handle of every non-blocking operation, pooled so the hot path never
// allocates. Layers above fill in how an operation starts, completes and is cancelled.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "profiler.h"
#include "staging.h"
#include "status.h"

namespace weft {

enum class RequestKind : uint8_t { send, recv, coll, generalized };

struct RequestStatus {
  int source = -1;
  int tag = -1;
  size_t bytes = 0;
  Status error = Status::ok;
  bool cancelled = false;
};

// A request's plain fields, reset on release with one trivial copy.
struct RequestFields {
  uint32_t index = 0;  // position in the pool; stable for the request's life
  RequestKind kind = RequestKind::send;
  bool complete = false;
  bool persistent = false;
  bool active = false;      // persistent requests: started and not yet completed by a wait
  bool user_freed = false;  // freed by the user while in flight: release on completion
  bool live = false;        // allocated from the pool and not yet released
  bool device_buffer = false;  // the buffer handed to the transport is GPU device memory
  bool collective_step = false;  // a collective's own send or receive: any member's failure fails it
  RequestStatus status;
  int peer = -1;                          // job rank of the peer; -1 when any source
  int owner = 0;                          // handle of the communicator (errors are raised there)
  void* transport_handle = nullptr;       // in-flight transport operation (for cancel)
  void* device_staging = nullptr;         // transport: a device buffer's pinned staging over UCX
  uint32_t message = 0;                   // transport: a send's number at its receiver, to cancel it by
  uint64_t buffered = 0;                  // a buffered send's copy in flight (its number), for cancel
  size_t owned_bytes = 0;
  void* profile = nullptr;                // the profiler's TRANSFER event, stopped at release
};

static_assert(std::is_trivially_copyable_v<RequestFields>, "RequestPool::release resets it with memcpy");

struct Request : RequestFields {
  StagingBuffer owned_buffer;             // e.g. the copy a buffered send owns
  std::function<Status(Request&)> start;  // persistent requests: posts the operation again
  // Runs once when the user learns of completion (wait, test, ...), e.g. to unpack a
  // non-contiguous receive from owned_buffer.
  std::function<void(Request&)> finish;
};

// Runs and clears r's finish step, if any.
inline void run_finish(Request* r) {
  if (r->finish) {
    auto f = std::move(r->finish);
    r->finish = nullptr;
    f(*r);
  }
}

// A request's fields as the pool hands it out.
inline constexpr RequestFields kFreshRequestFields{};

class RequestPool {
 public:
  // Inline: every small send and receive takes one and gives it back.
  Request* alloc(RequestKind kind) {
    if (free_count_ == 0) [[unlikely]] grow();
    Request* r = free_[--free_count_];
    r->kind = kind;
    r->live = true;
    ++in_use_;
    return r;
  }
  void release(Request* r) {
    const uint32_t index = r->index;
    if (r->profile) [[unlikely]] profiler::stop(r->profile);
    // Most requests own nothing: reset the plain fields only (constructing and move-assigning a
    // whole Request, with its two std::function, cost more than the rest of a small send).
    // Copied from a constant: `= RequestFields{}` compiles to `rep stos`, whose start-up was
    // half of a release in an 8-byte message-rate loop; the copy is a few vector stores.
    std::memcpy(static_cast<RequestFields*>(r), &kFreshRequestFields, sizeof(RequestFields));
    if (r->owned_buffer || r->start || r->finish) [[unlikely]] drop_owned(r);
    r->index = index;
    free_[free_count_++] = r;  // room for every slot: never grows here
    --in_use_;
  }
  Request* at(uint32_t index) const {
    uint32_t chunk = index >> kChunkBits;
    return chunk < chunks_.size() ? &chunks_[chunk][index & (kChunkSize - 1)] : nullptr;
  }
  size_t in_use() const { return in_use_; }
  const size_t* in_use_counter() const { return &in_use_; }
  size_t capacity() const { return chunks_.size() * kChunkSize; }  // every index below is a slot of the pool
  bool is_live(uint32_t index) const {
    const Request* r = at(index);
    return r && r->live;
  }

 private:
  void grow();                 // one more chunk of free requests
  void drop_owned(Request* r);  // what a released request still owned
  static constexpr uint32_t kChunkBits = 10, kChunkSize = 1u << kChunkBits;
  std::vector<std::unique_ptr<Request[]>> chunks_;
  std::vector<Request*> free_;  // sized to the capacity; the first free_count_ are free
  size_t free_count_ = 0;
  size_t in_use_ = 0;
};

}  // namespace weft
