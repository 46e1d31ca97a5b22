// The node topology at init. Reading it costs milliseconds (tens with PCI devices, more with
// GPU drivers), so it is read only when asked for: WEFT_TOPO_FILE (use a described node),
// WEFT_TOPO_DUMP (write what this job sees), or INFO logging of the topo subsystem (report each
// rank's binding and the job's nodes).
#include "pt2pt/job_topology.h"

#include <algorithm>
#include <cstdio>

#include "runtime/log.h"
#include "topo/job.h"

namespace weft {

namespace {

constexpr const char* kNodeSummaryKey = "weft.topo.node";
constexpr const char* kPlaceKey = "weft.topo.place";

// The job's nodes from the launcher's node ids (no exchange needed); empty if unknown.
std::vector<topo::JobNode> job_nodes(Bootstrap& boot) {
  std::vector<uint32_t> node_of_rank(size_t(boot.size()), 0);
  for (int r = 0; r < boot.size(); ++r)
    if (boot.node_of(r, &node_of_rank[size_t(r)]) != Status::ok) return {};
  return topo::nodes_of_job(node_of_rank);
}

Status publish(Bootstrap& boot, const char* key, const std::string& value) {
  return boot.put(key, value.data(), value.size());
}

std::string fetch(Bootstrap& boot, int rank, const char* key) {
  std::vector<char> blob;
  if (boot.get(rank, key, &blob) != Status::ok) return {};
  return std::string(blob.begin(), blob.end());
}

// Every rank publishes its place and each node's first rank its node's summary; one launcher
// fence later, the nodes carry the summaries and this node's ranks their places. The fence is
// collective: every rank of the job must come here (the same WEFT_TOPO_DUMP for all ranks).
void exchange_places(Bootstrap& boot, const topo::NodeTopology* t, const topo::RankPlace& mine,
                     std::vector<topo::JobNode>* nodes) {
  Status s = publish(boot, kPlaceKey, topo::rank_place_json(mine));
  const auto& peers = boot.local_peers();
  const bool first_of_node = peers.empty() || *std::min_element(peers.begin(), peers.end()) == boot.rank();
  if (s == Status::ok && first_of_node) {
    topo::NodeTopology unknown;
    unknown.hostname = boot.hostname();
    s = publish(boot, kNodeSummaryKey, topo::node_summary_json(t ? *t : unknown));
  }
  // Even after a failed put, the fence keeps this rank in step with the others.
  if (boot.exchange() != Status::ok || s != Status::ok) {
    WEFT_WARN(Subsys::topo, "rank %d cannot exchange topology summaries; the job view lists node ids and ranks only",
              boot.rank());
    return;
  }
  for (topo::JobNode& node : *nodes) {
    if (node.ranks.empty()) continue;
    const std::string summary = fetch(boot, node.ranks.front(), kNodeSummaryKey);
    if (topo::is_json_object(summary)) node.summary = summary;
    else WEFT_WARN(Subsys::topo, "no topology summary from rank %d (first of node %u)", node.ranks.front(), node.id);
    if (node.id != boot.node_id()) continue;
    for (int r : node.ranks) {
      topo::RankPlace p;
      std::string error;
      if (topo::rank_place_from_json(fetch(boot, r, kPlaceKey), &p, &error)) node.places.push_back(std::move(p));
      else WEFT_WARN(Subsys::topo, "no usable place from rank %d: %s", r, error.c_str());
    }
  }
}

void write_dump(const std::string& pattern, const Bootstrap& boot, const topo::NodeTopology& t,
                const topo::Binding& binding, int gpu, const std::vector<topo::JobNode>& nodes) {
  std::string json = topo::to_json(t);
  // This rank's place in the job, after the node's own fields (readers of topology files
  // ignore it).
  std::string job = "  \"job\": {\"rank\": " + std::to_string(boot.rank()) + ", \"size\": " +
                    std::to_string(boot.size()) + ", \"node_id\": " + std::to_string(boot.node_id()) +
                    ", \"local_rank\": " + std::to_string(boot.local_rank()) + ", \"local_ranks\": [";
  for (size_t i = 0; i < boot.local_peers().size(); ++i) job += (i ? ", " : "") + std::to_string(boot.local_peers()[i]);
  job += "], \"binding\": ";
  topo::json_quote(binding.cpus, &job);
  job += ", \"gpu\": " + std::to_string(gpu) + ",\n  \"nodes\": " + topo::job_nodes_json(nodes, t) + "}\n}\n";
  json.resize(json.rfind('\n', json.size() - 2));  // drop the closing brace line
  json += ",\n" + job;
  const std::string path = expand_file_pattern(pattern, boot.rank());
  if (FILE* f = fopen(path.c_str(), "w")) {
    fputs(json.c_str(), f);
    fclose(f);
    WEFT_INFO(Subsys::topo, "topology written to %s", path.c_str());
  } else {
    WEFT_WARN(Subsys::topo, "WEFT_TOPO_DUMP: cannot write %s", path.c_str());
  }
}

}  // namespace

Status load_job_topology(const Config& cfg, Bootstrap& boot, std::shared_ptr<const topo::NodeTopology>* out) {
  const std::string file(cfg.value("WEFT_TOPO_FILE")), dump(cfg.value("WEFT_TOPO_DUMP"));
  const bool report = log_enabled(LogLevel::info, Subsys::topo);
  if (file.empty() && dump.empty() && !report) return Status::ok;

  auto t = std::make_shared<topo::NodeTopology>();
  std::string error;
  // The GPU drivers are asked only for a dump (their answer is what it adds) and not against
  // WEFT_CUDA=off.
  Status s = file.empty() ? topo::load_machine(!dump.empty(), t.get(), &error, cfg.value("WEFT_CUDA") != "off")
                          : topo::load_file(file, t.get(), &error);
  if (s != Status::ok) {
    if (!file.empty()) {
      set_error_detail("WEFT_TOPO_FILE: " + error);
      return Status::invalid_arg;
    }
    WEFT_WARN(Subsys::topo, "cannot read this node's topology: %s", error.c_str());
    t.reset();
  }
  topo::Binding binding;
  if (topo::current_binding(&binding, &error) != Status::ok) binding.cpus = "unknown (" + error + ")";
  // Without CUDA device selection yet, a rank is taken to use GPU local_rank mod GPUs.
  const int gpus = t ? t->gpu_count() : 0;
  const int gpu = gpus ? boot.local_rank() % gpus : -1;
  std::string numa;
  for (size_t i = 0; i < binding.numa.size(); ++i) numa += (i ? "," : "") + std::to_string(binding.numa[i]);
  WEFT_INFO(Subsys::topo, "%s; rank %d %s cpus %s (NUMA %s)%s", t ? t->source.c_str() : "no topology", boot.rank(),
            binding.bound ? "bound to" : "not bound, may run on", binding.cpus.c_str(), numa.c_str(),
            gpu >= 0 ? (", gpu " + std::to_string(gpu)).c_str() : "");
  if (t) {
    // One warning per rank, naming every device the binding is far from.
    const bool uses_network = boot.local_size() < boot.size();
    const std::string advice = topo::binding_advice(*t, binding, gpu, uses_network);
    if (!advice.empty()) WEFT_WARN(Subsys::topo, "rank %d is %s", boot.rank(), advice.c_str());
    if (boot.rank() == 0 || boot.local_rank() == 0)
      WEFT_INFO(Subsys::topo, "gpu links from: %s", t->gpu_link_source.c_str());
  }

  // The job view goes to the dump and, from rank 0, to the INFO log.
  std::vector<topo::JobNode> nodes;
  if (!dump.empty() || boot.rank() == 0) nodes = job_nodes(boot);
  if (!dump.empty()) {
    const topo::RankPlace mine{boot.rank(), binding.cpus, binding.numa, binding.bound, gpu};
    exchange_places(boot, t.get(), mine, &nodes);
  }
  if (t && boot.rank() == 0)
    for (const std::string& line : topo::job_tree_lines(nodes, *t)) WEFT_INFO(Subsys::topo, "job: %s", line.c_str());
  if (t && !dump.empty() && (dump.find("%r") != std::string::npos || boot.local_rank() == 0))
    write_dump(dump, boot, *t, binding, gpu, nodes);
  if (t) *out = std::move(t);
  return Status::ok;
}

}  // namespace weft
