#include "request.h"

namespace weft {

void RequestPool::grow() {
  const uint32_t base = uint32_t(chunks_.size()) << kChunkBits;
  chunks_.emplace_back(new Request[kChunkSize]);
  free_.resize(chunks_.size() * kChunkSize);
  // Handed out lowest index first.
  for (uint32_t i = kChunkSize; i-- > 0;) {
    chunks_.back()[i].index = base + i;
    free_[free_count_++] = &chunks_.back()[i];
  }
}

void RequestPool::drop_owned(Request* r) {
  if (r->owned_buffer) r->owned_buffer.reset();
  if (r->start) r->start = nullptr;
  if (r->finish) r->finish = nullptr;
}

}  // namespace weft
