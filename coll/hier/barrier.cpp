// Hierarchical barrier for communicators that span nodes: each node's ranks report to their
// leader up a binomial tree, the leaders run a dissemination barrier among themselves, and
// each leader releases its node down the same tree. Zero-byte messages; only the leaders cross
// the network, log2(nodes) times, where a flat barrier has every rank cross it log2(ranks)
// times.
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"

namespace weft::coll {

namespace {

// Every rank must estimate alike: the fullest node sets the tree depth.
double estimate(const CollArgs&, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!spans_nodes(c)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  return 2 * ceil_log2(h.largest_node) * node_level(m).alpha_us +
         ceil_log2(h.node_count()) * net_level(m).alpha_us;
}

std::shared_ptr<Schedule> build(const CollArgs&, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("barrier:hier");
  const Hierarchy& h = hierarchy(c);
  const int l = int(h.node.size()), me = h.node_index;
  auto rank_of = [&](int index) { return h.node[size_t(index)]; };
  // Within the node, the tree of barrier:tree: the parent is the index without my lowest set
  // bit, the children are me + m for every power of two m below it (the leader: below l).
  int low = 1;
  while (low < l && !(me & low)) low <<= 1;
  const bool has_children = me + 1 < l && low > 1;
  if (has_children) {
    s->next_round();
    for (int m = 1; m < low && me + m < l; m <<= 1) s->recv(rank_of(me + m), nullptr, 0);
  }
  if (h.is_leader()) {
    auto across = build_barrier_dissemination(group_view(h.leaders, c.rank));
    s->append_mapped(*across, h.leaders);
  } else {  // the report up and the wait for the release share a round
    s->next_round();
    s->send(rank_of(me - low), nullptr, 0);
    s->recv(rank_of(me - low), nullptr, 0);
  }
  if (has_children) {
    s->next_round();
    for (int m = low >> 1; m > 0; m >>= 1)  // the largest subtree first
      if (me + m < l) s->send(rank_of(me + m), nullptr, 0);
  }
  return s;
}

}  // namespace

extern const Algorithm barrier_hier{"hier", Collective::barrier, supports_spanning, estimate, build};

}  // namespace weft::coll
