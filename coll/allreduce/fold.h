// How the recursive-doubling and Rabenseifner allreduces handle a p that is not a power of
// two: the first 2*rem ranks pair up, the even one of each pair folds its vector into the odd
// one and receives the result at the end, leaving pof2 ranks to run the algorithm.
#pragma once
#include "coll/reduce/halving.h"

namespace weft::coll {

struct Fold {
  explicit Fold(int p) : pof2(floor_pof2(p)), rem(p - pof2) {}
  int pof2, rem;

  bool folds(int rank) const { return rank < 2 * rem; }
  // The rank of the algorithm's rank v.
  int rank_of(int v) const { return v < rem ? v * 2 + 1 : v + rem; }
  // Adds the fold round (for the ranks that fold) and returns this rank's rank among the pof2,
  // or -1 for a rank folded out. incoming: scratch for the partner's vector.
  int fold_in(Schedule& s, int me, char* buf, char* incoming, size_t count, size_t bytes) const {
    if (!folds(me)) return me - rem;
    s.new_round();
    if (me % 2 == 0) {
      s.send(me + 1, buf, bytes);
      return -1;
    }
    s.recv(me - 1, incoming, bytes);
    s.reduce(incoming, buf, count);
    return me / 2;
  }
  // Hands the result back to the rank folded out.
  void fold_out(Schedule& s, int me, char* buf, size_t bytes) const {
    if (!folds(me)) return;
    s.new_round();
    if (me % 2 == 0) s.recv(me + 1, buf, bytes);
    else s.send(me - 1, buf, bytes);
  }
};

// The fold's cost on p ranks: a vector there and back, one reduction; nothing for a power of two.
inline double fold_us(int p, double bytes, const CostModel& m) {
  if (is_power_of_two(p)) return 0;
  return 2 * (m.alpha_us + bytes * m.beta_us_per_byte) + bytes * m.gamma_us_per_byte;
}

}  // namespace weft::coll
