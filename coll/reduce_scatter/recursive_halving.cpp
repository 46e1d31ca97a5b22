// Recursive-halving reduce-scatter: log2 p rounds for a power-of-two p. In round k a rank
// exchanges with rank ^ p/2^(k+1): it sends the half of its current range of segments that
// the partner keeps and reduces the half it keeps with what the partner sends, so the range
// halves every round until only its own segment is left. Same bandwidth as the ring with
// log2 p messages instead of p - 1. Commutative operations only (partners combine in either
// order); segments may differ in size.
#include <algorithm>

#include "coll/reduce_scatter/segments.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  const auto [s, p, me, es, start] = begin_reduce_scatter("reduce_scatter:recursive_halving", c, a.counts, a.red);
  const char* in = static_cast<const char*>(a.send);
  if (p == 1) {
    s->new_round();
    s->copy(in, a.recv, a.counts[0] * es);
    return s;
  }
  // work holds partial sums of the current range (the input is only read, in the first round).
  char* work = s->scratch(start[size_t(p)] * es);
  char* incoming = nullptr;
  int lo = 0;  // current range of segments: [lo, lo + 2 * half)
  for (int half = p / 2; half >= 1; half /= 2) {
    const int partner = me ^ half;
    const int keep = (me & half) ? lo + half : lo, give = (me & half) ? lo : lo + half;
    const size_t keep_at = start[size_t(keep)], keep_n = start[size_t(keep + half)] - keep_at;
    const size_t give_at = start[size_t(give)], give_n = start[size_t(give + half)] - give_at;
    s->new_round();
    if (half == p / 2) {
      s->send(partner, in + give_at * es, give_n * es);
      s->recv(partner, work + keep_at * es, keep_n * es);
      s->reduce(in + keep_at * es, work + keep_at * es, keep_n);
    } else {
      if (!incoming) {
        size_t largest = 0;
        for (int r = 0; r + half <= p; r += half) largest = std::max(largest, start[size_t(r + half)] - start[size_t(r)]);
        incoming = s->scratch(largest * es);
      }
      s->send(partner, work + give_at * es, give_n * es);
      s->recv(partner, incoming, keep_n * es);
      s->reduce(incoming, work + keep_at * es, keep_n);
    }
    lo = keep;
  }
  s->copy(work + start[size_t(me)] * es, a.recv, a.counts[size_t(me)] * es);
  return s;
}

bool supports(const CollArgs& a, const CollContext& ctx) { return a.red.commutative && is_power_of_two(ctx.comm.size); }
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size, n = double(a.bytes);
  return ceil_log2(c.size) * m.alpha_us + (p - 1) / p * n * (m.beta_us_per_byte + m.gamma_us_per_byte);
}

}  // namespace

extern const Algorithm reduce_scatter_recursive_halving{"recursive_halving", Collective::reduce_scatter, supports,
                                                        estimate, build};

}  // namespace weft::coll
