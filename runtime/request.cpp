#include "request.h"

namespace weft {

Request* RequestPool::alloc(RequestKind kind) {
  if (free_.empty()) {
    uint32_t base = uint32_t(chunks_.size()) << kChunkBits;
    chunks_.emplace_back(new Request[kChunkSize]);
    live_.resize(live_.size() + kChunkSize, false);
    for (uint32_t i = kChunkSize; i-- > 0;) {
      chunks_.back()[i].index = base + i;
      free_.push_back(&chunks_.back()[i]);
    }
  }
  Request* r = free_.back();
  free_.pop_back();
  r->kind = kind;
  live_[r->index] = true;
  ++in_use_;
  return r;
}

void RequestPool::release(Request* r) {
  uint32_t index = r->index;
  *r = Request{};
  r->index = index;
  live_[index] = false;
  free_.push_back(r);
  --in_use_;
}

}  // namespace weft
