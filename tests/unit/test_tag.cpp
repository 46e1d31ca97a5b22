#include <gtest/gtest.h>

#include "pt2pt/tag.h"

using namespace weft;

TEST(TagLayout, RoundTripsFields) {
  uint64_t t = tag::make(1234, 987654, 4321);
  EXPECT_EQ(tag::context_of(t), 1234u);
  EXPECT_EQ(tag::source_of(t), 987654);
  EXPECT_EQ(tag::user_tag_of(t), 4321);
}

TEST(TagLayout, MaximumValuesDoNotOverlap) {
  uint64_t t = tag::make(tag::kMaxContextId, tag::kMaxRanks - 1, tag::kMaxUserTag);
  EXPECT_EQ(tag::context_of(t), tag::kMaxContextId);
  EXPECT_EQ(tag::source_of(t), tag::kMaxRanks - 1);
  EXPECT_EQ(tag::user_tag_of(t), tag::kMaxUserTag);
  EXPECT_EQ(tag::kContextMask & tag::kSourceMask, 0u);
  EXPECT_EQ(tag::kSourceMask & tag::kTagMask, 0u);
  EXPECT_EQ(tag::kContextMask | tag::kSourceMask | tag::kTagMask, ~0ull);
}

TEST(TagLayout, UserTagUpperBoundIsAtLeastTheStandardMinimum) {
  EXPECT_GE(tag::kMaxUserTag, 32767);
  // Bit 23 stays free for internal protocols.
  EXPECT_EQ(uint64_t(tag::kMaxUserTag) & (1ull << 23), 0u);
}

TEST(TagLayout, WildcardMasksMatchAnySourceAndTagButNeverAnotherContext) {
  uint64_t sent = tag::make(6, 3, 77);
  uint64_t want = tag::make(6, 0, 0);
  uint64_t m = tag::recv_mask(true, true);
  EXPECT_EQ(sent & m, want & m);
  uint64_t other_ctx = tag::make(7, 3, 77);
  EXPECT_NE(other_ctx & m, want & m);

  uint64_t src_only = tag::recv_mask(true, false);
  EXPECT_EQ(sent & src_only, tag::make(6, 0, 77) & src_only);
  EXPECT_NE(sent & src_only, tag::make(6, 0, 78) & src_only);

  uint64_t tag_only = tag::recv_mask(false, true);
  EXPECT_EQ(sent & tag_only, tag::make(6, 3, 0) & tag_only);
  EXPECT_NE(sent & tag_only, tag::make(6, 4, 0) & tag_only);
}

TEST(TagLayout, PointToPointAndCollectiveContextsDiffer) {
  // A communicator's collective traffic uses context_id + 1.
  uint64_t user = tag::make(4, 1, 5), coll = tag::make(5, 1, 5);
  EXPECT_NE(user & tag::recv_mask(true, true), coll & tag::recv_mask(true, true));
}
