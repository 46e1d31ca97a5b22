// Hierarchical reduce for communicators that span nodes: each node's ranks reduce to their node
// head (binomial tree), then the heads reduce to the root (binomial tree). The root stands in
// for its node's leader, so the result needs no last hop inside its node. Only the heads
// cross the network, once per level. Commutative operations only (the groups do not follow
// rank order).
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/rooted.h"

namespace weft::coll {

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return a.red.commutative && !a.red.user && spans_nodes(c);
}

// Every rank must estimate alike: the fullest node sets the tree depth.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  const double n = double(a.bytes), reduce = n * m.gamma_us_per_byte;
  return ceil_log2(h.largest_node) * (node_level(m).step_us(n) + reduce) +
         ceil_log2(h.node_count()) * (net_level(m).step_us(n) + reduce);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("reduce:hier");
  s->set_reduction(a.red);
  const Hierarchy& h = hierarchy(c);
  const RootedGroups g = rooted_groups(h, c, a.root);
  // The node's sum: in the result buffer at the root (recv is significant there only), in
  // scratch at the other heads; the other ranks keep no result.
  void* node_sum = a.recv;
  if (g.is_head && c.rank != a.root) node_sum = s->scratch(a.bytes);
  auto within = build_reduce_binomial(group_view(h.node, c.rank), a.send, node_sum, a.count, a.red,
                                      g.node_root);
  s->append_mapped(*within, h.node);
  if (g.is_head) {
    auto across = build_reduce_binomial(group_view(g.heads, c.rank), node_sum, node_sum, a.count,
                                        a.red, g.root_node);
    s->append_mapped(*across, g.heads);
  }
  return s;
}

}  // namespace

extern const Algorithm reduce_hier{"hier", Collective::reduce, supports, estimate, build};

}  // namespace weft::coll
