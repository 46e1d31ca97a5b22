// Neighbourhood allgather and alltoall: every send to a destination and every receive from a
// source posted at once. On a cartesian topology the neighbours come in (-1, +1) pairs per
// dimension; the two directions run in separate rounds, so that when both neighbours are the
// same rank (a periodic dimension of 1 or 2) each message still lands in the right block.
#include "coll/algorithm.h"

namespace weft::coll {

namespace {

void exchange(Schedule& s, const CollArgs& a, size_t to, size_t from) {
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  if (to < a.destinations.size() && a.destinations[to] >= 0)
    s.send(a.destinations[to], send + a.send_blocks[to].offset, a.send_blocks[to].bytes);
  if (from < a.sources.size() && a.sources[from] >= 0)
    s.recv(a.sources[from], recv + a.recv_blocks[from].offset, a.recv_blocks[from].bytes);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext&) {
  auto s = std::make_shared<Schedule>(a.coll == Collective::neighbor_allgather ? "neighbor_allgather:linear"
                                                                             : "neighbor_alltoall:linear");
  if (a.cartesian) {
    // Round 2d: send towards -1, receive from +1; round 2d+1: the other way.
    for (size_t d = 0; 2 * d < a.destinations.size(); ++d) {
      s->new_round();
      exchange(*s, a, 2 * d, 2 * d + 1);
      s->new_round();
      exchange(*s, a, 2 * d + 1, 2 * d);
    }
    return s;
  }
  s->new_round();
  for (size_t i = 0; i < a.sources.size(); ++i) exchange(*s, a, SIZE_MAX, i);
  for (size_t i = 0; i < a.destinations.size(); ++i) exchange(*s, a, i, SIZE_MAX);
  return s;
}

double estimate(const CollArgs& a, const CollContext&, const CostModel& m) {
  const double msgs = double(a.sources.size() + a.destinations.size());
  return msgs * m.alpha_us + double(a.bytes) * m.beta_us_per_byte;
}

}  // namespace

extern const Algorithm neighbor_allgather_linear{"linear", Collective::neighbor_allgather, always,
                                                 estimate, build};
extern const Algorithm neighbor_alltoall_linear{"linear", Collective::neighbor_alltoall, always,
                                                estimate, build};

}  // namespace weft::coll
