// Which id a new GPU buffer registration takes (gpu::RegistrationIds::choose): the calls'
// stale registrations dropped first (not during a capture), then the lowest free id; the
// user's evicting one of the ranks' oldest uncaptured call registrations, never a kept or
// captured one; and ranks whose own masks differ choosing alike from the combined masks.
#include <gtest/gtest.h>

#include "coll/gpu/registration_ids.h"

namespace {

using weft::coll::gpu::RegistrationIds;

uint64_t bit(int k) { return uint64_t(1) << k; }
uint64_t first(int n) { return n >= 64 ? ~uint64_t(0) : bit(n) - 1; }

TEST(RegistrationIds, LowestFreeIdWithoutDropping) {
  RegistrationIds m;
  m.used = bit(0) | bit(1) | bit(3);
  m.keep = bit(0);
  const auto c = m.choose(64, true, true);
  EXPECT_EQ(c.id, 2);
  EXPECT_EQ(c.drop, 0u);
  EXPECT_FALSE(c.evicts);
  EXPECT_EQ(RegistrationIds{}.choose(64, true, true).id, 0);
}

TEST(RegistrationIds, FullTableOfUserRegistrationsRefuses) {
  RegistrationIds m;
  m.used = m.keep = first(64);
  const auto c = m.choose(64, true, true);
  EXPECT_EQ(c.id, -1);
  EXPECT_EQ(c.drop, 0u);
}

TEST(RegistrationIds, StaleCallRegistrationsDroppedFirstAndReused) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(8);
  m.graph = bit(8) | bit(9);
  m.stale = bit(3) | bit(9) | bit(20);  // id 3 is the user's: theirs to deregister
  const auto c = m.choose(64, true, false);
  EXPECT_EQ(c.drop, bit(9) | bit(20));
  EXPECT_EQ(c.id, 9);
  EXPECT_FALSE(c.evicts);
}

TEST(RegistrationIds, NothingDroppedWhileCapturing) {
  RegistrationIds m;
  m.used = first(64);
  m.stale = bit(30);
  const auto c = m.choose(64, false, true);
  EXPECT_EQ(c.id, -1);
  EXPECT_EQ(c.drop, 0u);
  m.used &= ~bit(12);
  EXPECT_EQ(m.choose(64, false, true).id, 12);
}

TEST(RegistrationIds, UserEvictsAnOldestUncapturedCallRegistration) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(10);
  m.graph = bit(10) | bit(11);
  m.oldest = bit(40);
  auto c = m.choose(64, true, true);
  EXPECT_EQ(c.id, 40);
  EXPECT_EQ(c.drop, bit(40));
  EXPECT_TRUE(c.evicts);
  // A call's own registration evicts nothing live.
  c = m.choose(64, true, false);
  EXPECT_EQ(c.id, -1);
  EXPECT_EQ(c.drop, 0u);
}

TEST(RegistrationIds, NoOldestKnownTakesTheLowestUncaptured) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(20);
  m.graph = bit(20);
  const auto c = m.choose(64, true, true);
  EXPECT_EQ(c.id, 21);
  EXPECT_TRUE(c.evicts);
}

TEST(RegistrationIds, KeptOrCapturedNeverEvicted) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(32);
  m.graph = first(64) & ~first(32);
  m.oldest = bit(50);  // one rank's oldest call registration, captured since on another
  const auto c = m.choose(64, true, true);
  EXPECT_EQ(c.id, -1);
  EXPECT_EQ(c.drop, 0u);
}

TEST(RegistrationIds, SmallerTableBoundsTheChoice) {
  RegistrationIds m;
  m.used = first(8);
  EXPECT_EQ(m.choose(8, true, false).id, -1);
  m.oldest = bit(5);
  const auto c = m.choose(8, true, true);
  EXPECT_EQ(c.id, 5);
  EXPECT_TRUE(c.evicts);
}

TEST(RegistrationIds, RanksChooseFromTheCombinedMasks) {
  // Rank 0 dropped id 2 on its own and reports it stale (released here); rank 1 still holds
  // it live. Rank 1 has id 5 free, rank 0 not. Each rank's own masks would choose 2 (rank 0:
  // after dropping it) and 5 (rank 1); the combined masks give both the same answer.
  RegistrationIds r0, r1;
  r0.used = first(64);
  r0.stale = bit(2);
  r1.used = first(64) & ~bit(5);
  r0.keep = r1.keep = first(2);
  EXPECT_EQ(r0.choose(64, true, false).id, 2);
  EXPECT_EQ(r1.choose(64, true, false).id, 5);
  RegistrationIds all;
  all |= r0;
  all |= r1;
  const auto c = all.choose(64, true, false);
  EXPECT_EQ(c.drop, bit(2));
  EXPECT_EQ(c.id, 2);
  // While capturing nothing is dropped and no id is free on every rank.
  EXPECT_EQ(all.choose(64, false, false).id, -1);
}

}  // namespace
