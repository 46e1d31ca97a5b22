#include "request.h"

#include <cstring>

namespace weft {

Request* RequestPool::alloc(RequestKind kind) {
  if (free_.empty()) {
    uint32_t base = uint32_t(chunks_.size()) << kChunkBits;
    chunks_.emplace_back(new Request[kChunkSize]);
    for (uint32_t i = kChunkSize; i-- > 0;) {
      chunks_.back()[i].index = base + i;
      free_.push_back(&chunks_.back()[i]);
    }
  }
  Request* r = free_.back();
  free_.pop_back();
  r->kind = kind;
  r->live = true;
  ++in_use_;
  return r;
}

void RequestPool::release(Request* r) {
  const uint32_t index = r->index;
  // Most requests own nothing: reset the plain fields only (constructing and move-assigning a
  // whole Request, with its two std::function, cost more than the rest of a small send). Copied
  // from a constant: `= RequestFields{}` compiles to `rep stos`, whose start-up was half of a
  // release in an 8-byte message-rate loop; the copy is a few vector stores.
  static const RequestFields kFresh{};
  std::memcpy(static_cast<RequestFields*>(r), &kFresh, sizeof(RequestFields));
  if (r->owned_buffer) r->owned_buffer.reset();
  if (r->start) r->start = nullptr;
  if (r->finish) r->finish = nullptr;
  r->index = index;
  free_.push_back(r);
  --in_use_;
}

}  // namespace weft
