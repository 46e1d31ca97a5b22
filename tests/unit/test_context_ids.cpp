#include <gtest/gtest.h>

#include "pt2pt/communicators.h"

using namespace weft;

namespace {
ContextIds fresh() {
  ContextIds ids;
  ids.reset(3);
  return ids;
}
}  // namespace

TEST(ContextIds, BlockingAgreementsOfferOnlyThePairsBelowTheNonBlockingOnes) {
  ContextIds ids = fresh();
  ContextIds b = ids.blocking();
  for (uint32_t w = 0; w < kBlockingPairs / 64; ++w) EXPECT_EQ(b.free_mask[w], ids.free_mask[w]);
  for (uint32_t w = kBlockingPairs / 64; w < kContextPairs / 64; ++w) EXPECT_EQ(b.free_mask[w], 0u);
  uint32_t context = 0;
  ASSERT_TRUE(ids.take_lowest(b, &context));
  EXPECT_EQ(context, 6u);  // pair 3: the first after the reserved ones
}

TEST(ContextIds, AnOfferIsReservedUntilReleased) {
  ContextIds ids = fresh();
  const uint64_t first = ids.offer(5);
  EXPECT_EQ(first, ~0ull);
  EXPECT_EQ(ids.offer(5), 0u);      // a second round in flight here gets nothing of slice 5
  EXPECT_EQ(ids.offer(6), ~0ull);   // another slice is untouched
  ids.release(6, ~0ull);
  ids.release(5, first);
  EXPECT_EQ(ids.offer(5), ~0ull);
  ids.release(5, ~0ull);
}

TEST(ContextIds, TakingInASliceUsesThePairForEveryLaterOffer) {
  ContextIds ids = fresh();
  const uint64_t offered = ids.offer(2);
  const uint64_t agreed = offered & ~0x7ull;  // pairs 0-2 of the slice taken at another member
  ids.release(2, offered);
  const uint32_t context = ids.take_in_slice(2, agreed);
  EXPECT_EQ(context, (kBlockingPairs + 2 * 64 + 3) * 2);
  EXPECT_EQ(ids.offer(2), ~0ull & ~(1ull << 3));
  ids.release(2, ~0ull);
  ids.set(context / 2, true);
  EXPECT_EQ(ids.offer(2), ~0ull);
}
