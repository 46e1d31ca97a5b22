// Shapes of collective schedules, built without any transport.
#include <gtest/gtest.h>

#include <vector>

#include "coll/schedule.h"

using namespace weft;
using namespace weft::coll;

namespace {
Comm comm_of(int rank, int size) {
  Comm c;
  c.rank = rank;
  c.size = size;
  for (int i = 0; i < size; ++i) c.world_ranks.push_back(i);
  return c;
}
Reduction int_sum() { return Reduction{ReduceOp::sum, BasicType::i32, 4}; }
}  // namespace

TEST(Schedules, RingAllreduceSendsTwoPMinusOneChunksPerRank) {
  for (int p : {2, 3, 5, 8}) {
    for (int r = 0; r < p; ++r) {
      std::vector<int> buf(1000);
      auto s = build_allreduce_ring(comm_of(r, p), buf.data(), buf.size(), int_sum());
      EXPECT_EQ(s->count(Step::send), size_t(2 * (p - 1))) << "p " << p;
      EXPECT_EQ(s->count(Step::recv), size_t(2 * (p - 1)));
      EXPECT_EQ(s->count(Step::reduce), size_t(p - 1));
      EXPECT_EQ(s->rounds().size(), size_t(2 * (p - 1)));
    }
  }
}

TEST(Schedules, RecursiveDoublingFoldsNonPowersOfTwo) {
  std::vector<int> buf(4);
  // p = 8: log2 p exchange rounds, no folding.
  auto s8 = build_allreduce_recursive_doubling(comm_of(3, 8), buf.data(), 4, int_sum());
  EXPECT_EQ(s8->rounds().size(), 3u);
  EXPECT_EQ(s8->count(Step::send), 3u);
  // p = 6: ranks 0 and 2 fold into 1 and 3 (two messages: data out, result in).
  auto folded = build_allreduce_recursive_doubling(comm_of(0, 6), buf.data(), 4, int_sum());
  EXPECT_EQ(folded->count(Step::send), 1u);
  EXPECT_EQ(folded->count(Step::recv), 1u);
  EXPECT_EQ(folded->count(Step::reduce), 0u);
  auto partner = build_allreduce_recursive_doubling(comm_of(1, 6), buf.data(), 4, int_sum());
  EXPECT_EQ(partner->count(Step::recv), 1u + 2u);  // the fold, then log2 4 exchanges
  EXPECT_EQ(partner->count(Step::send), 2u + 1u);  // the exchanges, then the result back
}

TEST(Schedules, BinomialBcastReachesEveryRankOnce) {
  for (int p : {1, 2, 5, 7, 16}) {
    for (int root = 0; root < p; ++root) {
      std::vector<int> received(size_t(p), 0);
      size_t sends = 0;
      char b = 0;
      for (int r = 0; r < p; ++r) {
        auto s = build_bcast_binomial(comm_of(r, p), &b, 1, root);
        received[size_t(r)] = int(s->count(Step::recv));
        sends += s->count(Step::send);
      }
      for (int r = 0; r < p; ++r) EXPECT_EQ(received[size_t(r)], r == root ? 0 : 1) << "p " << p;
      EXPECT_EQ(sends, size_t(p - 1));
    }
  }
}

TEST(Schedules, DisseminationBarrierHasCeilLog2Rounds) {
  EXPECT_EQ(build_barrier_dissemination(comm_of(0, 1))->rounds().size(), 0u);
  EXPECT_EQ(build_barrier_dissemination(comm_of(0, 5))->rounds().size(), 3u);
  EXPECT_EQ(build_barrier_dissemination(comm_of(2, 8))->rounds().size(), 3u);
}

TEST(Schedules, NonCommutativeReduceUsesRankZeroTreeAndForwardsToTheRoot) {
  Reduction red = int_sum();
  red.commutative = false;
  std::vector<int> in(2), out(2);
  auto at_zero = build_reduce_binomial(comm_of(0, 4), in.data(), in.data(), 2, red, 3);
  EXPECT_EQ(at_zero->count(Step::recv), 2u);
  EXPECT_EQ(at_zero->count(Step::send), 1u);  // the result, to the root
  auto at_root = build_reduce_binomial(comm_of(3, 4), in.data(), out.data(), 2, red, 3);
  EXPECT_EQ(at_root->count(Step::recv), 1u);  // from rank 0
  EXPECT_EQ(at_root->count(Step::send), 1u);  // its own contribution up the tree
  EXPECT_NE(at_root->dump().find("reduce:binomial"), std::string::npos);
}
