// Recursive-doubling allreduce: log2 p exchange rounds of the whole vector, latency-optimal.
// Non-power-of-two p: the first 2*rem ranks pair up, the even one of each pair folds its data
// into the odd one and waits for the result, leaving a power of two to run the rounds.
// Every partial result covers a contiguous range of ranks, so non-commutative operations are
// applied in rank order (the lower range on the left).
#include "coll/allreduce/fold.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_allreduce_recursive_doubling(const Comm& c, void* buf, size_t count,
                                                             const Reduction& red) {
  auto s = std::make_shared<Schedule>("allreduce:recursive_doubling", red);
  const int p = c.size, me = c.rank;
  const size_t bytes = count * red.elem_size;
  const Fold fold(p);
  char* incoming = s->scratch(bytes);
  char* data = static_cast<char*>(buf);

  const int vrank = fold.fold_in(*s, me, data, incoming, count, bytes);  // -1: folded out
  if (vrank >= 0) {
    for (int mask = 1; mask < fold.pof2; mask <<= 1) {
      int peer = fold.rank_of(vrank ^ mask);
      s->new_round();
      s->send(peer, buf, bytes);
      s->recv(peer, incoming, bytes);
      if (peer < me || red.commutative) {
        s->reduce(incoming, buf, count);
      } else {  // buf holds the lower ranks: combine into incoming, then keep it
        s->reduce(buf, incoming, count);
        s->copy(incoming, buf, bytes);
      }
    }
  }
  fold.fold_out(*s, me, data, bytes);
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double n = double(a.bytes);
  const int lg = c.size > 1 ? 31 - __builtin_clz(unsigned(c.size)) : 0;  // floor(log2 p)
  return lg * (m.alpha_us + n * (m.beta_us_per_byte + m.gamma_us_per_byte)) + fold_us(c.size, n, m);
}
}  // namespace

extern const Algorithm allreduce_recursive_doubling{"recursive_doubling", Collective::allreduce, always,
                                                    estimate, allreduce_call<build_allreduce_recursive_doubling>};

}  // namespace weft::coll
