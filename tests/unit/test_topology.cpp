// Node topology: the weft JSON format (a described machine with four GPUs behind two PCIe
// switches), its validation, hwloc's view of this machine and an hwloc XML export of it, the
// binding advice, GPU links from the drivers (through stand-in driver libraries), and the job
// view built from node ids and exchanged summaries.
#include <gtest/gtest.h>
#include <hwloc.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "topo/job.h"
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
  // Hostile text: far too deep (refused before the parse), numbers beyond double or int64,
  // integers given as strings, bytes that are not UTF-8.
  EXPECT_NE(rejected(std::string(100000, '[')).find("line 1, column 65: nested more than 64 levels"), std::string::npos);
  EXPECT_NE(rejected(std::string(100000, '{')).find("64 levels"), std::string::npos);
  EXPECT_NE(rejected("{\"a\": 1e400}").find("line 1, column 7: number overflow"), std::string::npos);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return rejected(t);
  };
  for (const char* cores : {"99999999999999999999", "-9223372036854775808", "1e300", "3.5", "\"32\"", "null"})
    EXPECT_NE(with("\"cores\": 32", std::string("\"cores\": ") + cores).find("'cores' must be an integer"),
              std::string::npos)
        << cores;
  EXPECT_EQ(with("\"cores\": 32", "\"cores\": 32.0"), "accepted");
  EXPECT_NE(with("\"hostname\": \"two-switch-node\"", "\"hostname\": 7").find("'hostname' must be a string"),
            std::string::npos);
  EXPECT_NE(with("\"caches\": [", "\"caches\": [1e20, ").find("'caches' holds byte counts"), std::string::npos);
  EXPECT_NE(with("\"caches\": [", "\"caches\": [null, ").find("'caches' holds byte counts"), std::string::npos);
  EXPECT_NE(with("two-switch-node", "two\xff").find("UTF-8"), std::string::npos);
  EXPECT_NE(rejected("{} x").find("line 1, column 4"), std::string::npos);
}

TEST(Topology, RankPlacesFromPeersAreChecked) {
  RankPlace p;
  std::string error;
  EXPECT_FALSE(
      rank_place_from_json("{\"rank\": 1e300, \"cpus\": \"0\", \"numa\": [], \"bound\": true, \"gpu\": 0}", &p, &error));
  EXPECT_NE(error.find("not an integer"), std::string::npos) << error;
  EXPECT_FALSE(
      rank_place_from_json("{\"rank\": 1, \"cpus\": \"0\", \"numa\": [\"0\"], \"bound\": true, \"gpu\": 0}", &p, &error));
  EXPECT_NE(error.find("NUMA nodes as numbers"), std::string::npos) << error;
  EXPECT_FALSE(rank_place_from_json(std::string(100, '['), &p, &error));
  EXPECT_NE(error.find("64 levels"), std::string::npos) << error;
  ASSERT_TRUE(rank_place_from_json(
      "{\"rank\": 3, \"cpus\": \"0-3\", \"numa\": [0, 1], \"bound\": false, \"gpu\": -1}", &p, &error))
      << error;
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.numa, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.gpu, -1);
  // Quoting: control characters escaped, bytes that are not UTF-8 replaced rather than thrown.
  std::string quoted;
  json_quote("a\"b\\c\n\x01", &quoted);
  EXPECT_EQ(quoted, "\"a\\\"b\\\\c\\n\\u0001\"");
  quoted.clear();
  json_quote("host\xff", &quoted);
  EXPECT_EQ(quoted, "\"host\xef\xbf\xbd\"");
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
  EXPECT_EQ(binding_advice(t, near, 0, true), "");
  EXPECT_EQ(binding_advice(t, loose, 0, true), "");
  const std::string advice = binding_advice(t, far, 1, true);
  EXPECT_NE(advice.find("gpu 1 (cuda1) hangs off NUMA 0"), std::string::npos) << advice;
  // mlx5_1 sits on NUMA 1 with the binding: the network side is fine.
  EXPECT_EQ(advice.find("NIC"), std::string::npos) << advice;
}

TEST(Topology, AdvisesAgainstABindingFarFromEveryNic) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  // Only mlx5_1 (NUMA 1) is left: a rank bound to NUMA 0 sends every message across.
  t.devices.erase(std::find_if(t.devices.begin(), t.devices.end(), [](const PciDevice& d) { return d.name == "mlx5_0"; }));
  Binding numa0{"0-3", {0}, true}, numa1{"16-19", {1}, true}, loose{"0-63", {0, 1}, false};
  const std::string advice = binding_advice(t, numa0, 0, true);
  EXPECT_NE(advice.find("bound to cpus 0-3 (NUMA 0), but the nearest NIC (mlx5_1) hangs off NUMA 1"),
            std::string::npos) << advice;
  EXPECT_EQ(advice.find("gpu 0"), std::string::npos) << advice;  // gpu 0 is on NUMA 0
  // A job on one node uses no NIC; a rank bound to NUMA 1 has it near; an unbound rank is let be.
  EXPECT_EQ(binding_advice(t, numa0, 0, false), "");
  EXPECT_EQ(binding_advice(t, numa1, 2, true), "");
  EXPECT_EQ(binding_advice(t, loose, 0, true), "");
  // Far from its GPU and from the NIC: both in one sentence (one warning per rank).
  const std::string both = binding_advice(t, numa0, 2, true);
  EXPECT_NE(both.find("gpu 2 (cuda2) hangs off NUMA 1"), std::string::npos) << both;
  EXPECT_NE(both.find("; and the nearest NIC (mlx5_1) hangs off NUMA 1"), std::string::npos) << both;
  // A NIC of unknown place leaves the question open: no advice on it.
  t.devices.push_back(PciDevice{PciDevice::nic, "eth9", "0000:05:00.0", -1, -1});
  EXPECT_EQ(binding_advice(t, numa0, 0, true), "");
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

TEST(Topology, LinksFromPeerFacts) {
  // Both directions count the same NVLinks; peer access must go both ways for a pcie link.
  const std::vector<GpuPeerFact> facts = {
      {0, 1, 4, true, 0}, {1, 0, 4, true, 0},  // NVLink x4
      {0, 2, 0, true, 1}, {2, 0, 0, true, 2},  // PCIe both ways: the slower rank is kept
      {1, 3, 0, true, 1}, {3, 1, 0, false, -1},  // one way only: no link
      {2, 3, 2, false, -1},  // NVML alone: NVLink without CUDA's word on access
      {0, 0, 9, true, 0}, {0, 7, 1, true, 0},  // itself, and a GPU that is not there: ignored
  };
  const std::vector<GpuLink> links = links_from_peer_facts(4, facts);
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0].a, 0);
  EXPECT_EQ(links[0].b, 1);
  EXPECT_EQ(links[0].kind, "nvlink");
  EXPECT_EQ(links[0].lanes, 4);
  EXPECT_EQ(links[1].a, 0);
  EXPECT_EQ(links[1].b, 2);
  EXPECT_EQ(links[1].kind, "pcie");
  EXPECT_EQ(links[1].perf_rank, 2);
  EXPECT_EQ(links[2].a, 2);
  EXPECT_EQ(links[2].b, 3);
  EXPECT_EQ(links[2].kind, "nvlink");
  EXPECT_EQ(links[2].lanes, 2);
  EXPECT_TRUE(links_from_peer_facts(4, {}).empty());
}

TEST(Topology, LinksThroughNvswitches) {
  // GPUs 0-2 reach the NVSwitches over 18, 18 and 12 links; GPU 3 has none.
  const std::vector<GpuLink> links = links_from_peer_facts(4, {}, {18, 18, 12, 0});
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0].lanes, 18);  // 0-1
  EXPECT_EQ(links[1].lanes, 12);  // 0-2
  EXPECT_EQ(links[2].lanes, 12);  // 1-2
  for (const GpuLink& l : links) EXPECT_EQ(l.kind, "nvlink");
}

TEST(Topology, GpuLinksAbsentWithoutDrivers) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  EXPECT_EQ(t.gpu_link_source, "topology file");
  add_gpu_links(&t, GpuDriverLibraries{"libweft-no-such-cuda.so.1", "libweft-no-such-nvml.so.1"});
  EXPECT_EQ(t.gpu_link_source, "none: libweft-no-such-cuda.so.1 not found; libweft-no-such-nvml.so.1 not found");
  EXPECT_EQ(t.links.size(), 4u);  // left as they were
  EXPECT_EQ(t.gpu(0)->name, "cuda0");
  EXPECT_NE(to_text(t).find("GPU links from: none: libweft-no-such-cuda.so.1 not found"), std::string::npos);
  // A library that is there but is no driver.
  add_gpu_links(&t, GpuDriverLibraries{WEFT_FAKE_NVML, "libweft-no-such-nvml.so.1"});
  EXPECT_NE(t.gpu_link_source.find("has no cuInit"), std::string::npos) << t.gpu_link_source;
}

TEST(Topology, ReadsThisMachinesGpuLinksOrSaysWhyNot) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_machine(true, &t, &error), Status::ok) << error;
  ASSERT_FALSE(t.gpu_link_source.empty());
  if (t.gpu_link_source.rfind("none: ", 0) == 0) {
    EXPECT_TRUE(t.links.empty());
  }
  ASSERT_EQ(load_machine(true, &t, &error, false), Status::ok) << error;
  EXPECT_EQ(t.gpu_link_source, "none: the GPU drivers were not asked");
  ASSERT_EQ(load_machine(false, &t, &error), Status::ok) << error;
  EXPECT_EQ(t.gpu_link_source, "none: PCI devices not read");
}

TEST(Topology, GpuLinksFromCudaAndNvml) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  t.links.clear();
  for (PciDevice& d : t.devices)
    if (d.kind == PciDevice::gpu) d.name = "10de:2330";  // as hwloc names a GPU it has no CUDA name for
  add_gpu_links(&t, GpuDriverLibraries{WEFT_FAKE_CUDA, WEFT_FAKE_NVML});
  EXPECT_EQ(t.gpu_link_source, "cuda driver (peer access) and nvml (nvlink lanes)");
  // The stand-in numbers the GPUs 2, 3, 0, 1 in bus order.
  ASSERT_EQ(t.gpu_count(), 4);
  EXPECT_EQ(t.gpu(0)->name, "cuda2");
  EXPECT_EQ(t.gpu(1)->name, "cuda3");
  EXPECT_EQ(t.gpu(2)->name, "cuda0");
  EXPECT_EQ(t.gpu(3)->name, "cuda1");
  // The same links as the described node, plus CUDA's performance ranks.
  ASSERT_EQ(t.links.size(), 4u);
  const std::string json = to_json(t);
  EXPECT_NE(json.find("{\"a\": 0, \"b\": 1, \"kind\": \"nvlink\", \"lanes\": 4, \"perf_rank\": 0}"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"a\": 0, \"b\": 2, \"kind\": \"pcie\", \"lanes\": 0, \"perf_rank\": 1}"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"a\": 1, \"b\": 3, \"kind\": \"pcie\", \"lanes\": 0, \"perf_rank\": 1}"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"a\": 2, \"b\": 3, \"kind\": \"nvlink\", \"lanes\": 4, \"perf_rank\": 0}"), std::string::npos) << json;
  const auto islands = t.gpu_islands();
  ASSERT_EQ(islands.size(), 2u);
  EXPECT_EQ(islands[0], (std::vector<int>{0, 1}));
  NodeTopology back;
  ASSERT_EQ(from_json_text(json, &back, &error), Status::ok) << error;
  EXPECT_EQ(to_json(back), json);
}

TEST(Topology, GpuLinksNameDevicesHwlocMissed) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  t.links.clear();
  // hwloc missed the GPU at ab; it lists a server's display controller CUDA does not know.
  t.devices.erase(std::find_if(t.devices.begin(), t.devices.end(), [](const PciDevice& d) { return d.name == "cuda3"; }));
  t.devices.insert(t.devices.begin(), PciDevice{PciDevice::gpu, "1a03:2000", "0000:03:00.0", 0, -1});
  add_gpu_links(&t, GpuDriverLibraries{WEFT_FAKE_CUDA, "libweft-no-such-nvml.so.1"});
  EXPECT_EQ(t.gpu_link_source, "cuda driver (peer access); nvlink lanes unknown: libweft-no-such-nvml.so.1 not found");
  ASSERT_EQ(t.gpu_count(), 5);
  EXPECT_EQ(t.gpu(0)->name, "1a03:2000");
  EXPECT_EQ(t.gpu(4)->name, "cuda1");
  EXPECT_EQ(t.gpu(4)->bus_id, "0000:ab:00.0");
  // Without NVML every peer pair is pcie: (1,2) and (3,4) in a switch, (1,3) and (2,4) across.
  ASSERT_EQ(t.links.size(), 4u);
  for (const GpuLink& l : t.links) {
    EXPECT_EQ(l.kind, "pcie");
    EXPECT_NE(l.a, 0);
  }
}

TEST(Topology, JobViewGroupsRanksByNode) {
  const std::vector<JobNode> nodes = nodes_of_job({0, 0, 1, 1, 0});
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].id, 0u);
  EXPECT_EQ(nodes[0].ranks, (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(nodes[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_TRUE(nodes_of_job({}).empty());
}

TEST(Topology, JobViewJsonAndTree) {
  NodeTopology t;
  std::string error;
  ASSERT_EQ(load_file(kSwitches, &t, &error), Status::ok) << error;
  std::vector<JobNode> nodes = nodes_of_job({0, 0, 0, 0, 1, 1});
  const std::string summary = node_summary_json(t);
  ASSERT_TRUE(is_json_object(summary)) << summary;
  EXPECT_FALSE(is_json_object("[1]"));
  EXPECT_FALSE(is_json_object(""));
  nodes[0].summary = summary;
  nodes[1].summary = summary;
  // Ranks 0-1 on NUMA 0 with GPUs 0 and 1, rank 2 on NUMA 1 with GPU 2, rank 3 unbound.
  for (const RankPlace& p : {RankPlace{0, "0-3", {0}, true, 0}, RankPlace{1, "4-7", {0}, true, 1},
                             RankPlace{2, "16-19", {1}, true, 2}, RankPlace{3, "0-63", {0, 1}, false, 3}}) {
    RankPlace back;
    ASSERT_TRUE(rank_place_from_json(rank_place_json(p), &back, &error)) << error;
    EXPECT_EQ(rank_place_json(back), rank_place_json(p));
    nodes[0].places.push_back(back);
  }
  RankPlace partial;
  EXPECT_FALSE(rank_place_from_json("{\"rank\": 1}", &partial, &error));
  EXPECT_NE(error.find("needs rank, cpus, numa, bound and gpu"), std::string::npos) << error;
  const std::string json = "{\"nodes\": " + job_nodes_json(nodes, t) + "}";
  Json doc;
  ASSERT_TRUE(parse_json(json, &doc, &error)) << error << json;
  const Json* list = json_member(doc, "nodes");
  ASSERT_TRUE(list && list->is_array() && list->size() == 2) << json;
  const Json& second = (*list)[1];
  EXPECT_EQ(second.at("ranks").size(), 2u);
  EXPECT_EQ(second.at("summary").at("gpus"), 4);
  EXPECT_EQ(json_member(second, "places"), nullptr);
  EXPECT_NE(json.find("\"by_numa\": [{\"numa\": [0], \"ranks\": [0, 1]}, {\"numa\": [0, 1], \"ranks\": [3]}, "
                      "{\"numa\": [1], \"ranks\": [2]}]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"by_gpu_island\": [{\"gpus\": [0, 1], \"ranks\": [0, 1]}, {\"gpus\": [2, 3], \"ranks\": [2, 3]}]"),
            std::string::npos) << json;
  const std::vector<std::string> lines = job_tree_lines(nodes, t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "node 0 (two-switch-node: 2 NUMA, 32 cores, 4 GPUs, 2 NICs): ranks 0-3; NUMA 0: ranks 0-1; "
                      "NUMA 0,1: ranks 3; NUMA 1: ranks 2; GPU island {0,1}: ranks 0-1; GPU island {2,3}: ranks 2-3");
  EXPECT_EQ(lines[1], "node 1 (two-switch-node: 2 NUMA, 32 cores, 4 GPUs, 2 NICs): ranks 4-5");
}
