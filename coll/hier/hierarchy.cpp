// Builds a communicator's hierarchy from its members' node ids (Comm::nodes).
#include "coll/hier/hierarchy.h"

#include <algorithm>
#include <map>
#include <string>

#include "coll/comm_state.h"

namespace weft::coll {

bool spans_nodes(const Comm& c) {
  if (c.single_node || c.nodes.size() != size_t(c.size)) return false;
  return std::any_of(c.nodes.begin(), c.nodes.end(), [&](uint32_t n) { return n != c.nodes[0]; });
}

const Hierarchy& hierarchy(const Comm& c) {
  CommState& st = state_of(c);
  if (st.hier) return *st.hier;
  auto h = std::make_shared<Hierarchy>();
  h->spans_nodes = spans_nodes(c);
  std::map<uint32_t, std::vector<int>> members;  // node id -> its ranks in order
  for (int r = 0; r < int(c.nodes.size()); ++r) members[c.nodes[size_t(r)]].push_back(r);
  if (members.empty()) members[0].push_back(c.rank);  // no node ids: one node
  std::vector<const std::vector<int>*> by_first;
  for (const auto& [id, ranks] : members) by_first.push_back(&ranks);
  std::sort(by_first.begin(), by_first.end(), [](auto* a, auto* b) { return a->front() < b->front(); });
  h->uniform = true;
  for (const auto* ranks : by_first) {
    h->leaders.push_back(ranks->front());
    h->largest_node = std::max(h->largest_node, int(ranks->size()));
    h->uniform = h->uniform && ranks->size() == by_first.front()->size();
    if (std::find(ranks->begin(), ranks->end(), c.rank) != ranks->end()) h->node = *ranks;
  }
  h->node_index = int(std::find(h->node.begin(), h->node.end(), c.rank) - h->node.begin());
  if (h->uniform)
    for (const auto* ranks : by_first) h->column.push_back((*ranks)[size_t(h->node_index)]);
  auto node = std::make_shared<Comm>();
  node->context_id = c.context_id;
  node->rank = h->node_index;
  node->size = int(h->node.size());
  for (int r : h->node) node->world_ranks.push_back(r < int(c.world_ranks.size()) ? c.world_rank(r) : r);
  node->name = c.label() + " (the node of rank " + std::to_string(h->node.front()) + ")";
  node->single_node = true;
  node->nodes.assign(h->node.size(), c.nodes.empty() ? 0 : c.nodes[size_t(c.rank)]);
  h->node_comm = std::move(node);
  st.hier = h;
  return *h;
}

Hierarchy::~Hierarchy() {
  // As a member-wise destruction would: the GPU levels' state first, then the node
  // communicator's own (its segment, its GPU workspace).
  gpu.reset();
  if (node_comm) release(*node_comm);
}

Comm group_view(const std::vector<int>& ranks, int me) {
  Comm v;
  v.size = int(ranks.size());
  auto it = std::find(ranks.begin(), ranks.end(), me);
  v.rank = it == ranks.end() ? -1 : int(it - ranks.begin());
  return v;
}

Level node_level(const CostModel& m) {
  if (m.node_alpha_us > 0) return {m.node_alpha_us, m.node_beta_us_per_byte};
  return {m.alpha_us, m.beta_us_per_byte};
}

Level net_level(const CostModel& m) {
  if (m.net_alpha_us > 0) return {m.net_alpha_us, m.net_beta_us_per_byte};
  return {m.alpha_us, m.beta_us_per_byte};
}

}  // namespace weft::coll
