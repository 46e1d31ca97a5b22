// Node topology: the weft JSON format (a described machine with four GPUs behind two PCIe
// switches), its validation, hwloc's view of this machine and an hwloc XML export of it, and
// the binding advice.
#include <gtest/gtest.h>
#include <hwloc.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "topo/json.h"
#include "topo/topology.h"

using namespace weft;
using namespace weft::topo;

namespace {

const std::string kSwitches = std::string(WEFT_TEST_DATA) + "/topo_pcie_switches.json";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string rejected(const std::string& text) {
  NodeTopology t;
  std::string error;
  if (from_json_text(text, &t, &error) == Status::ok) return "accepted";
  return error;
}

}  // namespace

TEST(Topology, ReadsFourGpusBehindTwoSwitches) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  EXPECT_EQ(t.hostname, "two-switch-node");
  EXPECT_EQ(t.packages, 2);
  EXPECT_EQ(t.cores, 32);
  ASSERT_EQ(t.numa.size(), 2u);
  EXPECT_EQ(t.numa[1].cpus, "16-31,48-63");
  EXPECT_EQ(t.gpu_count(), 4);
  EXPECT_EQ(t.devices.size(), 6u);
  EXPECT_EQ(t.gpu(2)->name, "cuda2");
  EXPECT_EQ(t.gpu(2)->numa, 1);
  EXPECT_EQ(t.gpu(2)->pci_switch, 1);
  ASSERT_EQ(t.distances.size(), 2u);
  EXPECT_EQ(t.distances[0][1], 21u);
  // NVLink joins each pair only; the PCIe links do not make islands.
  const auto islands = t.gpu_islands();
  ASSERT_EQ(islands.size(), 2u);
  EXPECT_EQ(islands[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(islands[1], (std::vector<int>{2, 3}));
  const std::string text = to_text(t);
  EXPECT_NE(text.find("GPU islands: {0,1} {2,3}"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu 3: cuda3 (0000:ab:00.0), behind PCIe switch 1"), std::string::npos) << text;
}

TEST(Topology, JsonRoundTrip) {
  NodeTopology a, b;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &a, &error), Status::ok) << error;
  ASSERT_EQ(from_json_text(to_json(a), &b, &error), Status::ok) << error;
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.links.size(), 4u);
  EXPECT_EQ(b.links[1].lanes, 4);
}

TEST(Topology, IslandsWithoutNvlinkFollowTheSwitches) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  t.links.clear();
  const auto islands = t.gpu_islands();
  ASSERT_EQ(islands.size(), 2u);
  EXPECT_EQ(islands[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(islands[1], (std::vector<int>{2, 3}));
}

TEST(Topology, RejectsBadFilesWithTheReason) {
  const std::string good = read(kSwitches);
  ASSERT_FALSE(good.empty());
  EXPECT_NE(rejected(good.substr(0, good.size() / 2)).find("line"), std::string::npos);
  EXPECT_NE(rejected("[1, 2]").find("JSON object"), std::string::npos);
  std::string v2 = good;
  v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
  EXPECT_NE(rejected(v2).find("version 2 is not supported"), std::string::npos);
  std::string bad_link = good;
  bad_link.replace(bad_link.find("\"a\": 2, \"b\": 3"), 14, "\"a\": 2, \"b\": 9");
  EXPECT_NE(rejected(bad_link).find("links[1]: 'b' must be an integer in [0, 3]"), std::string::npos);
  std::string bad_numa = good;
  bad_numa.replace(bad_numa.find("\"numa\": 1, \"switch\": 1}"), 10, "\"numa\": 7,");
  EXPECT_NE(rejected(bad_numa).find("no NUMA node 7"), std::string::npos);
  EXPECT_NE(rejected(std::string(100, '[') + std::string(100, ']')).find("64 levels"), std::string::npos);
  EXPECT_NE(rejected("{\"format\": \"weft-topology\", \"version\": 1, \"packages\": -1, \"cores\": 1, \"pus\": 1}")
                .find("'packages' must be an integer"),
            std::string::npos);
  EXPECT_NE(rejected("{\"format\": \"other\", \"version\": 1}").find("'format'"), std::string::npos);
  EXPECT_NE(rejected("\"\\u12").find("truncated"), std::string::npos);
}

TEST(Topology, ReadsThisMachine) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_machine(false, &t, &error), Status::ok) << error;
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.pus, t.cores);
  ASSERT_GE(t.numa.size(), 1u);
  EXPECT_FALSE(t.numa[0].cpus.empty());
  Binding b;
  ASSERT_EQ(current_binding(&b, &error), Status::ok) << error;
  EXPECT_FALSE(b.cpus.empty());
  EXPECT_FALSE(b.numa.empty());
}

TEST(Topology, ReadsAnHwlocXmlExport) {
  hwloc_topology_t h;
  ASSERT_EQ(hwloc_topology_init(&h), 0);
  ASSERT_EQ(hwloc_topology_load(h), 0);
  char path[] = "/tmp/weft-topo-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_EQ(hwloc_topology_export_xml(h, path, 0), 0);
  const int cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(h);
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(path, &t, &error), Status::ok) << error;
  remove(path);
  EXPECT_EQ(t.cores, cores);
  EXPECT_NE(t.source.find("hwloc XML file"), std::string::npos);
}

TEST(Topology, AdvisesAgainstABindingFarFromTheGpu) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  Binding near{"0-3", {0}, true}, far{"16-19", {1}, true}, loose{"0-63", {0, 1}, false};
  EXPECT_EQ(binding_advice(t, near, 0), "");
  EXPECT_EQ(binding_advice(t, loose, 0), "");
  const std::string advice = binding_advice(t, far, 1);
  EXPECT_NE(advice.find("gpu 1 (cuda1) hangs off NUMA 0"), std::string::npos) << advice;
}

TEST(Topology, FindsTheResourceHoldingTheBinding) {
  int index = -2;
  std::string error;
  ASSERT_EQ(binding_instance("Machine", &index, &error), Status::ok) << error;
  EXPECT_EQ(index, 0);
  ASSERT_EQ(binding_instance("numanode", &index, &error), Status::ok) << error;  // any case
  Binding b;
  ASSERT_EQ(current_binding(&b, &error), Status::ok) << error;
  EXPECT_EQ(index >= 0, b.numa.size() == 1);
  EXPECT_EQ(binding_instance("no_such_resource", &index, &error), Status::invalid_arg);
  EXPECT_NE(error.find("not a hardware resource type"), std::string::npos);
  EXPECT_EQ(binding_instance("PCIDev", &index, &error), Status::invalid_arg);
}
