// Pairwise-exchange alltoall(v,w): p-1 rounds; in round k a rank sends to rank + k and
// receives from rank - k, so every pair exchanges exactly once and no rank is flooded.
#include "coll/algorithm.h"

namespace weft::coll {

std::shared_ptr<Schedule> build_alltoall_pairwise(const Comm& c, const char* send,
                                                  const std::vector<Block>& send_blocks, char* recv,
                                                  const std::vector<Block>& recv_blocks) {
  auto s = std::make_shared<Schedule>("alltoall:pairwise");
  const int p = c.size, me = c.rank;
  s->new_round();
  const Block& so = send_blocks[size_t(me)];
  const Block& ro = recv_blocks[size_t(me)];
  s->copy(send + so.offset, recv + ro.offset, ro.bytes);
  for (int k = 1; k < p; ++k) {
    int to = (me + k) % p, from = (me - k + p) % p;
    s->new_round();
    s->send(to, send + send_blocks[size_t(to)].offset, send_blocks[size_t(to)].bytes);
    s->recv(from, recv + recv_blocks[size_t(from)].offset, recv_blocks[size_t(from)].bytes);
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size;
  return (p - 1) * (m.alpha_us + double(a.bytes) / p * m.beta_us_per_byte);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_alltoall_pairwise(c, static_cast<const char*>(a.send), a.send_blocks,
                                 static_cast<char*>(a.recv), a.recv_blocks);
}
}  // namespace

extern const Algorithm alltoall_pairwise{"pairwise", Collective::alltoall, always, estimate, build};

}  // namespace weft::coll
