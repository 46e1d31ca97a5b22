// The automatic wait policy: spin only when no rank of the host waits for a CPU a spinner holds.
#include <gtest/gtest.h>

#include "runtime/progress.h"
#include "cpu_sets.h"

namespace weft {
namespace {

using unit::cpus;

TEST(WaitPolicy, EachRankBoundToItsOwnCoreSpins) {
  // Open MPI's default at np 2: --bind-to core. The rank's own mask holds one CPU and there are
  // two ranks, yet nobody competes for that CPU.
  const WaitChoice c = choose_wait_policy(cpus({0}), {cpus({1})});
  EXPECT_EQ(c.policy, WaitPolicy::spin_then_yield);
  EXPECT_EQ(c.competing_ranks, 1);
  EXPECT_EQ(c.cpus, 1);
}

TEST(WaitPolicy, UnboundRanksSpinWhenTheHostHasACpuEach) {
  const WaitChoice c = choose_wait_policy(cpus({0, 1}), {cpus({0, 1})});
  EXPECT_EQ(c.policy, WaitPolicy::spin_then_yield);
  EXPECT_EQ(c.competing_ranks, 2);
  EXPECT_EQ(c.cpus, 2);
}

TEST(WaitPolicy, FourUnboundRanksOnTwoCpusYield) {
  const WaitChoice c = choose_wait_policy(cpus({0, 1}), {cpus({0, 1}), cpus({0, 1}), cpus({0, 1})});
  EXPECT_EQ(c.policy, WaitPolicy::yield);
  EXPECT_EQ(c.competing_ranks, 4);
  EXPECT_EQ(c.cpus, 2);
}

TEST(WaitPolicy, TwoRanksBoundToOneCoreYield) {
  // --bind-to core --oversubscribe with 4 ranks on 2 cores: ranks 0 and 2 share CPU 0.
  const WaitChoice c = choose_wait_policy(cpus({0}), {cpus({1}), cpus({0}), cpus({1})});
  EXPECT_EQ(c.policy, WaitPolicy::yield);
  EXPECT_EQ(c.competing_ranks, 2);
  EXPECT_EQ(c.cpus, 1);
}

TEST(WaitPolicy, DisjointSocketsAreCountedApart) {
  // Two ranks on each of two 2-CPU sockets; CPUs beyond the first word count too.
  const WaitChoice c = choose_wait_policy(cpus({64, 65}), {cpus({0, 1}), cpus({0, 1}), cpus({64, 65})});
  EXPECT_EQ(c.policy, WaitPolicy::spin_then_yield);
  EXPECT_EQ(c.competing_ranks, 2);
  EXPECT_EQ(c.cpus, 2);
}

TEST(WaitPolicy, ARankAloneSpins) {
  const WaitChoice c = choose_wait_policy(cpus({3}), {});
  EXPECT_EQ(c.policy, WaitPolicy::spin_then_yield);
  EXPECT_GE(cpu_count(own_cpus()), 1);
}

}  // namespace
}  // namespace weft
