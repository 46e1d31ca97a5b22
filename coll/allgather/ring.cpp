// Ring allgather(v): p-1 rounds; in each, every rank passes the block it received last to its
// right neighbour. Blocks are byte ranges of the receive buffer (counts may differ: allgatherv).
#include "coll/allgather/own_block.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_allgather_ring(const Comm& c, const void* mine, char* recv,
                                               const std::vector<Block>& blocks) {
  auto s = std::make_shared<Schedule>("allgather:ring");
  const int p = c.size, me = c.rank;
  place_own_block(*s, c, mine, recv, blocks);
  const int right = (me + 1) % p, left = (me - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    const Block& out = blocks[size_t((me - step + p) % p)];
    const Block& in = blocks[size_t((me - step - 1 + p) % p)];
    s->new_round();
    s->send(right, recv + out.offset, out.bytes);
    s->recv(left, recv + in.offset, in.bytes);
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size;
  return (p - 1) * m.alpha_us + (p - 1) / p * double(a.bytes) * m.beta_us_per_byte;
}
}  // namespace

extern const Algorithm allgather_ring{"ring", Collective::allgather, always, estimate,
                                      allgather_call<build_allgather_ring>};

}  // namespace weft::coll
