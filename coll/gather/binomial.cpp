// Binomial-tree gather: ceil(log2 p) levels instead of the linear gather's p - 1 messages at
// the root. Ranks are numbered relative to the root; a rank's subtree is a contiguous range of
// relative ranks, so an inner rank collects its children's blocks in relative order in scratch
// and forwards them as one message. The root receives straight into its buffer when the blocks
// lie there in relative order, else into scratch and reorders them. Equal blocks only: a rank
// off the root must know the size of its subtree's blocks.
#include <algorithm>

#include "coll/gather/rooted.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build_gather_binomial(const Comm& c, const void* mine, size_t b,
                                                char* recv, const std::vector<Block>& blocks,
                                                int root) {
  auto s = std::make_shared<Schedule>("gather:binomial");
  const int p = c.size;
  const int rel = (c.rank - root + p) % p;
  // The subtree of relative rank rel: [rel, rel + extent).
  const int lowbit = rel == 0 ? p : (rel & -rel);
  const int extent = std::min(lowbit, p - rel);
  s->new_round();
  if (extent == 1) {  // a leaf
    if (rel != 0) {
      s->send((rel - lowbit + root) % p, mine, b);
    } else if (mine != recv + blocks[size_t(root)].offset) {
      s->copy(mine, recv + blocks[size_t(root)].offset, b);
    }
    return s;
  }
  // buf[j]: the block of relative rank rel + j.
  char* buf;
  bool direct = false;
  if (rel == 0) {
    direct = in_relative_order(blocks, root, p, b);
    buf = direct ? recv + blocks[size_t(root)].offset : s->scratch(size_t(p) * b);
  } else {
    buf = s->scratch(size_t(extent) * b);
  }
  for (int mask = 1; mask < lowbit && rel + mask < p; mask <<= 1) {
    const int child = rel + mask, n = std::min(mask, p - child);
    s->recv((child + root) % p, buf + size_t(mask) * b, size_t(n) * b);
  }
  if (rel != 0) {
    s->copy(mine, buf, b);
    s->new_round();
    s->send((rel - lowbit + root) % p, buf, size_t(extent) * b);
    return s;
  }
  const Block& own = blocks[size_t(root)];
  if (mine != recv + own.offset) s->copy(mine, recv + own.offset, b);
  if (direct) return s;
  // Reorder, a run of blocks adjacent in recv at a time.
  for_each_relative_run(blocks, root, p, b, [&](int j, size_t dst, int n) {
    s->copy(buf + size_t(j) * b, recv + dst, size_t(n) * b);
  });
  return s;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_gather_binomial(c, a.send, a.own_bytes, static_cast<char*>(a.recv), a.recv_blocks, a.root);
}

}  // namespace

extern const Algorithm gather_binomial{"binomial", Collective::gather, uniform_blocks,
                                       rooted_binomial_us, build};

}  // namespace weft::coll
