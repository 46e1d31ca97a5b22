// Hierarchical allgather(v) for communicators that span nodes: each node's ranks send their
// blocks to their leader (linear gather), the leaders pass their nodes' bundles around a ring,
// and each leader broadcasts the whole result to its node (binomial tree). Only the leaders
// cross the network, with one message per node bundle instead of one per block.
//
// The phases work on the blocks packed in node order (the nodes in leader order, a node's
// ranks in rank order), so that every message's size follows from the block sizes alone, which
// all ranks share (their offsets are each rank's own). A rank whose receive buffer already
// holds the blocks in that order, without gaps (the usual case: nodes of consecutive ranks),
// works in it directly; any other packs in scratch and unpacks at the end.
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/hier/packing.h"

namespace weft::coll {

namespace {

// Every rank must estimate alike: the fullest node sets the gather's fan-in and the tree depth.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!spans_nodes(c)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  const Level node = node_level(m), net = net_level(m);
  const double n = double(a.bytes), block = n / c.size, l = h.largest_node, q = h.node_count();
  return (l - 1) * node.step_us(block) + (q - 1) * net.alpha_us + (q - 1) / q * n * net.beta_us_per_byte +
         ceil_log2(h.largest_node) * node.step_us(n);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allgather:hier");
  const Hierarchy& h = hierarchy(c);
  const PackedResult r = append_gather_to_leader(*s, h, c, a);
  if (h.is_leader()) {
    const Block& mine = r.k.bundles[size_t(r.k.my_node)];
    auto across = build_allgather_ring(group_view(h.leaders, c.rank), r.packed + mine.offset, r.packed,
                                       r.k.bundles);
    s->append_mapped(*across, h.leaders);
  }
  append_bcast_from_leader(*s, h, c, a, r);
  return s;
}

}  // namespace

extern const Algorithm allgather_hier{"hier", Collective::allgather, supports_spanning, estimate, build};

}  // namespace weft::coll
