// Linear gather(v): every rank sends its block to the root, which receives them all in one
// round (the transport overlaps them).
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_gather_linear(const Comm& c, const void* mine, size_t mine_bytes,
                                              char* recv, const std::vector<Block>& blocks, int root) {
  auto s = std::make_shared<Schedule>("gather:linear");
  s->new_round();
  if (c.rank != root) {
    s->send(root, mine, mine_bytes);
    return s;
  }
  for (int r = 0; r < c.size; ++r) {
    const Block& b = blocks[size_t(r)];
    if (r == root) {
      if (mine != recv + b.offset) s->copy(mine, recv + b.offset, b.bytes);
    } else {
      s->recv(r, recv + b.offset, b.bytes);
    }
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  const double p = c.size;
  return (p - 1) * m.alpha_us + (p - 1) / p * double(a.bytes) * m.beta_us_per_byte;
}
std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  return build_gather_linear(c, a.send, a.own_bytes, static_cast<char*>(a.recv), a.recv_blocks, a.root);
}
}  // namespace

extern const Algorithm gather_linear{"linear", Collective::gather, always, estimate, build};

}  // namespace weft::coll
