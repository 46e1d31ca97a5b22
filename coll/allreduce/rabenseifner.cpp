// Rabenseifner allreduce: a reduce-scatter by recursive halving (each of log2 p' steps exchanges
// half of the remaining range with a partner and reduces the half kept), then an allgather by
// recursive doubling that retraces those steps. 2 log2 p' messages per rank (twice recursive
// doubling's, far fewer than the ring's 2(p-1)), yet only about 2(p-1)/p of the vector sent and
// (p-1)/p reduced, as in the ring: the choice for large vectors when latency still counts.
// Non-power-of-two p: the first 2*rem ranks pair up, the even one of each pair folds its data
// into the odd one and receives the result at the end (as in recursive_doubling.cpp).
// Commutative operations only: the halving combines ranks out of order. Needs count >= p'.
#include <algorithm>

#include "coll/algorithm.h"

namespace weft::coll {

namespace {
int floor_pof2(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}
}  // namespace

std::shared_ptr<Schedule> build_allreduce_rabenseifner(const Comm& c, void* buf, size_t count,
                                                       const Reduction& red) {
  auto s = std::make_shared<Schedule>("allreduce:rabenseifner");
  s->set_reduction(red);
  const int p = c.size, me = c.rank;
  if (p == 1) return s;
  char* data = static_cast<char*>(buf);
  const size_t es = red.elem_size, bytes = count * es;
  const int pof2 = floor_pof2(p), rem = p - pof2;
  // Piece k (reduced at vrank k) covers elements [start(k), start(k + 1)).
  auto start = [&](int k) {
    return count / size_t(pof2) * size_t(k) + std::min<size_t>(size_t(k), count % size_t(pof2));
  };
  auto piece_bytes = [&](int from, int to) { return (start(to) - start(from)) * es; };
  // Received data to reduce: the partner's whole vector when folding, else at most the lower
  // half of the pieces (the larger one).
  char* incoming = s->scratch(me < 2 * rem ? bytes : start(pof2 / 2) * es);

  int vrank;  // rank among the pof2 that take part, or -1 for a folded-out rank
  if (me < 2 * rem) {
    s->new_round();
    if (me % 2 == 0) {
      s->send(me + 1, data, bytes);
      vrank = -1;
    } else {
      s->recv(me - 1, incoming, bytes);
      s->reduce(incoming, data, count);
      vrank = me / 2;
    }
  } else {
    vrank = me - rem;
  }
  if (vrank >= 0) {
    auto peer_of = [&](int v) { return v < rem ? v * 2 + 1 : v + rem; };
    // Reduce-scatter by recursive halving over pieces [lo, hi).
    int lo = 0, hi = pof2;
    for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
      const int mid = lo + mask;
      const bool lower = (vrank & mask) == 0;
      const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
      const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
      const int peer = peer_of(vrank ^ mask);
      s->new_round();
      s->send(peer, data + start(give_lo) * es, piece_bytes(give_lo, give_hi));
      s->recv(peer, incoming, piece_bytes(keep_lo, keep_hi));
      s->reduce(incoming, data + start(keep_lo) * es, start(keep_hi) - start(keep_lo));
      lo = keep_lo;
      hi = keep_hi;
    }
    // Allgather by recursive doubling: swap the reduced ranges, which double each step.
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int vpeer = vrank ^ mask;
      const int mine = vrank & ~(mask - 1), theirs = vpeer & ~(mask - 1);
      const int peer = peer_of(vpeer);
      s->new_round();
      s->send(peer, data + start(mine) * es, piece_bytes(mine, mine + mask));
      s->recv(peer, data + start(theirs) * es, piece_bytes(theirs, theirs + mask));
    }
  }
  if (me < 2 * rem) {
    s->new_round();
    if (me % 2 == 0) s->recv(me + 1, data, bytes);
    else s->send(me - 1, data, bytes);
  }
  return s;
}

namespace {
bool supports(const CollArgs& a, const Comm& c) {
  return a.red.commutative && a.count >= size_t(floor_pof2(c.size));
}
double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  const int pof2 = floor_pof2(c.size);
  const double q = pof2, n = double(a.bytes);
  double t = 2 * ceil_log2(pof2) * m.alpha_us + 2 * (q - 1) / q * n * m.beta_us_per_byte +
             (q - 1) / q * n * m.gamma_us_per_byte;
  if (pof2 != c.size) t += 2 * (m.alpha_us + n * m.beta_us_per_byte) + n * m.gamma_us_per_byte;
  return t;
}
std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  return build_allreduce_rabenseifner(c, a.recv, a.count, a.red);
}
}  // namespace

extern const Algorithm allreduce_rabenseifner{"rabenseifner", Collective::allreduce, supports,
                                              estimate, build};

}  // namespace weft::coll
