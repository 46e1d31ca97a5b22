// What the ring and recursive-doubling allgathers start with: this rank's block in its place.
#pragma once
#include "coll/algorithm.h"

namespace weft::coll {

// Adds a round that copies this rank's block (blocks[c.rank]) from mine to its place in recv,
// unless it is there already (in place).
inline void place_own_block(Schedule& s, const Comm& c, const void* mine, char* recv,
                            const std::vector<Block>& blocks) {
  const Block& own = blocks[size_t(c.rank)];
  if (mine == recv + own.offset) return;
  s.new_round();
  s.copy(mine, recv + own.offset, own.bytes);
}

}  // namespace weft::coll
