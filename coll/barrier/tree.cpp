// Tree barrier: a binomial fan-in to rank 0, then a binomial fan-out from it, 2*ceil(log2 p)
// levels of zero-byte messages. Rank 0 talks to log2 p ranks and a leaf to one, where the
// dissemination barrier has every rank send ceil(log2 p) messages; a rank's children are
// received (and later signalled) in one round, and its report to the parent shares a round
// with the wait for the parent's release.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_barrier_tree(const Comm& c) {
  auto s = std::make_shared<Schedule>("barrier:tree");
  const int p = c.size, me = c.rank;
  // The parent is the rank without my lowest set bit; the children are me + m for every power
  // of two m below it (rank 0: below p).
  int low = 1;
  while (low < p && !(me & low)) low <<= 1;
  const bool has_children = me + 1 < p && low > 1;
  if (has_children) {
    s->next_round();
    for (int m = 1; m < low && me + m < p; m <<= 1) s->recv(me + m, nullptr, 0);
  }
  if (me != 0) {
    s->next_round();
    s->send(me - low, nullptr, 0);
    s->recv(me - low, nullptr, 0);
  }
  if (has_children) {
    s->next_round();
    for (int m = low >> 1; m > 0; m >>= 1)  // the largest subtree first
      if (me + m < p) s->send(me + m, nullptr, 0);
  }
  return s;
}

namespace {
double estimate(const CollArgs&, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  return 2 * ceil_log2(c.size) * m.alpha_us;
}
std::shared_ptr<Schedule> build(const CollArgs&, const CollContext& ctx) { return build_barrier_tree(ctx.comm); }
}  // namespace

extern const Algorithm barrier_tree{"tree", Collective::barrier, always, estimate, build};

}  // namespace weft::coll
