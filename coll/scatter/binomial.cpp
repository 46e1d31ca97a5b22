// Binomial-tree scatter: ceil(log2 p) levels instead of the linear scatter's p - 1 messages
// from the root. Ranks are numbered relative to the root; a rank's subtree is a contiguous
// range of relative ranks, so the root sends each child its subtree's blocks as one message
// (straight from its buffer when the blocks lie there in relative order, else packed into
// scratch first), and inner ranks forward parts of what they received. Equal blocks only: a
// rank off the root must know the size of its subtree's blocks.
#include <algorithm>

#include "coll/gather/rooted.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build_scatter_binomial(const Comm& c, const char* send,
                                                 const std::vector<Block>& blocks, void* mine,
                                                 size_t b, int root) {
  auto s = std::make_shared<Schedule>("scatter:binomial");
  const int p = c.size;
  const int rel = (c.rank - root + p) % p;
  // The subtree of relative rank rel: [rel, rel + extent).
  const int lowbit = rel == 0 ? p : (rel & -rel);
  const int extent = std::min(lowbit, p - rel);
  // buf[j]: the block of relative rank rel + j.
  const char* buf;
  if (rel == 0) {
    const Block& own = blocks[size_t(root)];
    s->new_round();
    if (mine != send + own.offset) s->copy(send + own.offset, mine, b);
    if (in_relative_order(blocks, root, p, b)) {
      buf = send + own.offset;
    } else {  // pack, a run of blocks adjacent in send at a time
      char* packed = s->scratch(size_t(p) * b);
      for_each_relative_run(blocks, root, p, b, [&](int j, size_t src, int n) {
        s->copy(send + src, packed + size_t(j) * b, size_t(n) * b);
      });
      buf = packed;
      s->new_round();
    }
  } else {
    const int parent = (rel - lowbit + root) % p;
    s->new_round();
    if (extent == 1) {  // a leaf
      s->recv(parent, mine, b);
      return s;
    }
    char* got = s->scratch(size_t(extent) * b);
    s->recv(parent, got, size_t(extent) * b);
    s->copy(got, mine, b);
    buf = got;
    s->new_round();
  }
  for (int mask = 1; mask < lowbit && rel + mask < p; mask <<= 1) {
    const int child = rel + mask, n = std::min(mask, p - child);
    s->send((child + root) % p, buf + size_t(mask) * b, size_t(n) * b);
  }
  return s;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_scatter_binomial(c, static_cast<const char*>(a.send), a.send_blocks, a.recv,
                                a.own_bytes, a.root);
}

}  // namespace

extern const Algorithm scatter_binomial{"binomial", Collective::scatter, uniform_blocks,
                                        rooted_binomial_us, build};

}  // namespace weft::coll
