// What the shared-memory algorithms that carry any size share: a call on one node of several
// ranks, cut into slot-sized pieces.
#pragma once
#include <algorithm>

#include "segment.h"

namespace weft::coll::shm {

inline bool node_call(const CollArgs& a, const CollContext& ctx) {
  return ctx.comm.single_node && ctx.comm.size > 1 && !a.any_start_order;
}

// bytes cut into slot-sized pieces for a communicator of `ranks`: how many (at least one),
// and the bytes of the first.
struct SlotPieces {
  double count, bytes;
};
inline SlotPieces slot_pieces(const Geometry& g, size_t bytes, int ranks) {
  const size_t slot = slot_bytes(g, ranks);
  return {double(std::max<size_t>(1, (bytes + slot - 1) / slot)), double(std::min(bytes, slot))};
}

}  // namespace weft::coll::shm
