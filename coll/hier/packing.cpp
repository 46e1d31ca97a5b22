// Blocks packed in node order (packing.h).
#include "coll/hier/packing.h"

#include "coll/algorithm.h"
#include "coll/schedule.h"

namespace weft::coll {

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

PackedResult append_gather_to_leader(Schedule& s, const Hierarchy& h, const Comm& c, const CollArgs& a) {
  PackedResult r;
  r.k = packing(h, c, a.recv_blocks);
  size_t base = 0;
  r.direct = packed_in_recv(r.k, a.recv_blocks, &base);
  r.packed = r.direct ? static_cast<char*>(a.recv) + base : s.scratch(r.k.total());
  // The node's blocks to the leader, each at its packed place.
  std::vector<Block> node_blocks;
  for (int rank : h.node) node_blocks.push_back(r.k.packed[size_t(rank)]);
  auto gather = build_gather_linear(group_view(h.node, c.rank), a.send, a.own_bytes, r.packed, node_blocks, 0);
  s.append_mapped(*gather, h.node);
  return r;
}

void append_bcast_from_leader(Schedule& s, const Hierarchy& h, const Comm& c, const CollArgs& a,
                              const PackedResult& r) {
  auto down = build_bcast_binomial(group_view(h.node, c.rank), r.packed, r.k.total(), 0);
  s.append_mapped(*down, h.node);
  if (!r.direct) {
    s.next_round();
    unpack(s, r.k, r.packed, static_cast<char*>(a.recv), a.recv_blocks);
  }
}

}  // namespace weft::coll
