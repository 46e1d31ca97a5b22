// Staging buffers (packed copies of non-contiguous data, buffered-send copies), recycled by
// size class. Allocating and freeing them with malloc per message returned the pages to the
// system at every window and faulted them in again, which cost more than the copies.
#pragma once
#include <cstddef>
#include <memory>

namespace weft {

struct StagingDeleter {
  size_t capacity = 0;
  void operator()(char* p) const;
};
using StagingBuffer = std::unique_ptr<char[], StagingDeleter>;

// A buffer of at least `bytes` bytes (contents undefined).
StagingBuffer staging_buffer(size_t bytes);

// How many bytes of released buffers are kept for reuse (WEFT_STAGING_CACHE). The cache only
// ever holds what the program once had in flight at the same time.
void staging_set_cache_limit(size_t bytes);

}  // namespace weft
