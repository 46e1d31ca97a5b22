// Hierarchical allreduce for communicators that span nodes: each node's ranks reduce to their
// node leader (binomial tree), the leaders allreduce among themselves (recursive doubling),
// and each leader broadcasts the result to its node (binomial tree). The three phases are the
// flat algorithms built on groups of ranks and appended to one schedule, so their messages use
// the call's tag and run blocking, non-blocking or persistently like any other.
// Commutative operations only (the groups do not follow rank order).
#include <algorithm>
#include <limits>
#include <map>

#include "coll/algorithm.h"

namespace weft::coll {

namespace {

struct Groups {
  std::vector<int> node;     // the ranks of this rank's node, in rank order (leader first)
  std::vector<int> leaders;  // every node's leader, in rank order
};

Groups groups_of(const Comm& c) {
  Groups g;
  std::map<uint32_t, int> leader_of;
  for (int r = 0; r < c.size; ++r) {
    if (leader_of.emplace(c.nodes[size_t(r)], r).second) g.leaders.push_back(r);
    if (c.nodes[size_t(r)] == c.nodes[size_t(c.rank)]) g.node.push_back(r);
  }
  return g;
}

// A communicator view of a group, as the flat builders see it: this rank's index and the size.
Comm view(const std::vector<int>& ranks, int me) {
  Comm v;
  v.size = int(ranks.size());
  v.rank = int(std::find(ranks.begin(), ranks.end(), me) - ranks.begin());
  return v;
}

bool supports(const CollArgs& a, const Comm& c) {
  if (c.single_node || c.nodes.size() != size_t(c.size) || !a.red.commutative || a.red.user) return false;
  return std::any_of(c.nodes.begin(), c.nodes.end(), [&](uint32_t n) { return n != c.nodes[0]; });
}

// The model has one alpha and beta for every pair of ranks, so it cannot yet see why leaving
// the node fewer times pays: a tree on each node, log2(nodes) rounds between leaders, a tree
// back. With one level it ties the flat recursive doubling at best, so until each level has
// its own parameters it is chosen only on such ties' rounding, or where WEFT_COLL_TUNE forces it.
double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  if (!supports(a, c)) return std::numeric_limits<double>::infinity();
  // Every rank must estimate alike (each chooses on its own): use the largest node's size.
  std::map<uint32_t, int> ranks_on;
  for (uint32_t n : c.nodes) ++ranks_on[n];
  int largest = 0;
  for (const auto& [node, count] : ranks_on) largest = std::max(largest, count);
  const double n = double(a.bytes), step = m.alpha_us + n * m.beta_us_per_byte;
  const int within = ceil_log2(largest), across = ceil_log2(int(ranks_on.size()));
  return 2 * within * step + within * n * m.gamma_us_per_byte + across * (step + n * m.gamma_us_per_byte);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  auto s = std::make_shared<Schedule>("allreduce:hier");
  s->set_reduction(a.red);
  const Groups g = groups_of(c);
  void* buf = a.recv;  // coll::plan has put the input there
  const Comm node = view(g.node, c.rank);
  auto up = build_reduce_binomial(node, buf, buf, a.count, a.red, 0);
  s->append_mapped(*up, g.node);
  if (node.rank == 0) {
    auto across = build_allreduce_recursive_doubling(view(g.leaders, c.rank), buf, a.count, a.red);
    s->append_mapped(*across, g.leaders);
  }
  auto down = build_bcast_binomial(node, buf, a.bytes, 0);
  s->append_mapped(*down, g.node);
  return s;
}

}  // namespace

extern const Algorithm allreduce_hier{"hier", Collective::allreduce, supports, estimate, build};

}  // namespace weft::coll
