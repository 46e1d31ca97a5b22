// Hierarchical allreduce for communicators that span nodes: each node's ranks reduce to their
// node leader, the leaders allreduce among themselves (recursive doubling), and each leader
// broadcasts the result to its node. Inside a node the phases run on the shared-memory engine
// (coll/shm) when the vector fits one of its slots, else as binomial trees over point-to-point.
// The phases are appended to one schedule, so their messages use the call's tag and run
// blocking, non-blocking or persistently like any other. Only the leaders cross the network,
// once per round: the choice for small messages. Commutative operations only (the groups do
// not follow rank order).
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "coll/shm/segment.h"

namespace weft::coll {

namespace {

// Whether a node of `ranks` ranks reduces and broadcasts a vector through shared memory.
bool node_in_shm(const CollArgs& a, const CollContext& ctx, int ranks) {
  return ranks > 1 && !a.any_start_order && a.bytes <= shm::slot_bytes(shm::geometry_of(ctx), ranks);
}

bool supports(const CollArgs& a, const CollContext& ctx) {
  return a.red.commutative && !a.red.user && spans_nodes(ctx.comm);
}

// Every rank must estimate alike (each chooses on its own): the fullest node sets the tree depth.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  if (!supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(ctx.comm);
  const Level node = node_level(m), net = net_level(m);
  const double n = double(a.bytes), reduce = n * m.gamma_us_per_byte;
  const int within = ceil_log2(h.largest_node), across_rounds = recursive_doubling_rounds(h.node_count());
  double inside = within * (2 * node.step_us(n) + reduce);
  if (node_in_shm(a, ctx, h.largest_node) && shm::model_known(m))
    inside = 2 * shm::flag_exchange_us(m, h.largest_node) + 2 * n * m.shm_beta_us_per_byte +
             h.largest_node * n * (m.shm_beta_us_per_byte + m.gamma_us_per_byte);
  return inside + across_rounds * (net.step_us(n) + reduce);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allreduce:hier");
  s->set_reduction(a.red);
  const Hierarchy& h = hierarchy(c);
  // coll::plan has put the input in recv.
  append_hier_allreduce(*s, ctx, a.recv, a.count, a.red, node_in_shm(a, ctx, int(h.node.size())), nullptr);
  return s;
}

}  // namespace

void append_hier_allreduce(Schedule& s, const CollContext& ctx, void* buf, size_t count, const Reduction& red,
                           bool shm, std::function<Status()> after_up) {
  const Comm& c = ctx.comm;
  const Hierarchy& h = hierarchy(c);
  const Comm node = group_view(h.node, c.rank);
  const size_t bytes = count * red.elem_size;
  // The node's bcast starts after the leaders' exchange, which leaders may finish in another
  // order than their node's ranks: both node phases take their numbers when the call starts.
  shm::JointClaim together;
  CollArgs inside{Collective::reduce};  // the node's phases, rooted at its leader, in place
  inside.send = inside.recv = buf;
  inside.bytes = bytes;
  inside.count = count;
  inside.red = red;
  auto up = shm ? find_algorithm(Collective::reduce, "shm")->build(inside, context_on(ctx, *h.node_comm))
                : build_reduce_binomial(node, buf, buf, count, red, 0);
  s.append_mapped(*up, h.node);
  if (after_up) s.call(std::move(after_up));
  if (h.is_leader()) {
    auto across = build_allreduce_recursive_doubling(group_view(h.leaders, c.rank), buf, count, red);
    s.append_mapped(*across, h.leaders);
  }
  inside.coll = Collective::bcast;
  auto down = shm ? find_algorithm(Collective::bcast, "shm")->build(inside, context_on(ctx, *h.node_comm))
                  : build_bcast_binomial(node, buf, bytes, 0);
  s.append_mapped(*down, h.node);
}

extern const Algorithm allreduce_hier{"hier", Collective::allreduce, supports, estimate, build};

}  // namespace weft::coll
