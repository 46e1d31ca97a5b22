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

// Where the blocks lie when packed in node order.
struct Packing {
  std::vector<int> order;     // ranks, node by node
  std::vector<Block> packed;  // per rank: its block in the packed buffer
  std::vector<Block> bundles; // per node (leader order): its blocks in the packed buffer
  int my_node = 0;
};

Packing packing(const Hierarchy& h, const Comm& c, const std::vector<Block>& blocks) {
  Packing k;
  k.packed.resize(size_t(c.size));
  size_t at = 0;
  for (int i = 0; i < h.node_count(); ++i) {
    const uint32_t id = c.nodes[size_t(h.leaders[size_t(i)])];
    if (id == c.nodes[size_t(c.rank)]) k.my_node = i;
    const size_t start = at;
    for (int r = 0; r < c.size; ++r) {
      if (c.nodes[size_t(r)] != id) continue;
      k.order.push_back(r);
      k.packed[size_t(r)] = {at, blocks[size_t(r)].bytes};
      at += blocks[size_t(r)].bytes;
    }
    k.bundles.push_back({start, at - start});
  }
  return k;
}

// Whether recv holds the blocks in packed order back to back (empty blocks may lie anywhere),
// and where in recv the packed buffer then starts.
bool packed_in_recv(const Packing& k, const std::vector<Block>& blocks, size_t* base) {
  bool found = false;
  for (int r : k.order) {
    const Block& b = blocks[size_t(r)];
    if (b.bytes == 0) continue;
    if (!found && b.offset >= k.packed[size_t(r)].offset) {
      found = true;
      *base = b.offset - k.packed[size_t(r)].offset;
    }
    if (!found || b.offset != *base + k.packed[size_t(r)].offset) return false;
  }
  return true;
}

// Copies between the packed buffer and recv, one copy per run of blocks adjacent in both.
void unpack(Schedule& s, const Packing& k, const char* packed, char* recv, const std::vector<Block>& blocks) {
  size_t i = 0;
  while (i < k.order.size()) {
    const Block& from = k.packed[size_t(k.order[i])];
    const size_t dst = blocks[size_t(k.order[i])].offset;
    size_t bytes = from.bytes, j = i + 1;
    for (; j < k.order.size() && blocks[size_t(k.order[j])].offset == dst + bytes; ++j)
      bytes += blocks[size_t(k.order[j])].bytes;
    if (bytes) s.copy(packed + from.offset, recv + dst, bytes);
    i = j;
  }
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
