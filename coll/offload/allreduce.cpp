// Offloaded allreduce: each node's ranks reduce to their leader (binomial tree), the leader
// hands the node's vector to the offload plugin, which returns the reduction over every node
// (one trip up the switch tree and one down, however many nodes), and each leader broadcasts
// the status and the result in its node. A candidate of the selector like allreduce:hier.
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/offload/offload.h"

namespace weft::coll {

namespace {

double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!offload::supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const auto [node, l, depth, n] = offload::node_terms(a, ctx, m);
  return depth * (2 * node.step_us(n) + n * m.gamma_us_per_byte) + depth * node.alpha_us +
         offload::fabric_us(c, n, m);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allreduce:offload", a.red);
  const Hierarchy& h = hierarchy(c);
  const Comm node = group_view(h.node, c.rank);
  // coll::plan has put the input in recv.
  auto up = build_reduce_binomial(node, a.recv, a.recv, a.count, a.red, 0);
  s->append_mapped(*up, h.node);
  weft_offload_op_args args{};
  args.coll = WEFT_OFFLOAD_ALLREDUCE;
  (void)offload::plugin_dtype(a.red.type, &args.dtype);  // usable() checked both
  (void)offload::plugin_op(a.red.op, &args.op);
  args.send = a.recv;
  args.recv = a.recv;
  args.count = a.count;
  offload::append_leader_operation(*s, c, args);
  auto down = build_bcast_binomial(node, a.recv, a.bytes, 0);
  s->append_mapped(*down, h.node);
  return s;
}

}  // namespace

extern const Algorithm allreduce_offload{"offload", Collective::allreduce, offload::supports,
    offload::ruled_estimate<estimate>, build};

}  // namespace weft::coll
