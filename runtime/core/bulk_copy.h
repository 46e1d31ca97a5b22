// Copies of large blocks into memory another process reads next (one-sided window memory).
// - From bulk_copy_streaming_min() bytes: non-temporal stores. They do not read the
//   destination's cache lines before writing them (a third of the memory traffic of a copy
//   larger than the caches) and leave this core's caches to the data it works on.
// - From kBulkVectorMin bytes: an unrolled loop of 32-byte loads and stores where the CPU has
//   AVX2 (faster here than the string instruction glibc's memcpy uses at these sizes).
// - Otherwise, and off x86-64: memcpy.
#pragma once
#include <cstddef>
#include <cstring>

namespace weft {

inline constexpr size_t kBulkVectorMin = 16 * 1024;

struct BulkCopyPlan {
  size_t streaming_min;  // WEFT_COPY_STREAMING_MIN, read once (0: never)
  bool vector;           // the CPU has AVX2
};
const BulkCopyPlan& bulk_copy_plan();
void copy_streaming(void* dst, const void* src, size_t bytes);
void copy_vector(void* dst, const void* src, size_t bytes);

inline void bulk_copy(void* dst, const void* src, size_t bytes) {
  if (bytes < kBulkVectorMin) {
    memcpy(dst, src, bytes);
    return;
  }
  const BulkCopyPlan& plan = bulk_copy_plan();
  if (plan.streaming_min != 0 && bytes >= plan.streaming_min) copy_streaming(dst, src, bytes);
  else if (plan.vector) copy_vector(dst, src, bytes);
  else memcpy(dst, src, bytes);
}

}  // namespace weft
