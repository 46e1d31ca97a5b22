// Binomial-tree reduce: log2 p levels. Commutative operations use a tree rooted at the root.
// Non-commutative ones use the tree rooted at rank 0, where every subtree is a contiguous range
// of ranks combined in order, and rank 0 then sends the result to the root.
#include <cstring>

#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_reduce_binomial(const Comm& c, const void* send, void* recv,
                                                size_t count, const Reduction& red, int root) {
  auto s = std::make_shared<Schedule>("reduce:binomial", red);
  const int p = c.size, me = c.rank;
  const int tree_root = red.commutative ? root : 0;
  const int rel = (me - tree_root + p) % p;
  const size_t bytes = count * red.elem_size;
  char* acc;
  s->new_round();
  if (me == root && tree_root == root) {
    acc = static_cast<char*>(recv);
    if (send != recv) s->copy(send, acc, bytes);
  } else {
    acc = s->scratch(bytes);
    s->copy(send, acc, bytes);
  }
  char* incoming = s->scratch(bytes);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (rel & mask) {
      s->new_round();
      s->send((rel - mask + tree_root) % p, acc, bytes);
      break;
    }
    if (rel + mask < p) {
      s->new_round();
      s->recv((rel + mask + tree_root) % p, incoming, bytes);
      if (red.commutative) {
        s->reduce(incoming, acc, count);
      } else {  // acc holds the lower ranks
        s->reduce(acc, incoming, count);
        s->copy(incoming, acc, bytes);
      }
    }
  }
  if (tree_root != root) {
    if (me == tree_root) {
      s->new_round();
      s->send(root, acc, bytes);
    }
    if (me == root) {
      s->new_round();
      s->recv(tree_root, recv, bytes);
    }
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double n = double(a.bytes);
  double t = ceil_log2(c.size) * (m.alpha_us + n * (m.beta_us_per_byte + m.gamma_us_per_byte));
  if (!a.red.commutative && a.root != 0) t += m.alpha_us + n * m.beta_us_per_byte;
  return t;
}
}  // namespace

extern const Algorithm reduce_binomial{"binomial", Collective::reduce, always, estimate,
                                       reduce_call<build_reduce_binomial>};

}  // namespace weft::coll
