// Bruck allgather: ceil(log2 p) rounds for any p, for equal blocks. A scratch buffer holds the
// blocks of ranks me, me+1, ... in that order; in round k a rank sends the first
// min(2^k, p - 2^k) blocks it holds to rank - 2^k and appends those of rank + 2^k. A final
// rotation copies the blocks into place. Latency-optimal for small blocks when p is not a
// power of two.
#include <algorithm>

#include "coll/algorithm.h"

namespace weft::coll {

namespace {

std::shared_ptr<Schedule> build_allgather_bruck(const Comm& c, const void* mine, char* recv,
                                                const std::vector<Block>& blocks) {
  auto s = std::make_shared<Schedule>("allgather:bruck");
  const int p = c.size, me = c.rank;
  const size_t b = blocks[size_t(me)].bytes;
  if (p == 1) {
    if (mine != recv + blocks[0].offset) {
      s->new_round();
      s->copy(mine, recv + blocks[0].offset, b);
    }
    return s;
  }
  // work[i]: the block of rank (me + i) % p.
  char* work = s->scratch(size_t(p) * b);
  for (int dist = 1; dist < p; dist <<= 1) {
    const int n = std::min(dist, p - dist);
    s->new_round();
    // The first round sends straight from the caller's block and stores it afterwards.
    s->send((me - dist + p) % p, dist == 1 ? mine : work, size_t(n) * b);
    s->recv((me + dist) % p, work + size_t(dist) * b, size_t(n) * b);
    if (dist == 1) s->copy(mine, work, b);
  }
  // Rotation: work[i] goes to rank (me + i) % p's block; runs of blocks that are adjacent in
  // both buffers move as one copy (two copies when the blocks lie in rank order).
  s->new_round();
  int i = 0;
  while (i < p) {
    const size_t dst = blocks[size_t((me + i) % p)].offset;
    int j = i + 1;
    while (j < p && blocks[size_t((me + j) % p)].offset == dst + size_t(j - i) * b) ++j;
    s->copy(work + size_t(i) * b, recv + dst, size_t(j - i) * b);
    i = j;
  }
  return s;
}

bool supports(const CollArgs& a, const CollContext&) { return a.uniform; }
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size, n = double(a.bytes);
  return ceil_log2(c.size) * m.alpha_us + (p - 1) / p * n * m.beta_us_per_byte + n * m.beta_us_per_byte;
}

}  // namespace

extern const Algorithm allgather_bruck{"bruck", Collective::allgather, supports, estimate,
                                       allgather_call<build_allgather_bruck>};

}  // namespace weft::coll
