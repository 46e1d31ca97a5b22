// Dissemination barrier: ceil(log2 p) rounds; in round k each rank signals rank + 2^k and
// waits for rank - 2^k. Works for any p.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_barrier_dissemination(const Comm& c) {
  auto s = std::make_shared<Schedule>("barrier:dissemination");
  const int p = c.size, me = c.rank;
  for (int dist = 1; dist < p; dist <<= 1) {
    s->new_round();
    s->recv((me - dist + p) % p, nullptr, 0);
    s->send((me + dist) % p, nullptr, 0);
  }
  return s;
}

namespace {
double estimate(const CollArgs&, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  return ceil_log2(c.size) * m.alpha_us;
}
std::shared_ptr<Schedule> build(const CollArgs&, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_barrier_dissemination(c);
}
}  // namespace

extern const Algorithm barrier_dissemination{"dissemination", Collective::barrier, always, estimate, build};

}  // namespace weft::coll
