// Which id a new GPU buffer registration takes (gpu::RegistrationIds): the lowest free one;
// the calls' stale registrations dropped first; the user's evicting the oldest uncaptured call
// registration, never a kept or captured one; and ranks whose masks differ (each or-ed into
// the same combined masks) choosing alike.
#include <gtest/gtest.h>

#include "coll/gpu/registration_ids.h"

namespace {

using weft::coll::gpu::RegistrationIds;

uint64_t bit(int k) { return uint64_t(1) << k; }
uint64_t first(int n) { return n >= 64 ? ~uint64_t(0) : bit(n) - 1; }

TEST(RegistrationIds, LowestFreeIdWithoutEvicting) {
  RegistrationIds m;
  m.used = bit(0) | bit(1) | bit(3);
  m.keep = bit(0);
  bool evict = true;
  EXPECT_EQ(m.choose(64, true, &evict), 2);
  EXPECT_FALSE(evict);
  m.used = 0;
  EXPECT_EQ(m.choose(64, true, &evict), 0);
}

TEST(RegistrationIds, FullTableOfUserRegistrationsRefuses) {
  RegistrationIds m;
  m.used = m.keep = first(64);
  bool evict = true;
  EXPECT_EQ(m.choose(64, true, &evict), -1);
  EXPECT_FALSE(evict);
}

TEST(RegistrationIds, UserEvictsTheOldestUncapturedCallRegistration) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(10);              // ids 0-9: the user's
  m.graph = bit(10) | bit(11);     // captured calls'
  m.oldest = bit(40);              // the oldest uncaptured call's
  bool evict = false;
  EXPECT_EQ(m.choose(64, true, &evict), 40);
  EXPECT_TRUE(evict);
  // A call's own registration evicts nothing live.
  EXPECT_EQ(m.choose(64, false, &evict), -1);
  EXPECT_FALSE(evict);
}

TEST(RegistrationIds, NoOldestKnownTakesTheLowestUncaptured) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(20);
  m.graph = bit(20);
  bool evict = false;
  EXPECT_EQ(m.choose(64, true, &evict), 21);
  EXPECT_TRUE(evict);
}

TEST(RegistrationIds, KeptOrCapturedNeverEvicted) {
  RegistrationIds m;
  m.used = first(64);
  m.keep = first(32);
  m.graph = first(64) & ~first(32);
  m.oldest = bit(50);  // a rank's claim, but id 50 is a captured call's: not evictable
  bool evict = true;
  EXPECT_EQ(m.choose(64, true, &evict), -1);
  EXPECT_FALSE(evict);
}

TEST(RegistrationIds, StaleCallsAreDroppedFirstButNotKeptOnes) {
  RegistrationIds m;
  m.used = bit(1) | bit(2) | bit(3) | bit(4);
  m.keep = bit(1);
  m.graph = bit(3);
  m.stale = bit(1) | bit(3) | bit(4);  // a kept stale one is the user's to deregister
  EXPECT_EQ(m.stale_calls(), bit(3) | bit(4));
}

TEST(RegistrationIds, SmallerTableBoundsTheChoice) {
  RegistrationIds m;
  m.used = first(8);
  bool evict = true;
  EXPECT_EQ(m.choose(8, false, &evict), -1);
  m.oldest = bit(5);
  EXPECT_EQ(m.choose(8, true, &evict), 5);
  EXPECT_TRUE(evict);
}

TEST(RegistrationIds, RanksOrTheirMasksAndChooseAlike) {
  // Rank 0 dropped id 2 locally (a deregistration), rank 1 still holds it; rank 1's oldest is
  // id 6, rank 0's id 7: the combined masks give every rank the same answer.
  RegistrationIds r0, r1;
  r0.used = first(64) & ~bit(2);
  r1.used = first(64);
  r0.keep = r1.keep = first(4);
  r0.oldest = bit(7);
  r1.oldest = bit(6);
  RegistrationIds a = r0, b = r1;
  a |= r1;
  b |= r0;
  bool ea = false, eb = false;
  const int ida = a.choose(64, true, &ea), idb = b.choose(64, true, &eb);
  EXPECT_EQ(ida, idb);
  EXPECT_EQ(ida, 6);
  EXPECT_TRUE(ea && eb);
}

}  // namespace
