// Shapes of collective schedules, built without any transport.
#include <gtest/gtest.h>

#include <vector>

#include "coll/algorithm.h"

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

namespace {
// The schedule of a registered algorithm at one rank of p.
std::shared_ptr<Schedule> build_with(Collective coll, const char* name, const CollArgs& a, int rank, int p) {
  const Algorithm* alg = find_algorithm(coll, name);
  EXPECT_NE(alg, nullptr) << name;
  return alg->build(a, bare_context(comm_of(rank, p)));
}
// Equal blocks, laid out in rank order (or in reverse).
std::vector<Block> blocks_of(int p, size_t bytes, bool reversed) {
  std::vector<Block> b(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) b[size_t(r)] = Block{size_t(reversed ? p - 1 - r : r) * bytes, bytes};
  return b;
}
size_t largest_message(const Schedule& s) {
  size_t n = 0;
  for (const auto& round : s.rounds())
    for (const Step& st : round)
      if (st.kind == Step::send) n = std::max(n, st.bytes);
  return n;
}
}  // namespace

TEST(Schedules, RecursiveDoublingAllgatherMergesAdjacentBlocks) {
  std::vector<char> buf(8 * 16);
  CollArgs a;
  a.coll = Collective::allgather;
  a.recv = buf.data();
  a.recv_blocks = blocks_of(8, 16, false);
  a.bytes = buf.size();
  for (int r = 0; r < 8; ++r) {
    a.send = buf.data() + 16 * r;  // in place: no copy round
    auto s = build_with(Collective::allgather, "recursive_doubling", a, r, 8);
    EXPECT_EQ(s->rounds().size(), 3u);
    EXPECT_EQ(s->count(Step::send), 3u);
    EXPECT_EQ(s->count(Step::recv), 3u);
    EXPECT_EQ(largest_message(*s), 4u * 16);
  }
  // Blocks in reverse order are not adjacent in rank order: one message per block.
  a.recv_blocks = blocks_of(8, 16, true);
  a.send = buf.data() + a.recv_blocks[2].offset;
  auto s = build_with(Collective::allgather, "recursive_doubling", a, 2, 8);
  EXPECT_EQ(s->count(Step::send), 1u + 2u + 4u);
  EXPECT_EQ(s->count(Step::recv), 1u + 2u + 4u);
  const Algorithm* alg = find_algorithm(Collective::allgather, "recursive_doubling");
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 6))));
  EXPECT_TRUE(alg->supports(a, bare_context(comm_of(0, 16))));
}

TEST(Schedules, BruckAllgatherTakesCeilLog2RoundsForAnySize) {
  for (int p : {2, 3, 5, 7, 12}) {
    const size_t lg = size_t(ceil_log2(p));
    std::vector<char> mine(8), buf(size_t(p) * 8);
    CollArgs a;
    a.coll = Collective::allgather;
    a.send = mine.data();
    a.recv = buf.data();
    a.recv_blocks = blocks_of(p, 8, false);
    a.bytes = buf.size();
    size_t sent = 0;
    for (int r = 0; r < p; ++r) {
      auto s = build_with(Collective::allgather, "bruck", a, r, p);
      EXPECT_EQ(s->count(Step::send), lg) << "p " << p;
      EXPECT_EQ(s->count(Step::recv), lg);
      EXPECT_EQ(s->rounds().size(), lg + 1);  // and the rotation
      // The rotation is two copies (one at rank 0) when the blocks lie in rank order.
      EXPECT_EQ(s->count(Step::copy), 1u + (r == 0 ? 1u : 2u));
      for (const auto& round : s->rounds())
        for (const Step& st : round)
          if (st.kind == Step::send) sent += st.bytes;
    }
    EXPECT_EQ(sent, size_t(p) * size_t(p - 1) * 8);  // every rank gets each other block once
  }
  CollArgs v;
  v.coll = Collective::allgather;
  v.uniform = false;
  EXPECT_FALSE(find_algorithm(Collective::allgather, "bruck")->supports(v, bare_context(comm_of(0, 4))));
}

TEST(Schedules, BruckAlltoallPacksHalfTheBlocksPerRound) {
  for (int p : {2, 3, 5, 8}) {
    std::vector<char> in(size_t(p) * 4), out(size_t(p) * 4);
    CollArgs a;
    a.coll = Collective::alltoall;
    a.send = in.data();
    a.recv = out.data();
    a.send_blocks = a.recv_blocks = blocks_of(p, 4, false);
    a.bytes = in.size();
    auto s = build_with(Collective::alltoall, "bruck", a, 1 % p, p);
    const size_t lg = size_t(ceil_log2(p));
    EXPECT_EQ(s->count(Step::send), lg) << "p " << p;
    EXPECT_EQ(s->count(Step::recv), lg);
    EXPECT_EQ(s->rounds().size(), lg + 1);  // the rotation first
    EXPECT_LE(largest_message(*s), size_t((p + 1) / 2) * 4);
  }
}

TEST(Schedules, BinomialGatherAndScatterUseEachRankOnce) {
  for (int p : {1, 2, 5, 8, 13})
    for (int root : {0, p / 2, p - 1}) {
      std::vector<char> mine(4), buf(size_t(p) * 4);
      CollArgs g;
      g.coll = Collective::gather;
      g.send = mine.data();
      g.own_bytes = 4;
      g.recv = buf.data();
      g.recv_blocks = blocks_of(p, 4, false);
      g.bytes = buf.size();
      g.root = root;
      CollArgs sc;
      sc.coll = Collective::scatter;
      sc.send = buf.data();
      sc.send_blocks = blocks_of(p, 4, false);
      sc.recv = mine.data();
      sc.own_bytes = 4;
      sc.bytes = buf.size();
      sc.root = root;
      size_t gather_sends = 0, scatter_recvs = 0;
      for (int r = 0; r < p; ++r) {
        auto gs = build_with(Collective::gather, "binomial", g, r, p);
        auto ss = build_with(Collective::scatter, "binomial", sc, r, p);
        EXPECT_EQ(gs->count(Step::send), r == root ? 0u : 1u) << "p " << p << " root " << root;
        EXPECT_EQ(ss->count(Step::recv), r == root ? 0u : 1u);
        gather_sends += gs->count(Step::send);
        scatter_recvs += ss->count(Step::recv);
        if (r == root) {
          EXPECT_EQ(gs->count(Step::recv), size_t(ceil_log2(p)));
          EXPECT_EQ(ss->count(Step::send), size_t(ceil_log2(p)));
        }
      }
      EXPECT_EQ(gather_sends, size_t(p - 1));
      EXPECT_EQ(scatter_recvs, size_t(p - 1));
    }
  CollArgs v;
  v.coll = Collective::gather;
  v.uniform = false;
  EXPECT_FALSE(find_algorithm(Collective::gather, "binomial")->supports(v, bare_context(comm_of(0, 4))));
  v.coll = Collective::scatter;
  EXPECT_FALSE(find_algorithm(Collective::scatter, "binomial")->supports(v, bare_context(comm_of(0, 4))));
}

TEST(Schedules, RecursiveHalvingReduceScatterHalvesTheData) {
  std::vector<int> in(8 * 10), out(10);
  CollArgs a;
  a.coll = Collective::reduce_scatter;
  a.send = in.data();
  a.recv = out.data();
  a.counts.assign(8, 10);
  a.count = in.size();
  a.red = int_sum();
  a.bytes = in.size() * 4;
  for (int r = 0; r < 8; ++r) {
    auto s = build_with(Collective::reduce_scatter, "recursive_halving", a, r, 8);
    EXPECT_EQ(s->rounds().size(), 3u);
    EXPECT_EQ(s->count(Step::send), 3u);
    EXPECT_EQ(s->count(Step::reduce), 3u);
    EXPECT_EQ(largest_message(*s), 4u * 10 * 4);  // half of the vector first
  }
  const Algorithm* alg = find_algorithm(Collective::reduce_scatter, "recursive_halving");
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 6))));
  a.red.commutative = false;
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 8))));
}

TEST(Schedules, ReduceScattervReducesToRankZeroThenScatters) {
  std::vector<int> in(4 * 3), out(3);
  CollArgs a;
  a.coll = Collective::reduce_scatter;
  a.send = in.data();
  a.recv = out.data();
  a.counts.assign(4, 3);
  a.count = in.size();
  a.red = int_sum();
  a.red.commutative = false;
  a.bytes = in.size() * 4;
  const Algorithm* alg = find_algorithm(Collective::reduce_scatter, "reduce_scatterv");
  EXPECT_TRUE(alg->supports(a, bare_context(comm_of(0, 4))));
  auto zero = alg->build(a, bare_context(comm_of(0, 4)));
  EXPECT_EQ(zero->count(Step::recv), 2u);  // the binomial reduce
  EXPECT_EQ(zero->count(Step::send), 3u);  // a segment to every other rank
  auto three = alg->build(a, bare_context(comm_of(3, 4)));
  EXPECT_EQ(three->count(Step::send), 1u);
  EXPECT_EQ(three->count(Step::recv), 1u);
  EXPECT_EQ(three->reduction().commutative, false);
}

namespace {
// Bytes a schedule sends or receives in all.
size_t step_bytes(const Schedule& s, Step::Kind kind) {
  size_t n = 0;
  for (const auto& round : s.rounds())
    for (const Step& st : round)
      if (st.kind == kind) n += st.bytes;
  return n;
}
std::vector<size_t> sent_sizes(const Schedule& s) {
  std::vector<size_t> out;
  for (const auto& round : s.rounds())
    for (const Step& st : round)
      if (st.kind == Step::send) out.push_back(st.bytes);
  return out;
}
CollArgs reduction_args(Collective coll, void* buf, size_t count, const Reduction& red) {
  CollArgs a;
  a.coll = coll;
  a.send = a.recv = buf;
  a.count = count;
  a.bytes = count * red.elem_size;
  a.red = red;
  return a;
}
}  // namespace

TEST(Schedules, TreeBarrierFansInAndOutOverABinomialTree) {
  EXPECT_EQ(build_barrier_tree(comm_of(0, 1))->rounds().size(), 0u);
  for (int p : {2, 5, 8, 13}) {
    size_t sends = 0, recvs = 0;
    for (int r = 0; r < p; ++r) {
      auto s = build_barrier_tree(comm_of(r, p));
      sends += s->count(Step::send);
      recvs += s->count(Step::recv);
      EXPECT_EQ(step_bytes(*s, Step::send), 0u);
      if (r % 2 == 1) {  // a leaf: report to the parent and wait for its release, in one round
        EXPECT_EQ(s->rounds().size(), 1u) << "p " << p << " rank " << r;
        EXPECT_EQ(s->count(Step::send), 1u);
        EXPECT_EQ(s->count(Step::recv), 1u);
      }
    }
    EXPECT_EQ(sends, size_t(2 * (p - 1))) << "p " << p;
    EXPECT_EQ(recvs, size_t(2 * (p - 1))) << "p " << p;
    auto root = build_barrier_tree(comm_of(0, p));
    EXPECT_EQ(root->count(Step::recv), size_t(ceil_log2(p)));
    EXPECT_EQ(root->count(Step::send), size_t(ceil_log2(p)));
    EXPECT_EQ(root->rounds().size(), 2u);
  }
}

TEST(Schedules, ScatterAllgatherBcastReceivesEachByteOnceAndNothingAtTheRoot) {
  for (size_t n : {size_t(8 * 100), size_t(3)}) {  // 3 bytes: five of the eight segments are empty
    std::vector<char> buf(n);
    for (int root : {0, 5}) {
      for (int r = 0; r < 8; ++r) {
        auto s = build_bcast_scatter_allgather(comm_of(r, 8), buf.data(), n, root);
        EXPECT_EQ(step_bytes(*s, Step::recv), r == root ? 0 : n) << "n " << n << " rank " << r;
        for (size_t b : sent_sizes(*s)) EXPECT_GT(b, 0u);
      }
      auto at_root = build_bcast_scatter_allgather(comm_of(root, 8), buf.data(), n, root);
      if (n == 800) {
        EXPECT_EQ(at_root->count(Step::send), 3u + 7u);  // binomial scatter, then the ring
        EXPECT_EQ(sent_sizes(*at_root).front(), n / 2);  // the larger subtree first
        EXPECT_EQ(at_root->rounds().size(), 1u + 7u);
      }
    }
  }
  EXPECT_EQ(build_bcast_scatter_allgather(comm_of(1, 4), nullptr, 0, 0)->count(Step::recv), 0u);
}

TEST(Schedules, ChainBcastForwardsOneSegmentWhileReceivingTheNext) {
  std::vector<char> buf(10 * 1000 + 1);  // 11 segments, the last of one byte
  const size_t k = 11;
  auto first = build_bcast_chain(comm_of(2, 4), buf.data(), buf.size(), 2, 1000);
  EXPECT_EQ(first->count(Step::send), k);
  EXPECT_EQ(first->count(Step::recv), 0u);
  EXPECT_EQ(first->rounds().size(), k);
  auto middle = build_bcast_chain(comm_of(3, 4), buf.data(), buf.size(), 2, 1000);
  EXPECT_EQ(middle->count(Step::send), k);
  EXPECT_EQ(middle->count(Step::recv), k);
  EXPECT_EQ(middle->rounds().size(), k + 1);  // the first receive and last send stand alone
  EXPECT_EQ(middle->rounds()[1].size(), 2u);
  EXPECT_EQ(middle->rounds()[1][0].peer, 0);  // forward to the successor (wrapping around)
  EXPECT_EQ(middle->rounds()[1][1].peer, 2);  // while receiving from the predecessor
  auto last = build_bcast_chain(comm_of(1, 4), buf.data(), buf.size(), 2, 1000);
  EXPECT_EQ(last->count(Step::send), 0u);
  EXPECT_EQ(last->count(Step::recv), k);
  EXPECT_EQ(sent_sizes(*first).back(), 1u);

  // Segment size: whole message with two ranks or below 8 KiB, else within [8 KiB, n] in KiB.
  EXPECT_EQ(bcast_chain_segment(1 << 20, 2), size_t(1) << 20);
  EXPECT_EQ(bcast_chain_segment(5000, 16), 5000u);
  for (int p : {3, 16, 64})
    for (size_t n : {size_t(9000), size_t(1) << 20, size_t(64) << 20}) {
      const size_t seg = bcast_chain_segment(n, p);
      EXPECT_GE(seg, 8192u);
      EXPECT_LE(seg, n);
      EXPECT_TRUE(seg == n || seg % 1024 == 0) << seg;
    }
  EXPECT_LT(bcast_chain_segment(64 << 20, 64), bcast_chain_segment(64 << 20, 3));
  EXPECT_EQ(build_bcast_chain(comm_of(1, 4), buf.data(), 0, 0, 8192)->rounds().size(), 0u);
}

TEST(Schedules, RabenseifnerReduceHalvesThenGathersToTheRoot) {
  std::vector<int> buf(64);
  const Reduction red = int_sum();
  for (int r = 0; r < 8; ++r) {
    auto s = build_reduce_rabenseifner(comm_of(r, 8), buf.data(), buf.data(), 64, red, 3);
    EXPECT_EQ(s->count(Step::reduce), 3u);
    const std::vector<size_t> sizes = sent_sizes(*s);
    ASSERT_GE(sizes.size(), 3u);
    EXPECT_EQ(sizes[0], 128u);  // half the vector, then a quarter, then an eighth
    EXPECT_EQ(sizes[1], 64u);
    EXPECT_EQ(sizes[2], 32u);
    EXPECT_EQ(s->count(Step::send), r == 3 ? 3u : 4u) << "rank " << r;  // then up the gather tree
  }
  auto root = build_reduce_rabenseifner(comm_of(3, 8), buf.data(), buf.data(), 64, red, 3);
  EXPECT_EQ(root->count(Step::recv), 3u + 3u);
  EXPECT_EQ(step_bytes(*root, Step::recv), 2u * (128 + 64 + 32));  // halving, then gather

  // p = 6, root 1: relative ranks 1 and 3 (ranks 2 and 4) fold into 0 and 2 and leave.
  for (int r : {2, 4}) {
    auto folded = build_reduce_rabenseifner(comm_of(r, 6), buf.data(), buf.data(), 64, red, 1);
    EXPECT_EQ(folded->count(Step::send), 1u);
    EXPECT_EQ(folded->count(Step::recv), 0u);
    EXPECT_EQ(step_bytes(*folded, Step::send), 64u * 4);
  }
  auto root6 = build_reduce_rabenseifner(comm_of(1, 6), buf.data(), buf.data(), 64, red, 1);
  EXPECT_EQ(root6->count(Step::send), 2u);           // the halving only: the root takes part
  EXPECT_EQ(root6->count(Step::recv), 1u + 2u + 2u);  // the fold, the halving, the gather

  const Algorithm* alg = find_algorithm(Collective::reduce, "rabenseifner");
  ASSERT_NE(alg, nullptr);
  CollArgs a = reduction_args(Collective::reduce, buf.data(), 64, red);
  EXPECT_TRUE(alg->supports(a, bare_context(comm_of(0, 12))));
  a.count = 7;  // fewer elements than the 8 ranks left after folding
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 12))));
  a.count = 64;
  a.red.commutative = false;
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 12))));
}

TEST(Schedules, RabenseifnerAllreduceHalvesThenDoubles) {
  std::vector<int> buf(64);
  const Reduction red = int_sum();
  for (int r = 0; r < 8; ++r) {
    auto s = build_allreduce_rabenseifner(comm_of(r, 8), buf.data(), 64, red);
    EXPECT_EQ(s->rounds().size(), 6u);
    EXPECT_EQ(s->count(Step::send), 6u);
    EXPECT_EQ(s->count(Step::recv), 6u);
    EXPECT_EQ(s->count(Step::reduce), 3u);
    EXPECT_EQ(sent_sizes(*s), (std::vector<size_t>{128, 64, 32, 32, 64, 128}));
  }
  // p = 6: rank 0 folds into rank 1 and receives the result; rank 1 adds the fold to its rounds.
  auto folded = build_allreduce_rabenseifner(comm_of(0, 6), buf.data(), 64, red);
  EXPECT_EQ(folded->count(Step::send), 1u);
  EXPECT_EQ(folded->count(Step::recv), 1u);
  EXPECT_EQ(folded->count(Step::reduce), 0u);
  auto partner = build_allreduce_rabenseifner(comm_of(1, 6), buf.data(), 64, red);
  EXPECT_EQ(partner->count(Step::recv), 1u + 4u);
  EXPECT_EQ(partner->count(Step::send), 4u + 1u);
  EXPECT_EQ(partner->rounds().size(), 6u);

  const Algorithm* alg = find_algorithm(Collective::allreduce, "rabenseifner");
  ASSERT_NE(alg, nullptr);
  CollArgs a = reduction_args(Collective::allreduce, buf.data(), 4, red);
  EXPECT_TRUE(alg->supports(a, bare_context(comm_of(0, 7))));
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 8))));
  a.red.commutative = false;
  EXPECT_FALSE(alg->supports(a, bare_context(comm_of(0, 4))));
}

TEST(Schedules, ReduceBcastAllreduceRunsTheBinomialReduceThenBcast) {
  std::vector<int> buf(16);
  Reduction red = int_sum();
  red.commutative = false;
  auto zero = build_allreduce_reduce_bcast(comm_of(0, 5), buf.data(), 16, red);
  EXPECT_EQ(zero->count(Step::recv), 3u);  // from ranks 1, 2 and 4
  EXPECT_EQ(zero->count(Step::send), 3u);  // back to them
  EXPECT_NE(zero->dump().find("allreduce:reduce_bcast"), std::string::npos);
  EXPECT_FALSE(zero->reduction().commutative);
  auto three = build_allreduce_reduce_bcast(comm_of(3, 5), buf.data(), 16, red);
  EXPECT_EQ(three->count(Step::send), 1u);  // to rank 2, its parent both ways
  EXPECT_EQ(three->count(Step::recv), 1u);
  const Algorithm* alg = find_algorithm(Collective::allreduce, "reduce_bcast");
  ASSERT_NE(alg, nullptr);
  EXPECT_TRUE(alg->supports(reduction_args(Collective::allreduce, buf.data(), 1, red), bare_context(comm_of(0, 5))));
}
