// Copies of large blocks into memory another process reads next (one-sided window memory).
// - From bulk_copy_streaming_min() bytes, to a destination none of the last kBulkRecent large
//   copies of this thread went to: non-temporal stores. They do not read the destination's
//   cache lines before writing them (a third of the memory traffic of a copy larger than the
//   caches) and leave this core's caches to the data it works on. A destination written again
//   (the same buffer every iteration) is likely still cached, where plain stores win.
// - From kBulkVectorMin bytes, to such a fresh destination: an unrolled loop of 32-byte loads
//   and stores where the CPU has AVX2 (faster here than the string instruction glibc's memcpy
//   uses at these sizes when the destination is not cached; slower when it is).
// - Otherwise (a destination written again, small copies, off x86-64): memcpy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace weft {

inline constexpr size_t kBulkVectorMin = 16 * 1024;
inline constexpr size_t kBulkRecent = 8;

struct BulkCopyPlan {
  size_t streaming_min;  // WEFT_COPY_STREAMING_MIN, read once (0: never)
  bool vector;           // the CPU has AVX2
};
const BulkCopyPlan& bulk_copy_plan();
void copy_streaming(void* dst, const void* src, size_t bytes);
void copy_vector(void* dst, const void* src, size_t bytes);
// Whether a large copy to dst goes to a destination this thread wrote recently (and records it).
bool bulk_copy_rewrites(const void* dst);

inline void bulk_copy(void* dst, const void* src, size_t bytes) {
  if (bytes >= 8 && bytes <= 16) {  // one-element puts and gets: two overlapping words, no call
    uint64_t head, tail;
    memcpy(&head, src, 8);
    memcpy(&tail, static_cast<const char*>(src) + bytes - 8, 8);
    memcpy(dst, &head, 8);
    memcpy(static_cast<char*>(dst) + bytes - 8, &tail, 8);
    return;
  }
  if (bytes < kBulkVectorMin) {
    memcpy(dst, src, bytes);
    return;
  }
  const BulkCopyPlan& plan = bulk_copy_plan();
  if (bulk_copy_rewrites(dst)) memcpy(dst, src, bytes);
  else if (plan.streaming_min != 0 && bytes >= plan.streaming_min) copy_streaming(dst, src, bytes);
  else if (plan.vector) copy_vector(dst, src, bytes);
  else memcpy(dst, src, bytes);
}

}  // namespace weft
