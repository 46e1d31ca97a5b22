// The asynchronous progress thread's placement and the entry lock it shares with MPI calls.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/async_progress.h"
#include "runtime/entry_lock.h"
#include "cpu_sets.h"

namespace weft {
namespace {

using unit::cpus;

// Four cores of two hardware threads each: core k holds CPUs k and k + 4.
std::vector<CpuSet> four_smt_cores() { return {cpus({0, 4}), cpus({1, 5}), cpus({2, 6}), cpus({3, 7})}; }

TEST(AsyncProgressPlacement, TakesAWholeCoreNoRankIsBoundTo) {
  // Two ranks bound to cores 0 and 1: the threads go to cores 2 and 3, both hardware threads.
  const std::vector<CpuSet> bindings = {cpus({0, 4}), cpus({1, 5})};
  EXPECT_EQ(free_core_for(four_smt_cores(), bindings, 0), cpus({2, 6}));
  EXPECT_EQ(free_core_for(four_smt_cores(), bindings, 1), cpus({3, 7}));
}

TEST(AsyncProgressPlacement, FreeCoresAreDealtOutRoundRobin) {
  const std::vector<CpuSet> bindings = {cpus({0, 4}), cpus({1, 5}), cpus({2, 6})};
  EXPECT_EQ(free_core_for(four_smt_cores(), bindings, 0), cpus({3, 7}));
  EXPECT_EQ(free_core_for(four_smt_cores(), bindings, 2), cpus({3, 7}));
}

TEST(AsyncProgressPlacement, ACoreWithOneHardwareThreadBoundIsTaken) {
  // A rank bound to CPU 6 alone holds core 2: only core 3 is free.
  const std::vector<CpuSet> bindings = {cpus({0, 4}), cpus({1, 5}), cpus({6})};
  EXPECT_EQ(free_core_for(four_smt_cores(), bindings, 0), cpus({3, 7}));
}

TEST(AsyncProgressPlacement, UnboundRanksLeaveNoFreeCore) {
  const CpuSet all = cpus({0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_TRUE(free_core_for(four_smt_cores(), {all, all}, 0).empty());
  EXPECT_TRUE(free_core_for({}, {cpus({0})}, 0).empty());
}

TEST(EntryLock, IsRecursiveAndHandsItselfToAWaiter) {
  EntryLock lock;
  lock.lock();
  lock.lock();  // a callback calling MPI again
  EXPECT_TRUE(lock.held_by_me());
  std::atomic<bool> other_in{false};
  std::thread other([&] {
    lock.lock();
    other_in = true;
    lock.unlock();
  });
  // A wait loop: passes of progress with the lock handed over between them.
  while (!other_in) lock.let_others_in();
  EXPECT_TRUE(lock.held_by_me());  // taken back at the same depth
  lock.unlock();
  EXPECT_TRUE(lock.held_by_me());
  lock.unlock();
  EXPECT_FALSE(lock.held_by_me());
  other.join();
}

TEST(EntryLock, CountsStayExactUnderContention) {
  EntryLock lock;
  long counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        lock.lock();
        ++counter;
        if (i % 100 == 0) lock.let_others_in();
        ++counter;
        lock.unlock();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 4L * 20000 * 2);
}

TEST(EntryLock, ASleeperWakesWhenACallLeavesWorkInFlight) {
  EntryLock lock;
  size_t in_flight = 0;
  lock.watch_in_flight(&in_flight);
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    lock.sleep_until_nudged(30u * 1000 * 1000);  // 30 s: only a nudge ends it while calls go on
    woke = true;
  });
  // Calls that leave nothing in flight, then calls that leave an operation in flight.
  int calls = 0;
  for (; calls < 20000 && !woke; ++calls) {
    lock.lock();
    in_flight = calls >= 10 ? 1 : 0;
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(woke.load()) << "no call woke the sleeper";
  EXPECT_GE(calls, 10);
  sleeper.join();
}

}  // namespace
}  // namespace weft
