// Rabenseifner allreduce: a reduce-scatter by recursive halving (each of log2 p' steps exchanges
// half of the remaining range with a partner and reduces the half kept), then an allgather by
// recursive doubling that retraces those steps. 2 log2 p' messages per rank (twice recursive
// doubling's, far fewer than the ring's 2(p-1)), yet only about 2(p-1)/p of the vector sent and
// (p-1)/p reduced, as in the ring: the choice for large vectors when latency still counts.
// Non-power-of-two p: the first 2*rem ranks pair up, the even one of each pair folds its data
// into the odd one and receives the result at the end (as in recursive_doubling.cpp).
// Commutative operations only: the halving combines ranks out of order. Needs count >= p'.
#include "coll/allreduce/fold.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_allreduce_rabenseifner(const Comm& c, void* buf, size_t count,
                                                       const Reduction& red) {
  auto s = std::make_shared<Schedule>("allreduce:rabenseifner", red);
  const int p = c.size, me = c.rank;
  if (p == 1) return s;
  char* data = static_cast<char*>(buf);
  const size_t es = red.elem_size, bytes = count * es;
  const Fold fold(p);
  const int pof2 = fold.pof2;
  // Piece k is reduced at vrank k.
  const EvenPieces piece{count, pof2};
  auto piece_bytes = [&](int from, int to) { return piece.elems(from, to) * es; };
  // Received data to reduce: the partner's whole vector when folding, else at most the lower
  // half of the pieces (the larger one).
  char* incoming = s->scratch(fold.folds(me) ? bytes : piece.start(pof2 / 2) * es);

  const int vrank = fold.fold_in(*s, me, data, incoming, count, bytes);  // -1: folded out
  if (vrank >= 0) {
    auto peer_of = [&](int v) { return fold.rank_of(v); };
    reduce_scatter_halving(*s, data, incoming, es, piece, vrank, peer_of);
    // Allgather by recursive doubling: swap the reduced ranges, which double each step.
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int vpeer = vrank ^ mask;
      const int mine = vrank & ~(mask - 1), theirs = vpeer & ~(mask - 1);
      const int peer = peer_of(vpeer);
      s->new_round();
      s->send(peer, data + piece.start(mine) * es, piece_bytes(mine, mine + mask));
      s->recv(peer, data + piece.start(theirs) * es, piece_bytes(theirs, theirs + mask));
    }
  }
  fold.fold_out(*s, me, data, bytes);
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double n = double(a.bytes);
  return halving_and_mirror_us(floor_pof2(c.size), n, m) + fold_us(c.size, n, m);
}
}  // namespace

extern const Algorithm allreduce_rabenseifner{"rabenseifner", Collective::allreduce, halving_supports,
                                              estimate, allreduce_call<build_allreduce_rabenseifner>};

}  // namespace weft::coll
