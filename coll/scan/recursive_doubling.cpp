// Scan and exscan by recursive doubling: in round k a rank sends the reduction of the 2^k ranks
// ending at itself to rank + 2^k, and folds in what rank - 2^k sends. Every value covers a
// contiguous range of lower ranks on the left, so non-commutative operations stay in order.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_scan_recursive_doubling(const Comm& c, const void* send, void* recv,
                                                        size_t count, const Reduction& red,
                                                        bool exclusive) {
  auto s = std::make_shared<Schedule>(exclusive ? "exscan:recursive_doubling" : "scan:recursive_doubling", red);
  const int p = c.size, me = c.rank;
  const size_t bytes = count * red.elem_size;
  char* partial = s->scratch(bytes);  // reduction of the ranks [me - 2^k + 1, me]
  char* incoming = s->scratch(bytes);
  s->new_round();
  s->copy(send, partial, bytes);
  if (!exclusive) s->copy(send, recv, bytes);
  bool have_exclusive = false;
  for (int dist = 1; dist < p; dist <<= 1) {
    s->new_round();
    if (me + dist < p) s->send(me + dist, partial, bytes);
    if (me - dist >= 0) {
      s->recv(me - dist, incoming, bytes);
      s->reduce(incoming, partial, count);
      if (!exclusive) {
        s->reduce(incoming, recv, count);
      } else if (have_exclusive) {
        s->reduce(incoming, recv, count);
      } else {
        s->copy(incoming, recv, bytes);
        have_exclusive = true;
      }
    }
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  return ceil_log2(c.size) *
         (m.alpha_us + double(a.bytes) * (m.beta_us_per_byte + 2 * m.gamma_us_per_byte));
}
template <bool exclusive>
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_scan_recursive_doubling(c, a.send, a.recv, a.count, a.red, exclusive);
}
}  // namespace

extern const Algorithm scan_recursive_doubling{"recursive_doubling", Collective::scan, always, estimate, build<false>};
extern const Algorithm exscan_recursive_doubling{"recursive_doubling", Collective::exscan, always, estimate, build<true>};

}  // namespace weft::coll
