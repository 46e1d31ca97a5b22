// Offloaded barrier: each node's ranks meet (dissemination), the leader posts a barrier to the
// offload plugin, which completes once every leader has posted, and the leader's status
// broadcast releases its node.
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/offload/offload.h"

namespace weft::coll {

namespace {

double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!offload::supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const double depth = ceil_log2(hierarchy(c).largest_node);
  return 2 * depth * node_level(m).alpha_us + offload::fabric_us(c, 0, m);
}

std::shared_ptr<Schedule> build(const CollArgs&, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("barrier:offload");
  const Hierarchy& h = hierarchy(c);
  auto meet = build_barrier_dissemination(group_view(h.node, c.rank));
  s->append_mapped(*meet, h.node);
  weft_offload_op_args args{};
  args.coll = WEFT_OFFLOAD_BARRIER;
  offload::append_leader_operation(*s, c, args);  // its status broadcast releases the node
  return s;
}

}  // namespace

extern const Algorithm barrier_offload{"offload", Collective::barrier, offload::supports,
    offload::ruled_estimate<estimate>, build};

}  // namespace weft::coll
