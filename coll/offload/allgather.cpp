// Offloaded allgather(v): each node's ranks send their blocks to their leader (linear
// gather, packed in node order as allgather:hier packs them), the leader hands its node's
// bundle to the offload plugin, which returns every node's bundle, and each leader broadcasts
// the status and the whole result in its node.
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/hier/packing.h"
#include "coll/offload/offload.h"

namespace weft::coll {

namespace {

double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!offload::supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const auto [node, l, depth, n] = offload::node_terms(a, ctx, m);
  return (l - 1) * node.step_us(n / c.size) + offload::fabric_us(c, n, m) + depth * node.alpha_us +
         depth * node.step_us(n);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allgather:offload");
  const Hierarchy& h = hierarchy(c);
  const PackedResult r = append_gather_to_leader(*s, h, c, a);
  const Block& mine = r.k.bundles[size_t(r.k.my_node)];
  weft_offload_op_args args{};
  args.coll = WEFT_OFFLOAD_ALLGATHER;
  args.send = r.packed + mine.offset;  // in the result, at its own place: rewritten with the same bytes
  args.recv = r.packed;
  args.send_offset = mine.offset;
  args.send_bytes = mine.bytes;
  args.total_bytes = r.k.total();
  offload::append_leader_operation(*s, c, args);
  append_bcast_from_leader(*s, h, c, a, r);
  return s;
}

}  // namespace

extern const Algorithm allgather_offload{"offload", Collective::allgather, offload::supports,
    offload::ruled_estimate<estimate>, build};

}  // namespace weft::coll
