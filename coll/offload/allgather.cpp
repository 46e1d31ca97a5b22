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

bool supports(const CollArgs& a, const Comm& c) { return spans_nodes(c) && offload::usable(a, c); }

double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  if (!supports(a, c)) return std::numeric_limits<double>::infinity();
  const Hierarchy& h = hierarchy(c);
  const Level node = node_level(m);
  const double n = double(a.bytes), l = h.largest_node, depth = ceil_log2(h.largest_node);
  return (l - 1) * node.step_us(n / c.size) + offload::fabric_us(c, n, m) + depth * node.alpha_us +
         depth * node.step_us(n);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  auto s = std::make_shared<Schedule>("allgather:offload");
  const Hierarchy& h = hierarchy(c);
  const std::vector<Block>& blocks = a.recv_blocks;
  char* recv = static_cast<char*>(a.recv);
  const Packing k = packing(h, c, blocks);
  const size_t total = k.total();
  size_t base = 0;
  const bool direct = packed_in_recv(k, blocks, &base);
  char* packed = direct ? recv + base : s->scratch(total);
  std::vector<Block> node_blocks;
  for (int r : h.node) node_blocks.push_back(k.packed[size_t(r)]);
  auto gather = build_gather_linear(group_view(h.node, c.rank), a.send, a.own_bytes, packed, node_blocks, 0);
  s->append_mapped(*gather, h.node);
  const Block& mine = k.bundles[size_t(k.my_node)];
  weft_offload_op_args args{};
  args.coll = WEFT_OFFLOAD_ALLGATHER;
  args.send = packed + mine.offset;  // inside recv, at its own place: the result rewrites the same bytes
  args.recv = packed;
  args.send_offset = mine.offset;
  args.send_bytes = mine.bytes;
  args.total_bytes = total;
  offload::append_leader_operation(*s, c, args);
  auto down = build_bcast_binomial(group_view(h.node, c.rank), packed, total, 0);
  s->append_mapped(*down, h.node);
  if (!direct) {
    s->next_round();
    unpack(*s, k, packed, recv, blocks);
  }
  return s;
}

}  // namespace

extern const Algorithm allgather_offload{"offload", Collective::allgather, supports, estimate, build};

}  // namespace weft::coll
