// Blocks of an allgather packed in node order (the nodes in leader order, a node's ranks in
// rank order), as the hierarchical and offloaded allgathers move them: a node's blocks form
// one bundle, so every message's size follows from the block sizes alone.
#pragma once
#include <vector>

#include "coll/hier/hierarchy.h"

namespace weft::coll {

class Schedule;

struct Packing {
  std::vector<int> order;     // ranks, node by node
  std::vector<Block> packed;  // per rank: its block in the packed buffer
  std::vector<Block> bundles; // per node (leader order): its blocks in the packed buffer
  int my_node = 0;
  size_t total() const { return bundles.empty() ? 0 : bundles.back().offset + bundles.back().bytes; }
};

Packing packing(const Hierarchy& h, const Comm& c, const std::vector<Block>& blocks);
// Whether recv holds the blocks in packed order back to back (empty blocks may lie anywhere),
// and where in recv the packed buffer then starts.
bool packed_in_recv(const Packing& k, const std::vector<Block>& blocks, size_t* base);
// Copies between the packed buffer and recv, one copy per run of blocks adjacent in both.
void unpack(Schedule& s, const Packing& k, const char* packed, char* recv, const std::vector<Block>& blocks);

// The node phases of the leader-level allgathers (hier, offload), between which the leaders
// exchange their bundles: each node's blocks gathered at its leader in packed order, and the
// whole packed result broadcast in the node and unpacked into recv where it is not there
// already. A rank whose recv holds the blocks in packed order works in it directly.
struct PackedResult {
  Packing k;
  char* packed = nullptr;  // in recv (direct) or in the schedule's scratch
  bool direct = false;
};
PackedResult append_gather_to_leader(Schedule& s, const Hierarchy& h, const Comm& c, const CollArgs& a);
void append_bcast_from_leader(Schedule& s, const Hierarchy& h, const Comm& c, const CollArgs& a,
                              const PackedResult& r);

}  // namespace weft::coll
