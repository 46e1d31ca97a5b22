// Pipelined hierarchical allreduce for large messages: the vector is cut into fragments, each
// one a hierarchical allreduce of its own (reduce to the node leader, recursive doubling among
// leaders, bcast in the node) run as a lane of the schedule under its own tag. Fragment k
// starts its node reduction once fragment k-1 has finished its own at this rank, so while the
// leaders exchange one fragment over the network, the node already reduces the next, and
// broadcasts the one before. The fragments wait on each other only locally and only towards
// earlier ones, so the lanes cannot deadlock. Inside a node the phases use point-to-point (the
// shared-memory engine numbers its operations in start order, which lanes do not keep).
// Commutative operations only.
#include <algorithm>
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"

namespace weft::coll {

namespace {

constexpr size_t kMinFragment = 128 * 1024;
constexpr size_t kMaxFragments = 8;

size_t fragments_of(const CollArgs& a) {
  return std::clamp<size_t>(a.bytes / kMinFragment, 2, kMaxFragments);
}

bool supports(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return a.red.commutative && !a.red.user && spans_nodes(c) && a.bytes >= 2 * kMinFragment &&
         a.count >= fragments_of(a);
}

// A pipeline of F fragments through three stages costs the stages of one fragment plus F-1
// times the slowest stage.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!supports(a, ctx)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  const Level node = node_level(m), net = net_level(m);
  const double f = double(fragments_of(a)), n = double(a.bytes) / f, reduce = n * m.gamma_us_per_byte;
  const int within = ceil_log2(h.largest_node);
  const int across = recursive_doubling_rounds(h.node_count());
  const double up = within * (node.step_us(n) + reduce), between = across * (net.step_us(n) + reduce),
               down = within * node.step_us(n);
  return up + between + down + (f - 1) * std::max({up, between, down});
}

// What the lanes of one schedule share: how many runs have started, and per fragment, how
// many runs have finished its node reduction at this rank (persistent and reused schedules run
// many times, so counts rather than flags).
struct Progression {
  uint64_t started = 0;
  std::vector<uint64_t> reduced;
};

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  auto s = std::make_shared<Schedule>("allreduce:hier_pipelined");
  s->set_reduction(a.red);
  const size_t fragments = fragments_of(a), es = a.red.elem_size;
  auto shared = std::make_shared<Progression>();
  shared->reduced.assign(fragments, 0);
  s->keep(shared);
  // The lanes start with the call; this runs after coll::plan's input copy, if any.
  Progression* p = shared.get();
  s->call([p] {
    ++p->started;
    return Status::ok;
  });
  char* buf = static_cast<char*>(a.recv);
  for (size_t k = 0; k < fragments; ++k) {
    const size_t first = ring_segment_start(a.count, int(fragments), int(k));
    const size_t count = ring_segment_start(a.count, int(fragments), int(k) + 1) - first;
    auto lane = std::make_shared<Schedule>("allreduce:hier_pipelined fragment");
    lane->set_reduction(a.red);
    auto runs = std::make_shared<uint64_t>(0);
    lane->keep(runs);
    lane->poll([p, k, runs = runs.get()](const CollContext&) {
      if (p->started <= *runs || (k > 0 && p->reduced[k - 1] <= *runs)) return Status::pending;
      ++*runs;
      return Status::ok;
    });
    lane->new_round();
    append_hier_allreduce(*lane, ctx, buf + first * es, count, a.red, false, [p, k, runs = runs.get()] {
      p->reduced[k] = *runs;
      return Status::ok;
    });
    s->add_lane(std::move(lane));
  }
  return s;
}

}  // namespace

extern const Algorithm allreduce_hier_pipelined{"hier_pipelined", Collective::allreduce, supports, estimate, build};

}  // namespace weft::coll
