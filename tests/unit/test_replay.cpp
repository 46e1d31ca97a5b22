// coll/replay.h: the replay of schedules in the alpha-beta-gamma model against closed forms.
#include <gtest/gtest.h>

#include <vector>

#include "coll/algorithm.h"
#include "coll/comm_state.h"
#include "coll/replay.h"

namespace weft::coll {
namespace {

Comm view(int rank, const std::vector<uint32_t>& nodes) {
  Comm c;
  c.rank = rank;
  c.size = int(nodes.size());
  c.name = "replay";
  for (int r = 0; r < c.size; ++r) c.world_ranks.push_back(r);
  c.nodes = nodes;
  return c;
}

CostModel network(double alpha, double beta, double gamma) {
  CostModel m;
  m.alpha_us = m.net_alpha_us = alpha;
  m.beta_us_per_byte = m.net_beta_us_per_byte = beta;
  m.node_alpha_us = alpha / 4;
  m.node_beta_us_per_byte = beta / 4;
  m.gamma_us_per_byte = gamma;
  return m;
}

std::vector<uint32_t> one_per_node(int p) {
  std::vector<uint32_t> n;
  for (int r = 0; r < p; ++r) n.push_back(uint32_t(r));
  return n;
}

const Reduction kSumF32{ReduceOp::sum, BasicType::f32, 4, true};

TEST(Replay, RingAllreduceMatchesItsClosedForm) {
  const int p = 4;
  const size_t count = 1 << 16;  // 256 KiB, p equal segments
  std::vector<float> buf(count);
  const auto nodes = one_per_node(p);
  const CostModel m = network(2.0, 1e-3, 5e-4);
  auto build = [&](int r) {
    Comm c = view(r, nodes);
    auto s = build_allreduce_ring(c, buf.data(), count, kSumF32);
    release(c);
    return s;
  };
  const ReplayResult rr = replay(build, nodes, m, ReplayLimits{}, {0});
  ASSERT_EQ(rr.error, "");
  EXPECT_FALSE(rr.sampled);
  // 2(p-1) steps of a segment each way, and (p-1) segments reduced.
  const double segment = double(count * 4) / p;
  const double expected = 2 * (p - 1) * (2.0 + segment * 1e-3) + (p - 1) * segment * 5e-4;
  EXPECT_NEAR(rr.us, expected, expected * 1e-6);
}

TEST(Replay, SampledRanksAgreeWithAllRanksForASymmetricSchedule) {
  const int p = 16;
  const size_t count = 4096;
  std::vector<float> buf(count);
  const auto nodes = one_per_node(p);
  const CostModel m = network(1.5, 2e-4, 1e-4);
  auto build = [&](int r) {
    Comm c = view(r, nodes);
    auto s = build_allreduce_recursive_doubling(c, buf.data(), count, kSumF32);
    release(c);
    return s;
  };
  const ReplayResult all = replay(build, nodes, m, ReplayLimits{}, {0, 7, 15});
  ReplayLimits tiny;
  tiny.max_ranks = 2;
  const ReplayResult sampled = replay(build, nodes, m, tiny, {0, 7, 15});
  ASSERT_EQ(all.error, "");
  ASSERT_EQ(sampled.error, "");
  EXPECT_FALSE(all.sampled);
  EXPECT_TRUE(sampled.sampled);
  const double expected = 4 * (1.5 + count * 4 * (2e-4 + 1e-4));  // log2(16) rounds
  EXPECT_NEAR(all.us, expected, expected * 1e-6);
  EXPECT_NEAR(sampled.us, expected, expected * 1e-6);
}

TEST(Replay, MessagesIntoOneNodeShareItsLink) {
  // A linear gather: the root's network link takes the p-1 blocks one after another; then the
  // root copies its own block (at the node's beta, no shared-memory copy rate being known).
  const int p = 8;
  const size_t block = 1 << 20;
  std::vector<char> recv(block * p), mine(block);
  std::vector<Block> blocks;
  for (int r = 0; r < p; ++r) blocks.push_back({size_t(r) * block, block});
  const auto nodes = one_per_node(p);
  const CostModel m = network(1.0, 1e-3, 0);
  auto build = [&](int r) {
    Comm c = view(r, nodes);
    auto s = build_gather_linear(c, mine.data(), block, recv.data(), blocks, 0);
    release(c);
    return s;
  };
  const ReplayResult rr = replay(build, nodes, m, ReplayLimits{}, {0});
  ASSERT_EQ(rr.error, "");
  EXPECT_EQ(rr.slowest_rank, 0);
  const double one = double(block) * 1e-3;
  const double copy = double(block) * 2.5e-4;
  EXPECT_NEAR(rr.us, 1.0 + (p - 1) * one + copy, 1e-6);
}

TEST(Replay, RanksOfOneNodeUseTheNodeLevel) {
  // Two ranks on one node: a bcast costs the node's alpha and beta, not the network's.
  const std::vector<uint32_t> nodes = {5, 5};
  std::vector<char> buf(1000);
  const CostModel m = network(4.0, 1e-2, 0);
  auto build = [&](int r) {
    Comm c = view(r, nodes);
    auto s = build_bcast_binomial(c, buf.data(), buf.size(), 0);
    release(c);
    return s;
  };
  const ReplayResult rr = replay(build, nodes, m, ReplayLimits{}, {0});
  ASSERT_EQ(rr.error, "");
  EXPECT_NEAR(rr.us, 1.0 + 1000 * 2.5e-3, 1e-9);
}

TEST(Replay, MeasuredMessageTimesReplaceAlphaAndBeta) {
  // A bcast between two nodes takes the measured curve's time at its size (interpolated), and
  // beyond the last point the curve's last slope.
  const std::vector<uint32_t> nodes = {0, 1};
  std::vector<char> buf(1 << 20);
  Links curves;
  curves.net = {{0, 10.0}, {1024, 20.0}, {4096, 60.0}};
  auto bcast_of = [&](size_t bytes) {
    return [&, bytes](int r) {
      Comm c = view(r, nodes);
      auto s = build_bcast_binomial(c, buf.data(), bytes, 0);
      release(c);
      return s;
    };
  };
  const CostModel m = network(1000.0, 1.0, 0);  // never used on the network level
  EXPECT_NEAR(replay(bcast_of(512), nodes, m, ReplayLimits{}, {0}, &curves).us, 15.0, 1e-9);
  EXPECT_NEAR(replay(bcast_of(2048), nodes, m, ReplayLimits{}, {0}, &curves).us, 20.0 + 40.0 / 3, 1e-9);
  EXPECT_NEAR(replay(bcast_of(8192), nodes, m, ReplayLimits{}, {0}, &curves).us, 60.0 + 4096 * 40.0 / 3072, 1e-9);
  ReplayLimits tiny;
  tiny.max_ranks = 1;
  EXPECT_NEAR(replay(bcast_of(512), nodes, m, tiny, {0, 1}, &curves).us, 15.0, 1e-9);
}

TEST(Replay, HalfDuplexLinksTakeAnExchangeInTurns) {
  // Recursive doubling on two nodes: one exchange of n bytes each way; full duplex it costs one
  // message, half duplex the two directions share each link.
  const std::vector<uint32_t> nodes = {0, 1};
  const size_t count = 1 << 18;
  std::vector<float> buf(count);
  auto build = [&](int r) {
    Comm c = view(r, nodes);
    auto s = build_allreduce_recursive_doubling(c, buf.data(), count, kSumF32);
    release(c);
    return s;
  };
  const CostModel m = network(5.0, 1e-3, 0);
  const double one = double(count * 4) * 1e-3;
  Links half;
  half.half_duplex = true;
  EXPECT_NEAR(replay(build, nodes, m, ReplayLimits{}, {0}).us, 5.0 + one, 1e-6);
  EXPECT_NEAR(replay(build, nodes, m, ReplayLimits{}, {0}, &half).us, 2 * one, 1e-6);
  ReplayLimits tiny;
  tiny.max_ranks = 1;
  EXPECT_NEAR(replay(build, nodes, m, tiny, {0}, &half).us, 5.0 + 2 * one, 1e-6);
}

TEST(Replay, AReceiveNoRankSendsIsReported) {
  const std::vector<uint32_t> nodes = {0, 1};
  std::vector<char> buf(8);
  auto build = [&](int r) {
    auto s = std::make_shared<Schedule>("unmatched");
    s->new_round();
    if (r == 1) s->recv(0, buf.data(), buf.size());
    return s;
  };
  const ReplayResult rr = replay(build, nodes, network(1, 1e-3, 0), ReplayLimits{}, {0});
  EXPECT_NE(rr.error.find("rank 1 never finishes round 0"), std::string::npos) << rr.error;
}

TEST(Replay, APeerOutsideTheCommunicatorIsReported) {
  const std::vector<uint32_t> nodes = {0, 1};
  std::vector<char> buf(8);
  auto build = [&](int r) {
    auto s = std::make_shared<Schedule>("bad peer");
    s->new_round();
    s->send(r == 0 ? 7 : 0, buf.data(), buf.size());
    return s;
  };
  const ReplayResult rr = replay(build, nodes, network(1, 1e-3, 0), ReplayLimits{}, {0});
  EXPECT_NE(rr.error.find("names peer 7"), std::string::npos) << rr.error;
}

}  // namespace
}  // namespace weft::coll
