// Which stream-ordered calls make automatic registration's host agreement
// (gpu::AgreementSchedule): every call while buffers keep coming, then calls further and
// further apart once kQuiet agreements in a row registered nothing, every call again after a
// registration, and never a gap above kMaxGap.
#include <gtest/gtest.h>

#include <vector>

#include "coll/gpu/gpu_coll.h"

namespace {

using weft::coll::gpu::AgreementSchedule;

// Runs `calls` calls; registered(n) says whether agreeing call n registers something. Returns
// the numbers of the calls that agreed.
template <typename Registers>
std::vector<uint64_t> agreeing_calls(AgreementSchedule& s, uint64_t calls, Registers registered) {
  std::vector<uint64_t> out;
  for (uint64_t n = 0; n < calls; ++n) {
    if (!s.due()) continue;
    out.push_back(n);
    s.agreed(registered(n));
  }
  return out;
}

TEST(AgreementSchedule, EveryCallUntilQuietThenDoublingGaps) {
  AgreementSchedule s;
  // Ten buffers (say, DDP's buckets) registered on the first ten calls, then the same ones again.
  const auto agreed = agreeing_calls(s, 10 + AgreementSchedule::kQuiet + 2 + 4 + 8 + 1, [](uint64_t n) { return n < 10; });
  std::vector<uint64_t> want;
  for (uint64_t n = 0; n < 10 + AgreementSchedule::kQuiet; ++n) want.push_back(n);
  const uint64_t last = want.back();
  want.push_back(last + 2);
  want.push_back(last + 2 + 4);
  want.push_back(last + 2 + 4 + 8);
  EXPECT_EQ(agreed, want);
}

TEST(AgreementSchedule, SettlingIsReportedOnce) {
  AgreementSchedule s;
  int settled = 0;
  for (uint64_t n = 0; n < 10000; ++n)
    if (s.due() && s.agreed(false)) ++settled;
  EXPECT_EQ(settled, 1);
}

TEST(AgreementSchedule, GapStopsAtMax) {
  AgreementSchedule s;
  const auto agreed = agreeing_calls(s, 50000, [](uint64_t) { return false; });
  ASSERT_GT(agreed.size(), 3u);
  uint64_t widest = 0;
  for (size_t k = 1; k < agreed.size(); ++k) widest = std::max(widest, agreed[k] - agreed[k - 1]);
  EXPECT_EQ(widest, AgreementSchedule::kMaxGap);
  EXPECT_EQ(agreed[agreed.size() - 1] - agreed[agreed.size() - 2], AgreementSchedule::kMaxGap);
}

TEST(AgreementSchedule, RegistrationBringsBackEveryCall) {
  AgreementSchedule s;
  // Settle, then a new buffer turns up at the first agreeing call past 5000.
  uint64_t fresh = 0;
  const auto agreed = agreeing_calls(s, 8000, [&](uint64_t n) {
    if (n > 5000 && !fresh) fresh = n;
    return n == fresh;
  });
  ASSERT_GT(fresh, 5000u);
  // Every call from the registration on agrees, for kQuiet calls after it.
  size_t at = 0;
  while (agreed[at] != fresh) ++at;
  for (uint64_t k = 1; k <= AgreementSchedule::kQuiet; ++k) EXPECT_EQ(agreed[at + k], fresh + k) << k;
  EXPECT_EQ(agreed[at + AgreementSchedule::kQuiet + 1], fresh + AgreementSchedule::kQuiet + 2);
}

TEST(AgreementSchedule, RanksWithTheSameOutcomesAgreeOnTheSameCalls) {
  AgreementSchedule a, b;
  auto outcome = [](uint64_t n) { return n % 997 == 3; };
  EXPECT_EQ(agreeing_calls(a, 20000, outcome), agreeing_calls(b, 20000, outcome));
}

}  // namespace
