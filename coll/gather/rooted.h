// What gather and scatter share: a scatter is a gather with the data flowing out of the root.
#pragma once
#include <type_traits>

#include "coll/algorithm.h"

namespace weft::coll {

// Linear gather (to_root) or scatter in one round: the root receives (sends) every other
// rank's block and copies its own; the others send (receive) theirs. all: the root's buffer.
template <bool to_root>
std::shared_ptr<Schedule> build_rooted_linear(const char* name, const Comm& c,
                                              std::conditional_t<to_root, char*, const char*> all,
                                              const std::vector<Block>& blocks,
                                              std::conditional_t<to_root, const void*, void*> mine,
                                              size_t mine_bytes, int root) {
  auto s = std::make_shared<Schedule>(name);
  s->new_round();
  if (c.rank != root) {
    if constexpr (to_root) s->send(root, mine, mine_bytes);
    else s->recv(root, mine, mine_bytes);
    return s;
  }
  for (int r = 0; r < c.size; ++r) {
    const Block& b = blocks[size_t(r)];
    if (r != root) {
      if constexpr (to_root) s->recv(r, all + b.offset, b.bytes);
      else s->send(r, all + b.offset, b.bytes);
    } else if (mine != all + b.offset) {
      if constexpr (to_root) s->copy(mine, all + b.offset, b.bytes);
      else s->copy(all + b.offset, mine, b.bytes);
    }
  }
  return s;
}

// p - 1 messages at the root, (p - 1) / p of the bytes through it.
inline double rooted_linear_us(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size;
  return (p - 1) * m.alpha_us + (p - 1) / p * double(a.bytes) * m.beta_us_per_byte;
}

// The binomial trees: ceil(log2 p) levels, the same bytes through the root.
inline double rooted_binomial_us(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size;
  return ceil_log2(c.size) * m.alpha_us + (p - 1) / p * double(a.bytes) * m.beta_us_per_byte;
}
// Equal blocks only: a rank off the root must know the size of its subtree's blocks.
inline bool uniform_blocks(const CollArgs& a, const CollContext&) { return a.uniform; }

// Whether the blocks (b bytes each) of relative ranks 1..p-1 follow the root's in that order.
inline bool in_relative_order(const std::vector<Block>& blocks, int root, int p, size_t b) {
  const size_t base = blocks[size_t(root)].offset;
  for (int j = 1; j < p; ++j)
    if (blocks[size_t((root + j) % p)].offset != base + size_t(j) * b) return false;
  return true;
}

// Calls move(j, offset, n) for each run of relative ranks j .. j + n - 1 (from 1) whose blocks
// lie one after another from offset, so that each run moves as one copy.
template <class Move>
void for_each_relative_run(const std::vector<Block>& blocks, int root, int p, size_t b, Move move) {
  int j = 1;
  while (j < p) {
    const size_t at = blocks[size_t((root + j) % p)].offset;
    int k = j + 1;
    while (k < p && blocks[size_t((root + k) % p)].offset == at + size_t(k - j) * b) ++k;
    move(j, at, k - j);
    j = k;
  }
}

}  // namespace weft::coll
