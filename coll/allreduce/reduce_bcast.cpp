// Reduce-then-broadcast allreduce: a binomial reduce to rank 0 followed by a binomial broadcast
// from it, 2 ceil(log2 p) levels of whole vectors. Slower than recursive doubling, but the
// reduce tree rooted at rank 0 combines contiguous ranges of ranks in order, so it runs every
// operation, non-commutative ones included, for any p and any count.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_allreduce_reduce_bcast(const Comm& c, void* buf, size_t count,
                                                       const Reduction& red) {
  auto s = std::make_shared<Schedule>("allreduce:reduce_bcast", red);
  // In place at rank 0; the other ranks reduce a copy of buf and then receive the result in it.
  s->append(*build_reduce_binomial(c, buf, buf, count, red, 0));
  s->append(*build_bcast_binomial(c, buf, count * red.elem_size, 0));
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const int lg = ceil_log2(c.size);
  const double n = double(a.bytes);
  return 2 * lg * (m.alpha_us + n * m.beta_us_per_byte) + lg * n * m.gamma_us_per_byte;
}
}  // namespace

extern const Algorithm allreduce_reduce_bcast{"reduce_bcast", Collective::allreduce, always, estimate,
                                              allreduce_call<build_allreduce_reduce_bcast>};

}  // namespace weft::coll
