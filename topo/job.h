// The job's hierarchy: job -> nodes (the launcher's node ids, each node's ranks and a short
// summary its first rank published) -> on one node, its ranks grouped by NUMA binding and by GPU
// island. Plain data and pure functions: the MPI layer gathers the pieces through the bootstrap.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "topo/topology.h"

namespace weft::topo {

// Where a rank runs on its node.
struct RankPlace {
  int rank = -1;
  std::string cpus;       // binding, list form
  std::vector<int> numa;  // NUMA nodes the binding covers
  bool bound = false;
  int gpu = -1;           // index among the node's GPUs (-1: none)
};

struct JobNode {
  uint32_t id = 0;
  std::vector<int> ranks;         // ascending
  std::string summary;            // node_summary_json from its first rank; empty when unknown
  std::vector<RankPlace> places;  // the ranks' places, known for the reader's own node only
};

// Groups ranks by node: node_of_rank[r] is rank r's node id. Nodes come in ascending id order.
std::vector<JobNode> nodes_of_job(const std::vector<uint32_t>& node_of_rank);

// What ranks exchange: one-line JSON objects.
std::string node_summary_json(const NodeTopology& t);
std::string rank_place_json(const RankPlace& p);
bool rank_place_from_json(std::string_view text, RankPlace* out, std::string* error);
// Whether text is one JSON object (a peer's summary is checked before it is copied into a file).
bool is_json_object(std::string_view text);

// The "nodes" array of a topology dump: every node with its ranks and summary; a node with
// places also lists them and groups them by NUMA set and by GPU island of `local` (its topology).
std::string job_nodes_json(const std::vector<JobNode>& nodes, const NodeTopology& local);
// The same tree in lines for a log: "node 1: ranks 2-3; ..." (one line per node).
std::vector<std::string> job_tree_lines(const std::vector<JobNode>& nodes, const NodeTopology& local);

}  // namespace weft::topo
