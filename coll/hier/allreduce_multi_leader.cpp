// Multi-leader hierarchical allreduce for large messages on communicators whose nodes hold
// equally many ranks (L each): a ring reduce-scatter inside each node leaves each rank owning
// 1/L of the node's sum; the ranks owning the same part on every node (a column) allreduce it
// across nodes, L columns at once; a ring allgather inside each node spreads the parts. Every
// rank leads a part, so the network phase moves n/L per rank instead of n through one leader
// (one leader per NUMA node or GPU island, on machines with a NIC each, is the same shape).
// Commutative operations only.
#include <algorithm>
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"

namespace weft::coll {

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) {
  if (!a.red.commutative || a.red.user || !spans_nodes(ctx.comm)) return false;
  const Hierarchy& h = hierarchy(ctx.comm);
  return h.uniform && h.largest_node > 1 && a.count >= size_t(h.largest_node);
}

struct Costs {
  double ring, doubling;  // the column allreduce by either algorithm
};

// The column phase: the node's ranks send at once, so they share its network link (beta times L).
Costs column_costs(double part, int nodes, int per_node, const CostModel& m) {
  const Level net = net_level(m);
  const double beta = net.beta_us_per_byte * per_node, q = nodes;
  Costs c;
  c.ring = 2 * (q - 1) * net.alpha_us + 2 * (q - 1) / q * part * beta + (q - 1) / q * part * m.gamma_us_per_byte;
  const int rounds = recursive_doubling_rounds(nodes);
  c.doubling = rounds * (net.alpha_us + part * (beta + m.gamma_us_per_byte));
  return c;
}

double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  if (!supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(ctx.comm);
  const Level node = node_level(m);
  const double l = h.largest_node, n = double(a.bytes), part = n / l;
  const Costs col = column_costs(part, h.node_count(), h.largest_node, m);
  return (l - 1) * (node.step_us(part) + part * m.gamma_us_per_byte) + std::min(col.ring, col.doubling) +
         (l - 1) * node.step_us(part);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allreduce:hier_multi");
  s->set_reduction(a.red);
  const Hierarchy& h = hierarchy(c);
  char* buf = static_cast<char*>(a.recv);  // coll::plan has put the input there
  const Comm node = group_view(h.node, c.rank), column = group_view(h.column, c.rank);
  const int l = node.size;
  auto scatter = build_ring_reduce_scatter_in_place(node, buf, a.count, a.red);
  s->append_mapped(*scatter, h.node);
  const int owned = ring_owned_segment(node.rank, l);
  const size_t first = ring_segment_start(a.count, l, owned);
  const size_t count = ring_segment_start(a.count, l, owned + 1) - first;
  char* part = buf + first * a.red.elem_size;
  // The column's algorithm by the estimate's own costs (the column's ranks agree: their parts
  // and models are equal); a ring pays 2(q-1) latencies, which across many nodes outweighs its
  // bandwidth. Without a model, by the part's size: rounds matter below 64 KiB, bandwidth above.
  const CostModel m = model_for(c, ctx.model);
  const double part_bytes = double(count * a.red.elem_size);
  bool ring = count >= size_t(column.size);
  if (net_level(m).alpha_us > 0) {
    const Costs col = column_costs(part_bytes, column.size, l, m);
    ring = ring && col.ring < col.doubling;
  } else {
    constexpr double kRingFrom = 64 * 1024;
    ring = ring && part_bytes >= kRingFrom;
  }
  auto across = ring ? build_allreduce_ring(column, part, count, a.red)
                     : build_allreduce_recursive_doubling(column, part, count, a.red);
  s->append_mapped(*across, h.column);
  auto gather = build_ring_allgather_in_place(node, buf, a.count, a.red.elem_size);
  s->append_mapped(*gather, h.node);
  return s;
}

}  // namespace

extern const Algorithm allreduce_hier_multi{"hier_multi", Collective::allreduce, supports, estimate, build};

}  // namespace weft::coll
