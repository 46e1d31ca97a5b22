// bulk_copy: every path (memcpy, vector loop, streaming stores) copies exactly the bytes asked
// for, at any alignment of source and destination, and touches nothing around them.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/bulk_copy.h"

namespace weft {
namespace {

void check_copy(void (*copy)(void*, const void*, size_t), size_t bytes, size_t src_off, size_t dst_off) {
  constexpr size_t kGuard = 96;
  std::vector<uint8_t> src(bytes + src_off + kGuard), dst(bytes + dst_off + 2 * kGuard, 0xEE);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 131 + 7 + (i >> 8));
  uint8_t* to = dst.data() + kGuard + dst_off;
  copy(to, src.data() + src_off, bytes);
  for (size_t i = 0; i < bytes; ++i)
    ASSERT_EQ(to[i], src[src_off + i]) << "byte " << i << " of " << bytes << " (src +" << src_off << ", dst +"
                                       << dst_off << ")";
  for (size_t i = 0; i < kGuard + dst_off; ++i) ASSERT_EQ(dst[i], 0xEE) << "byte before the destination changed";
  for (size_t i = kGuard + dst_off + bytes; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE) << "byte after it changed";
}

TEST(BulkCopy, StreamingCopiesEveryByteAtAnyAlignment) {
  for (size_t bytes : {size_t(0), size_t(1), size_t(15), size_t(16), size_t(63), size_t(64), size_t(65), size_t(1000),
                       size_t(4096 + 17), size_t(300000)})
    for (size_t so : {0, 1, 8, 15})
      for (size_t d : {0, 1, 7, 16, 63}) check_copy(copy_streaming, bytes, so, d);
}

TEST(BulkCopy, VectorCopiesEveryByteAtAnyAlignment) {
  for (size_t bytes : {size_t(0), size_t(1), size_t(127), size_t(128), size_t(129), size_t(16384 + 5),
                       size_t(300000)})
    for (size_t so : {0, 3, 32})
      for (size_t d : {0, 5, 31}) check_copy(copy_vector, bytes, so, d);
}

TEST(BulkCopy, EachSizeClassThroughTheDispatcher) {
  const size_t streaming = bulk_copy_plan().streaming_min;
  for (size_t bytes : {size_t(1), size_t(7), size_t(8), size_t(9), size_t(15), size_t(16), size_t(17), kBulkVectorMin - 1, kBulkVectorMin, size_t(200000), size_t(1) << 20,
                       (size_t(1) << 20) + 3})
    check_copy(bulk_copy, bytes, 1, 3);
  EXPECT_TRUE(streaming == 0 || streaming >= kBulkVectorMin) << "streaming_min " << streaming;
}

}  // namespace
}  // namespace weft
