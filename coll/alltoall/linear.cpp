// Linear alltoall(v,w): every receive and every send posted at once in one round (sends in the
// order rank + 1, rank + 2, ... so that the ranks do not all start with the same peer). No rank
// waits for a partner between messages, so a message costs its sender only the gap between
// sends; the pairwise exchange pays a full latency per partner instead.
#include <limits>

#include "coll/algorithm.h"

namespace weft::coll {

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (m.gap_us <= 0) return std::numeric_limits<double>::infinity();  // not measured
  const double p = c.size;
  return m.alpha_us + (p - 1) * (m.gap_us + double(a.bytes) / p * m.beta_us_per_byte);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("alltoall:linear");
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  const int p = c.size, me = c.rank;
  s->new_round();
  for (int k = 1; k < p; ++k) {
    const int from = (me - k + p) % p;
    s->recv(from, recv + a.recv_blocks[size_t(from)].offset, a.recv_blocks[size_t(from)].bytes);
  }
  for (int k = 1; k < p; ++k) {
    const int to = (me + k) % p;
    s->send(to, send + a.send_blocks[size_t(to)].offset, a.send_blocks[size_t(to)].bytes);
  }
  const Block& so = a.send_blocks[size_t(me)];
  const Block& ro = a.recv_blocks[size_t(me)];
  s->copy(send + so.offset, recv + ro.offset, ro.bytes);
  return s;
}
}  // namespace

extern const Algorithm alltoall_linear{"linear", Collective::alltoall, always, estimate, build};

}  // namespace weft::coll
