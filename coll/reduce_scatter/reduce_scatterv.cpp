// Reduce-scatter as a binomial reduce of the whole vector to rank 0 followed by a linear
// scatter of each rank's segment. Slower than the ring or recursive halving, but the reduce
// combines in rank order, so it handles every operation, non-commutative ones included.
#include "coll/reduce_scatter/segments.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  const auto [s, p, me, es, start] = begin_reduce_scatter("reduce_scatter:reduce_scatterv", c, a.counts, a.red);
  const size_t total = start[size_t(p)];
  std::vector<Block> blocks(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) blocks[size_t(r)] = Block{start[size_t(r)] * es, a.counts[size_t(r)] * es};
  // The whole result, at rank 0 only.
  char* whole = me == 0 ? s->scratch(total * es) : nullptr;
  auto reduce = build_reduce_binomial(c, a.send, whole, total, a.red, 0);
  s->append(*reduce);
  auto scatter = build_scatter_linear(c, whole, blocks, a.recv, a.counts[size_t(me)] * es, 0);
  s->append(*scatter);
  return s;
}

double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size, n = double(a.bytes);
  return ceil_log2(c.size) * (m.alpha_us + n * (m.beta_us_per_byte + m.gamma_us_per_byte)) +
         (p - 1) * m.alpha_us + (p - 1) / p * n * m.beta_us_per_byte;
}

}  // namespace

extern const Algorithm reduce_scatter_reduce_scatterv{"reduce_scatterv", Collective::reduce_scatter, always,
                                                      estimate, build};

}  // namespace weft::coll
