// Rabenseifner reduce: a reduce-scatter by recursive halving (each of log2 p' steps exchanges
// half of the remaining range with a partner and reduces the half kept), then a binomial gather
// of the reduced pieces to the root. A rank sends about (p-1)/p of the vector in each phase
// and reduces (p-1)/p of it once, where the binomial tree moves and reduces up to log2 p whole
// vectors, so it wins for large vectors.
// Commutative operations only: the halving combines ranks out of order. Ranks are numbered
// relative to the root; with p not a power of two, the odd ranks among the first 2*rem fold
// their vector into the even rank below them and leave, so the root (relative rank 0) always
// takes part and no final hop is needed. Needs count >= p' (a piece per remaining rank).
#include "coll/reduce/halving.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_reduce_rabenseifner(const Comm& c, const void* send, void* recv,
                                                    size_t count, const Reduction& red, int root) {
  auto s = std::make_shared<Schedule>("reduce:rabenseifner", red);
  const int p = c.size;
  const int rel = (c.rank - root + p) % p;
  auto real = [&](int r) { return (r + root) % p; };
  const size_t es = red.elem_size, bytes = count * es;
  const int pof2 = floor_pof2(p), rem = p - pof2;

  if (rel < 2 * rem && rel % 2 == 1) {  // folded out: contribute and leave
    s->new_round();
    s->send(real(rel - 1), send, bytes);
    return s;
  }
  char* acc;
  if (rel == 0) {
    acc = static_cast<char*>(recv);
    if (send != recv) s->copy(send, acc, bytes);
  } else {
    acc = s->scratch(bytes);
    s->copy(send, acc, bytes);
  }
  if (p == 1) return s;
  char* incoming = s->scratch(bytes);
  int vrank;  // rank among the pof2 that take part
  if (rel < 2 * rem) {
    s->next_round();
    s->recv(real(rel + 1), incoming, bytes);
    s->reduce(incoming, acc, count);
    vrank = rel / 2;
  } else {
    vrank = rel - rem;
  }
  auto peer_of = [&](int v) { return real(v < rem ? v * 2 : v + rem); };
  // Piece k ends up at vrank k.
  const EvenPieces piece{count, pof2};
  reduce_scatter_halving(*s, acc, incoming, es, piece, vrank, peer_of);

  // Binomial gather to vrank 0: take the children's pieces (one round), pass mine and theirs up.
  int low = 1;
  while (low < pof2 && !(vrank & low)) low <<= 1;
  s->next_round();
  for (int m = 1; m < low; m <<= 1)
    s->recv(peer_of(vrank + m), acc + piece.start(vrank + m) * es,
            piece.elems(vrank + m, vrank + 2 * m) * es);
  if (vrank != 0) {
    s->next_round();
    s->send(peer_of(vrank - low), acc + piece.start(vrank) * es,
            piece.elems(vrank, vrank + low) * es);
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const int pof2 = floor_pof2(c.size);
  const double n = double(a.bytes);
  double t = halving_and_mirror_us(pof2, n, m);
  if (pof2 != c.size) t += m.alpha_us + n * (m.beta_us_per_byte + m.gamma_us_per_byte);  // the fold
  return t;
}
}  // namespace

extern const Algorithm reduce_rabenseifner{"rabenseifner", Collective::reduce, halving_supports, estimate,
                                           reduce_call<build_reduce_rabenseifner>};

}  // namespace weft::coll
