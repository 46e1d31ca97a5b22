// The groups of a rooted hierarchical collective (bcast, reduce): the root stands in for its
// node's leader, so its data crosses the network straight from (or to) it and never takes an
// extra hop inside its node.
#pragma once
#include <algorithm>
#include <vector>

#include "coll/hier/hierarchy.h"

namespace weft::coll {

struct RootedGroups {
  std::vector<int> heads;  // the leaders, with the root in place of its node's leader
  int root_node = 0;       // the root's node: its index in heads
  int node_root = 0;       // this rank's node head: its index in Hierarchy::node
  bool is_head = false;    // this rank is in heads
};

inline RootedGroups rooted_groups(const Hierarchy& h, const Comm& c, int root) {
  RootedGroups g;
  g.heads = h.leaders;
  const uint32_t node_of_root = c.nodes[size_t(root)];
  for (int i = 0; i < int(g.heads.size()); ++i)
    if (c.nodes[size_t(g.heads[size_t(i)])] == node_of_root) g.root_node = i;
  g.heads[size_t(g.root_node)] = root;
  if (c.nodes[size_t(c.rank)] == node_of_root)
    g.node_root = int(std::find(h.node.begin(), h.node.end(), root) - h.node.begin());
  g.is_head = c.rank == h.node[size_t(g.node_root)];
  return g;
}

}  // namespace weft::coll
