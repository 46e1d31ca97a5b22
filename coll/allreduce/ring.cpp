// Ring allreduce: reduce-scatter then allgather around the ring, 2(p-1) steps each moving
// 1/p of the vector; bandwidth-optimal for large messages. Commutative operations only. The two
// halves are built apart as well, for compositions (coll/hier/allreduce_multi_leader.cpp).
#include <algorithm>

#include "coll/algorithm.h"

namespace weft::coll {

size_t ring_segment_start(size_t count, int p, int k) {
  return count / size_t(p) * size_t(k) + std::min<size_t>(size_t(k), count % size_t(p));
}

std::shared_ptr<Schedule> build_ring_reduce_scatter_in_place(const Comm& c, void* buf, size_t count,
                                                             const Reduction& red) {
  auto s = std::make_shared<Schedule>("allreduce:ring", red);
  const int p = c.size, me = c.rank;
  if (p == 1 || count == 0) return s;
  char* data = static_cast<char*>(buf);
  const size_t es = red.elem_size;
  auto start = [&](int k) { return ring_segment_start(count, p, k); };
  auto seg_count = [&](int k) { return start(k + 1) - start(k); };
  const int right = (me + 1) % p, left = (me - 1 + p) % p;
  char* incoming = s->scratch((count / size_t(p) + 1) * es);
  for (int step = 0; step < p - 1; ++step) {
    int send_seg = (me - step + p) % p, recv_seg = (me - step - 1 + p) % p;
    s->new_round();
    s->send(right, data + start(send_seg) * es, seg_count(send_seg) * es);
    s->recv(left, incoming, seg_count(recv_seg) * es);
    s->reduce(incoming, data + start(recv_seg) * es, seg_count(recv_seg));
  }
  return s;
}

std::shared_ptr<Schedule> build_ring_allgather_in_place(const Comm& c, void* buf, size_t count,
                                                        size_t elem_size) {
  auto s = std::make_shared<Schedule>("allreduce:ring");
  const int p = c.size, me = c.rank;
  if (p == 1 || count == 0) return s;
  char* data = static_cast<char*>(buf);
  auto start = [&](int k) { return ring_segment_start(count, p, k); };
  auto seg_count = [&](int k) { return start(k + 1) - start(k); };
  const int right = (me + 1) % p, left = (me - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    int send_seg = (me + 1 - step + p) % p, recv_seg = (me - step + p) % p;
    s->new_round();
    s->send(right, data + start(send_seg) * elem_size, seg_count(send_seg) * elem_size);
    s->recv(left, data + start(recv_seg) * elem_size, seg_count(recv_seg) * elem_size);
  }
  return s;
}

std::shared_ptr<Schedule> build_allreduce_ring(const Comm& c, void* buf, size_t count,
                                               const Reduction& red) {
  auto s = build_ring_reduce_scatter_in_place(c, buf, count, red);
  auto gather = build_ring_allgather_in_place(c, buf, count, red.elem_size);
  s->append(*gather);
  return s;
}

namespace {
bool supports(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return a.red.commutative && a.count >= size_t(c.size);
}
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const double p = c.size, n = double(a.bytes);
  return 2 * (p - 1) * m.alpha_us + 2 * (p - 1) / p * n * m.beta_us_per_byte +
         (p - 1) / p * n * m.gamma_us_per_byte;
}
}  // namespace

extern const Algorithm allreduce_ring{"ring", Collective::allreduce, supports, estimate,
                                      allreduce_call<build_allreduce_ring>};

}  // namespace weft::coll
