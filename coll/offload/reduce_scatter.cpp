// Offloaded reduce-scatter: each node's ranks reduce the whole vector to their leader
// (binomial tree), the leader asks the offload plugin for the reduced elements its node's
// ranks own (the range from the first to the last of their blocks), and scatters them.
#include <algorithm>
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/offload/offload.h"
#include "coll/reduce_scatter/segments.h"

namespace weft::coll {

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return a.counts.size() == size_t(c.size) && offload::supports(a, ctx);
}

double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const auto [node, l, depth, n] = offload::node_terms(a, ctx, m);
  return depth * (node.step_us(n) + n * m.gamma_us_per_byte) + depth * node.alpha_us +
         offload::fabric_us(c, n, m) + (l - 1) * node.step_us(n / c.size);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("reduce_scatter:offload", a.red);
  const Hierarchy& h = hierarchy(c);
  const Comm node = group_view(h.node, c.rank);
  const size_t es = a.red.elem_size;
  const std::vector<size_t> start = segment_starts(a.counts);
  const size_t total = start[size_t(c.size)];
  // The node's ranks own [lo, hi) of the result, maybe with other nodes' blocks between.
  size_t lo = total, hi = 0;
  for (int r : h.node) {
    lo = std::min(lo, start[size_t(r)]);
    hi = std::max(hi, start[size_t(r) + 1]);
  }
  if (lo > hi) lo = hi;
  char* work = s->scratch(total * es);
  char* result = s->scratch((hi - lo) * es);
  auto up = build_reduce_binomial(node, a.send, work, total, a.red, 0);
  s->append_mapped(*up, h.node);
  weft_offload_op_args args{};
  args.coll = WEFT_OFFLOAD_REDUCE_SCATTER;
  (void)offload::plugin_dtype(a.red.type, &args.dtype);
  (void)offload::plugin_op(a.red.op, &args.op);
  args.send = work;
  args.recv = result;
  args.count = total;
  args.recv_offset = lo;
  args.recv_count = hi - lo;
  offload::append_leader_operation(*s, c, args);
  std::vector<Block> blocks;
  for (int r : h.node) blocks.push_back({(start[size_t(r)] - lo) * es, a.counts[size_t(r)] * es});
  auto down = build_scatter_linear(node, result, blocks, a.recv, a.counts[size_t(c.rank)] * es, 0);
  s->append_mapped(*down, h.node);
  return s;
}

}  // namespace

extern const Algorithm reduce_scatter_offload{"offload", Collective::reduce_scatter, supports,
    offload::ruled_estimate<estimate>, build};

}  // namespace weft::coll
