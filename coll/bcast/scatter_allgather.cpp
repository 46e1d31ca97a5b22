// Scatter-allgather broadcast (van de Geijn): the root scatters the message in p segments down
// a binomial tree, then a ring allgather circulates them. Every rank receives about 2(p-1)/p of
// the message instead of log2 p copies of it, so it wins for large messages. The ring skips a
// segment its receiver already holds from the scatter (the root receives nothing, so its buffer
// is only read), and empty segments (fewer bytes than ranks) are not sent at all.
#include <algorithm>

#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_bcast_scatter_allgather(const Comm& c, void* buf, size_t bytes, int root) {
  auto s = std::make_shared<Schedule>("bcast:scatter_allgather");
  const int p = c.size;
  if (p == 1) return s;
  char* data = static_cast<char*>(buf);
  const int rel = (c.rank - root + p) % p;  // ranks relative to the root
  auto real = [&](int r) { return (r + root) % p; };
  // Segment k, for relative rank k, covers bytes [start(k), start(k + 1)).
  auto start = [&](int k) {
    return bytes / size_t(p) * size_t(k) + std::min<size_t>(size_t(k), bytes % size_t(p));
  };
  // The scatter leaves relative rank r its binomial subtree's segments, [r, held_end(r)).
  auto lowest_bit = [&](int r) {
    int low = 1;
    while (low < p && !(r & low)) low <<= 1;
    return low;  // rank 0: the first power of two >= p
  };
  auto held_end = [&](int r) { return std::min(r + lowest_bit(r), p); };
  auto holds = [&](int r, int k) { return k >= r && k < held_end(r); };

  // Scatter: receive my subtree's segments from the parent, pass each child its subtree's.
  const int low = lowest_bit(rel);
  if (rel != 0 && start(held_end(rel)) > start(rel)) {
    s->next_round();
    s->recv(real(rel - low), data + start(rel), start(held_end(rel)) - start(rel));
  }
  s->next_round();
  for (int m = low >> 1; m > 0; m >>= 1) {  // the largest subtree first
    const int child = rel + m;
    if (child < p && start(held_end(child)) > start(child))
      s->send(real(child), data + start(child), start(held_end(child)) - start(child));
  }

  // Ring allgather: at step t, pass segment rel - t to the right, take rel - t - 1 from the left.
  const int right = (rel + 1) % p, left = (rel - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    const int out = (rel - step + p) % p, in = (rel - step - 1 + p) % p;
    s->next_round();
    if (!holds(right, out) && start(out + 1) > start(out))
      s->send(real(right), data + start(out), start(out + 1) - start(out));
    if (!holds(rel, in) && start(in + 1) > start(in))
      s->recv(real(left), data + start(in), start(in + 1) - start(in));
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size, n = double(a.bytes);
  return (ceil_log2(c.size) + p - 1) * m.alpha_us + 2 * (p - 1) / p * n * m.beta_us_per_byte;
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_bcast_scatter_allgather(c, a.recv, a.bytes, a.root);
}
}  // namespace

extern const Algorithm bcast_scatter_allgather{"scatter_allgather", Collective::bcast, always, estimate, build};

}  // namespace weft::coll
