// The hierarchical algorithms (coll/hier) in the schedule simulator, on communicators whose
// ranks lie on several nodes in various placements: consecutive blocks (as WEFT_FAKE_NODES
// makes), round robin, uneven, single-rank nodes, node ids out of order. Every rank, every root,
// in place and not, uneven and gapped blocks.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "schedule_sim.h"

using namespace weft;
using namespace weft::coll;

namespace {

struct Placement {
  const char* name;
  std::vector<uint32_t> nodes;  // node id per rank
};

std::vector<Placement> placements() {
  std::vector<Placement> out;
  for (int p : {2, 3, 4, 5, 7, 8, 12}) {
    for (int q : {2, 3, 4}) {
      if (q > p) continue;
      Placement blocks{"blocks", {}}, robin{"round robin", {}};
      for (int r = 0; r < p; ++r) {
        blocks.nodes.push_back(uint32_t(r * q / p));
        robin.nodes.push_back(uint32_t(r % q));
      }
      out.push_back(blocks);
      out.push_back(robin);
    }
    // One big node and single-rank ones, with ids that do not follow rank order.
    Placement uneven{"uneven", {}};
    for (int r = 0; r < p; ++r) uneven.nodes.push_back(r == 1 ? 5 : r == p - 1 ? 2 : 9);
    out.push_back(uneven);
    Placement reversed{"reversed", {}};
    for (int r = 0; r < p; ++r) reversed.nodes.push_back(uint32_t((p - 1 - r) * 2 / p));
    out.push_back(reversed);
  }
  return out;
}

std::string where(const Placement& pl, int root = 0, size_t n = 0) {
  std::string s = std::string(pl.name) + " nodes=[";
  for (uint32_t id : pl.nodes) s += std::to_string(id) + " ";
  return s + "] root=" + std::to_string(root) + " n=" + std::to_string(n);
}

CostModel model() {
  CostModel m;
  m.alpha_us = m.net_alpha_us = 5;
  m.beta_us_per_byte = m.net_beta_us_per_byte = 0.001;
  m.node_alpha_us = 0.5;
  m.node_beta_us_per_byte = 0.0001;
  m.gamma_us_per_byte = 0.0002;
  return m;
}

// Builds every rank's schedule on the placement and runs them all; false where the algorithm
// declines the call.
bool run(Collective coll, const Placement& pl, const std::vector<CollArgs>& args) {
  const Algorithm* alg = find_algorithm(coll, "hier");
  EXPECT_NE(alg, nullptr) << collective_name(coll);
  if (!alg) return false;
  const int p = int(pl.nodes.size());
  std::vector<std::shared_ptr<Schedule>> s;
  double estimate = 0;
  for (int r = 0; r < p; ++r) {
    Comm c = sim::comm_of(r, p);
    c.nodes = pl.nodes;
    if (!alg->supports(args[size_t(r)], bare_context(c))) {
      EXPECT_EQ(r, 0) << "ranks disagree on support: " << where(pl);
      return false;
    }
    // Every rank must estimate alike, or they would choose different algorithms.
    const double us = alg->estimate_us(args[size_t(r)], bare_context(c), model());
    if (r == 0) estimate = us;
    EXPECT_EQ(us, estimate) << where(pl) << " rank " << r;
    s.push_back(alg->build(args[size_t(r)], bare_context(c)));
  }
  EXPECT_EQ(sim::run_all(s), "") << collective_name(coll) << " " << where(pl);
  return true;
}

TEST(Hier, NotOnOneNode) {
  Comm c = sim::comm_of(0, 4);
  for (Collective coll : {Collective::barrier, Collective::bcast, Collective::reduce, Collective::allgather}) {
    const Algorithm* alg = find_algorithm(coll, "hier");
    ASSERT_NE(alg, nullptr);
    CollArgs a{coll};
    EXPECT_FALSE(alg->supports(a, bare_context(c)));  // no node ids
    c.nodes.assign(4, 3);
    EXPECT_FALSE(alg->supports(a, bare_context(c)));  // one node
    c.nodes.clear();
  }
}

TEST(Hier, Barrier) {
  for (const Placement& pl : placements())
    EXPECT_TRUE(run(Collective::barrier, pl, std::vector<CollArgs>(pl.nodes.size(), CollArgs{Collective::barrier})));
}

TEST(Hier, Bcast) {
  for (const Placement& pl : placements()) {
    const int p = int(pl.nodes.size());
    for (size_t n : {size_t(0), size_t(1), size_t(1000)})
      for (int root = 0; root < p; ++root) {
        std::vector<std::vector<char>> buf(static_cast<size_t>(p), std::vector<char>(n, 0));
        for (size_t i = 0; i < n; ++i) buf[size_t(root)][i] = char(i * 7 + 3);
        std::vector<CollArgs> a(static_cast<size_t>(p), CollArgs{Collective::bcast});
        for (int r = 0; r < p; ++r) {
          a[size_t(r)].recv = buf[size_t(r)].data();
          a[size_t(r)].bytes = n;
          a[size_t(r)].root = root;
        }
        ASSERT_TRUE(run(Collective::bcast, pl, a));
        for (int r = 0; r < p; ++r) ASSERT_EQ(buf[size_t(r)], buf[size_t(root)]) << where(pl, root, n) << " rank " << r;
      }
  }
}

TEST(Hier, Reduce) {
  const Reduction sum{ReduceOp::sum, BasicType::i32, 4};
  for (const Placement& pl : placements()) {
    const int p = int(pl.nodes.size());
    for (size_t n : {size_t(1), size_t(1001)})
      for (int root = 0; root < p; ++root)
        for (bool in_place : {false, true}) {
          std::vector<std::vector<int32_t>> send(static_cast<size_t>(p), std::vector<int32_t>(n)), recv(static_cast<size_t>(p), std::vector<int32_t>(n, -1));
          for (int r = 0; r < p; ++r)
            for (size_t i = 0; i < n; ++i) send[size_t(r)][i] = int32_t(r * 1000 + int(i));
          std::vector<CollArgs> a(static_cast<size_t>(p), CollArgs{Collective::reduce});
          for (int r = 0; r < p; ++r) {
            CollArgs& x = a[size_t(r)];
            // As mpi/ passes it: off the root, recv is the input.
            if (r == root && in_place) recv[size_t(r)] = send[size_t(r)];
            x.send = r == root && in_place ? recv[size_t(r)].data() : send[size_t(r)].data();
            x.recv = r == root ? recv[size_t(r)].data() : const_cast<void*>(x.send);
            x.count = n;
            x.bytes = n * 4;
            x.red = sum;
            x.root = root;
          }
          ASSERT_TRUE(run(Collective::reduce, pl, a));
          for (size_t i = 0; i < n; ++i) {
            int32_t want = 0;
            for (int r = 0; r < p; ++r) want += int32_t(r * 1000 + int(i));
            ASSERT_EQ(recv[size_t(root)][i], want) << where(pl, root, n) << (in_place ? " in place" : "");
          }
          for (int r = 0; r < p; ++r)  // the inputs stay as they were
            if (r != root || !in_place) {
              for (size_t i = 0; i < n; ++i) ASSERT_EQ(send[size_t(r)][i], int32_t(r * 1000 + int(i)));
            }
        }
  }
}

// Rank r's block: in rank order back to back, or uneven (some empty) at reversed, gapped offsets.
std::vector<Block> layout(int p, size_t unit, bool uneven, size_t* total) {
  std::vector<Block> b(static_cast<size_t>(p));
  size_t off = 0;
  for (int i = 0; i < p; ++i) {
    const int r = uneven ? p - 1 - i : i;
    const size_t bytes = uneven ? unit * size_t((r * 3) % 4) : unit;
    b[size_t(r)] = Block{off, bytes};
    off += bytes + (uneven ? 3 : 0);
  }
  *total = off;
  return b;
}

TEST(Hier, Allgather) {
  for (const Placement& pl : placements()) {
    const int p = int(pl.nodes.size());
    for (size_t unit : {size_t(0), size_t(1), size_t(13), size_t(4096)})
      for (bool uneven : {false, true})
        for (bool in_place : {false, true}) {
          size_t total;
          const std::vector<Block> blocks = layout(p, unit, uneven, &total);
          auto byte_of = [](int r, size_t i) { return char(r * 31 + int(i) + 1); };
          std::vector<std::vector<char>> mine(static_cast<size_t>(p)), recv(static_cast<size_t>(p), std::vector<char>(total, 'x'));
          std::vector<CollArgs> a(static_cast<size_t>(p), CollArgs{Collective::allgather});
          for (int r = 0; r < p; ++r) {
            const Block& own = blocks[size_t(r)];
            for (size_t i = 0; i < own.bytes; ++i) mine[size_t(r)].push_back(byte_of(r, i));
            CollArgs& x = a[size_t(r)];
            x.recv = recv[size_t(r)].data();
            x.recv_blocks = blocks;
            x.uniform = !uneven;
            x.bytes = total;
            x.own_bytes = own.bytes;
            if (in_place) {
              std::copy(mine[size_t(r)].begin(), mine[size_t(r)].end(), recv[size_t(r)].begin() + long(own.offset));
              x.send = recv[size_t(r)].data() + own.offset;
            } else {
              x.send = mine[size_t(r)].data();
            }
          }
          ASSERT_TRUE(run(Collective::allgather, pl, a));
          std::vector<char> want(total, 'x');  // the gaps untouched
          for (int q = 0; q < p; ++q)
            for (size_t i = 0; i < blocks[size_t(q)].bytes; ++i) want[blocks[size_t(q)].offset + i] = byte_of(q, i);
          for (int r = 0; r < p; ++r)
            ASSERT_EQ(recv[size_t(r)], want) << where(pl, 0, unit) << " rank " << r << (uneven ? " uneven" : "")
                                            << (in_place ? " in place" : "");
        }
  }
}

}  // namespace
