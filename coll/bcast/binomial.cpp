// Binomial-tree broadcast: log2 p levels, latency-optimal for small messages. A rank receives
// from its parent (the rank that differs in its lowest set bit), then sends to its children.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_bcast_binomial(const Comm& c, void* buf, size_t bytes, int root) {
  auto s = std::make_shared<Schedule>("bcast:binomial");
  const int p = c.size;
  const int rel = (c.rank - root + p) % p;
  int mask = 1;
  while (mask < p) {
    if (rel & mask) {
      s->new_round();
      s->recv((rel - mask + root) % p, buf, bytes);
      break;
    }
    mask <<= 1;
  }
  s->new_round();
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (rel + mask < p) s->send((rel + mask + root) % p, buf, bytes);
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  return ceil_log2(c.size) * (m.alpha_us + double(a.bytes) * m.beta_us_per_byte);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_bcast_binomial(c, a.recv, a.bytes, a.root);
}
}  // namespace

extern const Algorithm bcast_binomial{"binomial", Collective::bcast, always, estimate, build};

}  // namespace weft::coll
