// Reduce-scatter as a binomial reduce of the whole vector to rank 0 followed by a linear
// scatter of each rank's segment. Slower than the ring or recursive halving, but the reduce
// combines in rank order, so it handles every operation, non-commutative ones included.
#include "coll/reduce_scatter/segments.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build_reduce_scatter_reduce_scatterv(const Comm& c, const void* send,
                                                               void* recv,
                                                               const std::vector<size_t>& counts,
                                                               const Reduction& red) {
  auto s = std::make_shared<Schedule>("reduce_scatter:reduce_scatterv");
  s->set_reduction(red);
  const int p = c.size;
  const size_t es = red.elem_size;
  const std::vector<size_t> start = segment_starts(counts);
  const size_t total = start[size_t(p)];
  std::vector<Block> blocks(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) blocks[size_t(r)] = Block{start[size_t(r)] * es, counts[size_t(r)] * es};
  // The whole result, at rank 0 only.
  char* whole = c.rank == 0 ? s->scratch(total * es) : nullptr;
  auto reduce = build_reduce_binomial(c, send, whole, total, red, 0);
  s->append(*reduce);
  auto scatter = build_scatter_linear(c, whole, blocks, recv, counts[size_t(c.rank)] * es, 0);
  s->append(*scatter);
  return s;
}

double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  const double p = c.size, n = double(a.bytes);
  return ceil_log2(c.size) * (m.alpha_us + n * (m.beta_us_per_byte + m.gamma_us_per_byte)) +
         (p - 1) * m.alpha_us + (p - 1) / p * n * m.beta_us_per_byte;
}
std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  return build_reduce_scatter_reduce_scatterv(c, a.send, a.recv, a.counts, a.red);
}

}  // namespace

extern const Algorithm reduce_scatter_reduce_scatterv{"reduce_scatterv", Collective::reduce_scatter,
                                                      always, estimate, build};

}  // namespace weft::coll
