// Hierarchical broadcast for communicators that span nodes: the root sends to the other nodes'
// leaders (binomial tree among the node heads, the root standing in for its own node's
// leader), then each head broadcasts within its node (binomial tree). Only the heads cross the
// network, each message once: log2(nodes) network steps instead of log2(ranks).
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/rooted.h"

namespace weft::coll {

namespace {

// Every rank must estimate alike: the fullest node sets the tree depth.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!spans_nodes(c)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  const double n = double(a.bytes);
  return ceil_log2(h.node_count()) * net_level(m).step_us(n) +
         ceil_log2(h.largest_node) * node_level(m).step_us(n);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("bcast:hier");
  const Hierarchy& h = hierarchy(c);
  const RootedGroups g = rooted_groups(h, c, a.root);
  if (g.is_head) {
    auto across = build_bcast_binomial(group_view(g.heads, c.rank), a.recv, a.bytes, g.root_node);
    s->append_mapped(*across, g.heads);
  }
  auto within = build_bcast_binomial(group_view(h.node, c.rank), a.recv, a.bytes, g.node_root);
  s->append_mapped(*within, h.node);
  return s;
}

}  // namespace

extern const Algorithm bcast_hier{"hier", Collective::bcast, supports_spanning, estimate, build};

}  // namespace weft::coll
