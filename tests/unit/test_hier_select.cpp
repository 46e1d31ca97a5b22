// The cost model's levels from a described topology: four GPUs behind two PCIe switches, with
// NVLink only inside each pair (tests/data/topo_pcie_switches.json). With one rank per GPU and
// the GPU islands as the hierarchy's lower level, the selector picks a hierarchical allreduce
// for large messages; where NVLink joins all four GPUs there is one island and no hierarchy.
#include <gtest/gtest.h>

#include <string>

#include "coll/algorithm.h"
#include "topo/link_cost.h"
#include "topo/topology.h"

namespace {

using namespace weft;

topo::NodeTopology two_switches() {
  topo::NodeTopology t;
  std::string error;
  EXPECT_EQ(topo::load_file(WEFT_TEST_DATA "/topo_pcie_switches.json", &t, &error), Status::ok) << error;
  return t;
}

// Rank r of four uses GPU r; its "node" in the hierarchy is its GPU's island.
Comm ranks_on_gpus(const topo::NodeTopology& t, int rank) {
  Comm c;
  c.size = t.gpu_count();
  c.rank = rank;
  const auto islands = t.gpu_islands();
  for (int g = 0; g < c.size; ++g) c.nodes.push_back(uint32_t(topo::island_of(islands, g)));
  return c;
}

// Inside an island: the link between its first two GPUs; between islands: GPUs 0 and 2.
coll::CostModel levels_of(const topo::NodeTopology& t) {
  coll::CostModel m;
  const topo::LinkCost inside = topo::gpu_link_cost(t, 0, 1), across = topo::gpu_link_cost(t, 0, 2);
  m.node_alpha_us = inside.alpha_us;
  m.node_beta_us_per_byte = inside.beta_us_per_byte;
  m.net_alpha_us = m.alpha_us = across.alpha_us;
  m.net_beta_us_per_byte = m.beta_us_per_byte = across.beta_us_per_byte;
  m.gamma_us_per_byte = 1.0 / 2e6;  // a GPU reduces at about 2 TB/s
  return m;
}

coll::CollArgs allreduce_of(size_t bytes) {
  coll::CollArgs a{coll::Collective::allreduce};
  a.bytes = bytes;
  a.count = bytes / sizeof(float);
  a.red.type = BasicType::f32;
  a.red.elem_size = sizeof(float);
  return a;
}

TEST(HierSelect, TopologyGivesTwoIslandsAndTwoLevels) {
  const topo::NodeTopology t = two_switches();
  ASSERT_EQ(t.gpu_count(), 4);
  ASSERT_EQ(t.gpu_islands().size(), 2u);
  const topo::LinkCost nvlink = topo::gpu_link_cost(t, 0, 1), pcie = topo::gpu_link_cost(t, 1, 2);
  EXPECT_LT(nvlink.beta_us_per_byte * 4, pcie.beta_us_per_byte);  // four lanes: 100 vs 20 GB/s
  EXPECT_LT(nvlink.alpha_us, pcie.alpha_us);
}

TEST(HierSelect, PcieSwitchTopologyPicksHierarchicalAllreduceForLargeMessages) {
  const topo::NodeTopology t = two_switches();
  const coll::CostModel m = levels_of(t);
  for (int rank = 0; rank < 4; ++rank) {
    const Comm c = ranks_on_gpus(t, rank);
    for (size_t bytes : {size_t(16) << 20, size_t(256) << 20}) {
      const coll::Algorithm* chosen = coll::lowest_estimate(allreduce_of(bytes), coll::bare_context(c), m);
      ASSERT_NE(chosen, nullptr);
      EXPECT_EQ(std::string(chosen->name).rfind("hier", 0), 0u)
          << bytes << " bytes at rank " << rank << ": " << chosen->name;
    }
  }
}

TEST(HierSelect, OneIslandOffersNoHierarchy) {
  topo::NodeTopology t = two_switches();
  for (auto& l : t.links) {
    l.kind = "nvlink";
    l.lanes = 4;
  }
  t.links.push_back({0, 3, "nvlink", 4});
  t.links.push_back({1, 2, "nvlink", 4});
  ASSERT_EQ(t.gpu_islands().size(), 1u);
  const Comm c = ranks_on_gpus(t, 0);
  const coll::Algorithm* chosen =
      coll::lowest_estimate(allreduce_of(size_t(64) << 20), coll::bare_context(c), levels_of(t));
  ASSERT_NE(chosen, nullptr);
  EXPECT_NE(std::string(chosen->name).rfind("hier", 0), 0u) << chosen->name;
}

}  // namespace
