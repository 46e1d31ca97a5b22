// Linear scatter(v): the root sends every rank its block in one round.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_scatter_linear(const Comm& c, const char* send,
                                               const std::vector<Block>& blocks, void* mine,
                                               size_t mine_bytes, int root) {
  auto s = std::make_shared<Schedule>("scatter:linear");
  s->new_round();
  if (c.rank != root) {
    s->recv(root, mine, mine_bytes);
    return s;
  }
  for (int r = 0; r < c.size; ++r) {
    const Block& b = blocks[size_t(r)];
    if (r == root) {
      if (mine != send + b.offset) s->copy(send + b.offset, mine, b.bytes);
    } else {
      s->send(r, send + b.offset, b.bytes);
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
  return build_scatter_linear(c, static_cast<const char*>(a.send), a.send_blocks, a.recv, a.own_bytes, a.root);
}
}  // namespace

extern const Algorithm scatter_linear{"linear", Collective::scatter, always, estimate, build};

}  // namespace weft::coll
