// The reduce-scatter by recursive halving that the Rabenseifner reduce and allreduce share:
// pof2 ranks (vranks) split the vector into pof2 pieces and, in log2 pof2 rounds, each sends
// the half of its range its partner keeps and reduces the half it keeps, until vrank k holds
// the full reduction of piece k. Commutative operations only (partners combine out of order).
#pragma once
#include <algorithm>

#include "coll/algorithm.h"

namespace weft::coll {

// The largest power of two <= p.
inline int floor_pof2(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

// count elements in n pieces as equal as can be: piece k covers [start(k), start(k + 1)).
struct EvenPieces {
  size_t count;
  int n;
  size_t start(int k) const {
    return count / size_t(n) * size_t(k) + std::min<size_t>(size_t(k), count % size_t(n));
  }
  size_t elems(int from, int to) const { return start(to) - start(from); }
};

// Adds the halving rounds for vrank to s: data (elem_size es) is reduced in place, incoming
// holds the partner's half (at least piece.elems(0, pof2 / 2) elements). peer_of maps a vrank
// to its rank.
template <class PeerOf>
void reduce_scatter_halving(Schedule& s, char* data, char* incoming, size_t es, const EvenPieces& piece,
                            int vrank, PeerOf peer_of) {
  int lo = 0, hi = piece.n;
  for (int mask = piece.n >> 1; mask > 0; mask >>= 1) {
    const int mid = lo + mask;
    const bool lower = (vrank & mask) == 0;
    const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
    const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
    const int peer = peer_of(vrank ^ mask);
    s.next_round();
    s.send(peer, data + piece.start(give_lo) * es, piece.elems(give_lo, give_hi) * es);
    s.recv(peer, incoming, piece.elems(keep_lo, keep_hi) * es);
    s.reduce(incoming, data + piece.start(keep_lo) * es, piece.elems(keep_lo, keep_hi));
    lo = keep_lo;
    hi = keep_hi;
  }
}

// Both need a piece per taking part rank.
inline bool halving_supports(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return a.red.commutative && a.count >= size_t(floor_pof2(c.size));
}

// The halving and its mirror (an allgather or a gather) among pof2 ranks: 2 log2 pof2
// messages, 2 (q-1)/q of the vector sent and (q-1)/q reduced.
inline double halving_and_mirror_us(int pof2, double bytes, const CostModel& m) {
  const double q = pof2;
  return 2 * ceil_log2(pof2) * m.alpha_us + 2 * (q - 1) / q * bytes * m.beta_us_per_byte +
         (q - 1) / q * bytes * m.gamma_us_per_byte;
}

}  // namespace weft::coll
