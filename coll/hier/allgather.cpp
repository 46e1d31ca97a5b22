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
double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  if (!spans_nodes(c)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  const Level node = node_level(m), net = net_level(m);
  const double n = double(a.bytes), block = n / c.size, l = h.largest_node, q = h.node_count();
  return (l - 1) * node.step_us(block) + (q - 1) * net.alpha_us + (q - 1) / q * n * net.beta_us_per_byte +
         ceil_log2(h.largest_node) * node.step_us(n);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  auto s = std::make_shared<Schedule>("allgather:hier");
  const Hierarchy& h = hierarchy(c);
  const std::vector<Block>& blocks = a.recv_blocks;
  char* recv = static_cast<char*>(a.recv);
  const Packing k = packing(h, c, blocks);
  const size_t total = k.bundles.back().offset + k.bundles.back().bytes;
  size_t base = 0;
  const bool direct = packed_in_recv(k, blocks, &base);
  char* packed = direct ? recv + base : s->scratch(total);

  // The node's blocks to the leader, each at its packed place.
  std::vector<Block> node_blocks;
  for (int r : h.node) node_blocks.push_back(k.packed[size_t(r)]);
  auto gather = build_gather_linear(group_view(h.node, c.rank), a.send, a.own_bytes, packed,
                                    node_blocks, 0);
  s->append_mapped(*gather, h.node);
  if (h.is_leader()) {
    const Block& mine = k.bundles[size_t(k.my_node)];
    auto across = build_allgather_ring(group_view(h.leaders, c.rank), packed + mine.offset, packed,
                                       k.bundles);
    s->append_mapped(*across, h.leaders);
  }
  auto down = build_bcast_binomial(group_view(h.node, c.rank), packed, total, 0);
  s->append_mapped(*down, h.node);
  if (!direct) {
    s->next_round();
    unpack(*s, k, packed, recv, blocks);
  }
  return s;
}

}  // namespace

extern const Algorithm allgather_hier{"hier", Collective::allgather, supports_spanning, estimate, build};

}  // namespace weft::coll
