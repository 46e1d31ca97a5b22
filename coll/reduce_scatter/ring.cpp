// Ring reduce-scatter: p-1 rounds, each reducing one segment as it travels, so that rank r
// ends with the full reduction of segment r. Commutative operations only (the ring does not
// combine in rank order). Works on a scratch copy of the input.
#include <algorithm>

#include "coll/reduce_scatter/segments.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_reduce_scatter_ring(const Comm& c, const void* send, void* recv,
                                                    const std::vector<size_t>& counts,
                                                    const Reduction& red) {
  const auto [s, p, me, es, start] = begin_reduce_scatter("reduce_scatter:ring", c, counts, red);
  const size_t largest = *std::max_element(counts.begin(), counts.end());
  const size_t total = start[size_t(p)];
  char* work = s->scratch(total * es);
  char* incoming = s->scratch(largest * es + 1);
  s->new_round();
  s->copy(send, work, total * es);
  const int right = (me + 1) % p, left = (me - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    int out = (me - step - 1 + p) % p, in = (me - step - 2 + p) % p;
    s->new_round();
    s->send(right, work + start[size_t(out)] * es, counts[size_t(out)] * es);
    s->recv(left, incoming, counts[size_t(in)] * es);
    s->reduce(incoming, work + start[size_t(in)] * es, counts[size_t(in)]);
  }
  s->new_round();
  s->copy(work + start[size_t(me)] * es, recv, counts[size_t(me)] * es);
  return s;
}

namespace {
bool supports(const CollArgs& a, const CollContext&) { return a.red.commutative; }
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size, n = double(a.bytes);
  return (p - 1) * (m.alpha_us + n / p * (m.beta_us_per_byte + m.gamma_us_per_byte));
}
}  // namespace

extern const Algorithm reduce_scatter_ring{"ring", Collective::reduce_scatter, supports, estimate,
                                           reduce_scatter_call<build_reduce_scatter_ring>};

}  // namespace weft::coll
