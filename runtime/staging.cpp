#include "staging.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace weft {

namespace {

constexpr int kMinShift = 12;             // 4 KiB: smaller buffers come straight from malloc
constexpr int kMaxShift = 26;             // 64 MiB: larger ones are not cached

struct Cache {
  std::mutex mutex;
  std::vector<char*> free_lists[kMaxShift - kMinShift + 1];
  size_t cached_bytes = 0;
  size_t limit = size_t(1) << 30;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: buffers may be released at exit
  return *c;
}

int size_class(size_t bytes) {
  int shift = kMinShift;
  while ((size_t(1) << shift) < bytes) ++shift;
  return shift;
}

}  // namespace

void StagingDeleter::operator()(char* p) const {
  if (!p) return;
  if (capacity < (size_t(1) << kMinShift) || capacity > (size_t(1) << kMaxShift)) {
    free(p);
    return;
  }
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  if (c.cached_bytes + capacity > c.limit) {
    free(p);
    return;
  }
  c.free_lists[size_class(capacity) - kMinShift].push_back(p);
  c.cached_bytes += capacity;
}

void staging_set_cache_limit(size_t bytes) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.limit = bytes;
}

StagingBuffer staging_buffer(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes < (size_t(1) << kMinShift) || bytes > (size_t(1) << kMaxShift)) {
    return StagingBuffer(static_cast<char*>(malloc(bytes)), StagingDeleter{bytes});
  }
  int shift = size_class(bytes);
  size_t capacity = size_t(1) << shift;
  Cache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    auto& list = c.free_lists[shift - kMinShift];
    if (!list.empty()) {
      char* p = list.back();
      list.pop_back();
      c.cached_bytes -= capacity;
      return StagingBuffer(p, StagingDeleter{capacity});
    }
  }
  return StagingBuffer(static_cast<char*>(malloc(capacity)), StagingDeleter{capacity});
}

}  // namespace weft
