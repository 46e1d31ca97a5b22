#include "job.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "json.h"

namespace weft::topo {

namespace {

std::string int_array(const std::vector<int>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + std::to_string(v[i]);
  return o + "]";
}

// "0-3,8" for the ascending ranks {0,1,2,3,8}.
std::string ranges(const std::vector<int>& v) {
  std::string o;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    o += (o.empty() ? "" : ",") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return o;
}

// The GPU island holding gpu (its index among the islands), or -1.
int island_of(const std::vector<std::vector<int>>& islands, int gpu) {
  for (size_t i = 0; i < islands.size(); ++i)
    if (std::find(islands[i].begin(), islands[i].end(), gpu) != islands[i].end()) return int(i);
  return -1;
}

// Ranks grouped by the NUMA set of their binding, and by the island of their GPU.
struct LocalGroups {
  std::map<std::vector<int>, std::vector<int>> by_numa;
  std::map<int, std::vector<int>> by_island;
};

LocalGroups group_places(const std::vector<RankPlace>& places, const std::vector<std::vector<int>>& islands) {
  LocalGroups g;
  for (const RankPlace& p : places) {
    g.by_numa[p.numa].push_back(p.rank);
    if (const int i = island_of(islands, p.gpu); i >= 0) g.by_island[i].push_back(p.rank);
  }
  return g;
}

}  // namespace

std::vector<JobNode> nodes_of_job(const std::vector<uint32_t>& node_of_rank) {
  std::map<uint32_t, std::vector<int>> ranks;
  for (size_t r = 0; r < node_of_rank.size(); ++r) ranks[node_of_rank[r]].push_back(int(r));
  std::vector<JobNode> nodes;
  for (auto& [id, members] : ranks) nodes.push_back(JobNode{id, std::move(members), {}, {}});
  return nodes;
}

std::string node_summary_json(const NodeTopology& t) {
  std::string o = "{\"hostname\": ";
  json_quote(t.hostname, &o);
  const int nics = int(std::count_if(t.devices.begin(), t.devices.end(),
                                     [](const PciDevice& d) { return d.kind == PciDevice::nic; }));
  o += ", \"packages\": " + std::to_string(t.packages) + ", \"cores\": " + std::to_string(t.cores) +
       ", \"numa_nodes\": " + std::to_string(t.numa.size()) + ", \"gpus\": " + std::to_string(t.gpu_count()) +
       ", \"nics\": " + std::to_string(nics) + ", \"gpu_islands\": [";
  const auto islands = t.gpu_islands();
  for (size_t i = 0; i < islands.size(); ++i) o += (i ? ", " : "") + int_array(islands[i]);
  o += "], \"gpu_link_source\": ";
  json_quote(t.gpu_link_source, &o);
  return o + "}";
}

std::string rank_place_json(const RankPlace& p) {
  std::string o = "{\"rank\": " + std::to_string(p.rank) + ", \"cpus\": ";
  json_quote(p.cpus, &o);
  return o + ", \"numa\": " + int_array(p.numa) + ", \"bound\": " + (p.bound ? "true" : "false") +
         ", \"gpu\": " + std::to_string(p.gpu) + "}";
}

bool rank_place_from_json(std::string_view text, RankPlace* out, std::string* error) {
  Json j;
  if (!parse_json(text, &j, error)) return false;
  const Json *rank = json_member(j, "rank"), *cpus = json_member(j, "cpus"), *numa = json_member(j, "numa"),
             *bound = json_member(j, "bound"), *gpu = json_member(j, "gpu");
  if (!rank || !rank->is_number() || !cpus || !cpus->is_string() || !numa || !numa->is_array() || !bound ||
      !bound->is_boolean() || !gpu || !gpu->is_number()) {
    *error = "a rank's place needs rank, cpus, numa, bound and gpu";
    return false;
  }
  // A peer's numbers become ints only when they are ints: a cast of 1e300 is undefined.
  auto small_int = [](const Json& n) {
    if (!n.is_number()) return false;
    const double v = n.get<double>();
    return v >= -1e9 && v <= 1e9 && v == double(int(v));
  };
  if (!small_int(*rank) || !small_int(*gpu)) {
    *error = "a rank's place has a rank or gpu that is not an integer";
    return false;
  }
  RankPlace p{int(rank->get<double>()), cpus->get_ref<const std::string&>(), {}, bound->get<bool>(),
              int(gpu->get<double>())};
  for (const Json& n : *numa) {
    if (!small_int(n)) {
      *error = "a rank's place lists NUMA nodes as numbers";
      return false;
    }
    p.numa.push_back(int(n.get<double>()));
  }
  *out = std::move(p);
  return true;
}

bool is_json_object(std::string_view text) {
  Json j;
  std::string error;
  return parse_json(text, &j, &error) && j.is_object();
}

std::string job_nodes_json(const std::vector<JobNode>& nodes, const NodeTopology& local) {
  const auto islands = local.gpu_islands();
  std::string o = "[";
  for (size_t n = 0; n < nodes.size(); ++n) {
    const JobNode& node = nodes[n];
    o += n ? ",\n    " : "\n    ";
    o += "{\"node_id\": " + std::to_string(node.id) + ", \"ranks\": " + int_array(node.ranks);
    if (!node.summary.empty()) o += ", \"summary\": " + node.summary;
    if (!node.places.empty()) {
      o += ",\n     \"places\": [";
      for (size_t i = 0; i < node.places.size(); ++i) o += (i ? ", " : "") + rank_place_json(node.places[i]);
      const LocalGroups g = group_places(node.places, islands);
      o += "],\n     \"by_numa\": [";
      bool first = true;
      for (const auto& [numa, ranks] : g.by_numa) {
        o += std::string(first ? "" : ", ") + "{\"numa\": " + int_array(numa) + ", \"ranks\": " + int_array(ranks) + "}";
        first = false;
      }
      o += "],\n     \"by_gpu_island\": [";
      first = true;
      for (const auto& [island, ranks] : g.by_island) {
        o += std::string(first ? "" : ", ") + "{\"gpus\": " + int_array(islands[size_t(island)]) +
             ", \"ranks\": " + int_array(ranks) + "}";
        first = false;
      }
      o += "]";
    }
    o += "}";
  }
  return o + "]";
}

std::vector<std::string> job_tree_lines(const std::vector<JobNode>& nodes, const NodeTopology& local) {
  const auto islands = local.gpu_islands();
  std::vector<std::string> lines;
  for (const JobNode& node : nodes) {
    std::string l = "node " + std::to_string(node.id);
    Json s;
    std::string error;
    if (!node.summary.empty() && parse_json(node.summary, &s, &error)) {
      auto number = [&](const char* key) {
        const Json* v = json_member(s, key);
        if (!v || !v->is_number()) return std::string("?");
        const double n = v->get<double>();
        return n >= 0 && n < 1e15 ? std::to_string(static_cast<long long>(n)) : std::string("?");
      };
      const Json* host = json_member(s, "hostname");
      const std::string hostname = host && host->is_string() ? host->get<std::string>() : std::string("?");
      l += " (" + hostname + ": " + number("numa_nodes") +
           " NUMA, " + number("cores") + " cores, " + number("gpus") + " GPUs, " + number("nics") + " NICs)";
    }
    l += ": ranks " + ranges(node.ranks);
    if (!node.places.empty()) {
      const LocalGroups g = group_places(node.places, islands);
      for (const auto& [numa, ranks] : g.by_numa) {
        std::string set;
        for (size_t i = 0; i < numa.size(); ++i) set += (i ? "," : "") + std::to_string(numa[i]);
        l += "; NUMA " + (set.empty() ? std::string("?") : set) + ": ranks " + ranges(ranks);
      }
      for (const auto& [island, ranks] : g.by_island) {
        std::string gpus;
        for (size_t i = 0; i < islands[size_t(island)].size(); ++i)
          gpus += (i ? "," : "") + std::to_string(islands[size_t(island)][i]);
        l += "; GPU island {" + gpus + "}: ranks " + ranges(ranks);
      }
    }
    lines.push_back(std::move(l));
  }
  return lines;
}

}  // namespace weft::topo
