// Shared-memory allreduce (one shot): every rank publishes its vector, then reduces all of them
// itself in rank order, so every rank computes the same result bit for bit and non-commutative
// operations are applied in order. Up to one slot per rank.
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
bool supports(const CollArgs& a, const Comm& c) {
  return c.single_node && c.size > 1 && a.bytes <= shm::slot_bytes(c.size);
}
double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  if (!shm::model_known(m)) return std::numeric_limits<double>::infinity();
  const double n = double(a.bytes);
  return shm::flag_exchange_us(m, c.size) + n * m.shm_beta_us_per_byte +
         c.size * n * (m.shm_beta_us_per_byte + m.gamma_us_per_byte);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  auto s = std::make_shared<Schedule>("allreduce:shm");
  s->set_reduction(a.red);
  // The caller has put the input in recv (coll::plan copies it there when out of place).
  char* buf = static_cast<char*>(a.recv);
  const size_t bytes = a.bytes, count = a.count;
  const Reduction red = a.red;
  shm::Operation o;
  o.write = [buf, bytes](shm::Segment& g, uint64_t op) { memcpy(g.data(g.rank(), op, bytes), buf, bytes); return Status::ok; };
  o.read = [buf, bytes, count, red](shm::Segment& g, uint64_t op) {
    const int p = g.size();
    memcpy(buf, g.data(p - 1, op, bytes), bytes);
    for (int r = p - 2; r >= 0; --r) WEFT_TRY(red.apply(g.data(r, op, bytes), buf, count));
    return Status::ok;
  };
  shm::add_operation(*s, c, std::move(o));
  return s;
}
}  // namespace

extern const Algorithm allreduce_shm{"shm", Collective::allreduce, supports, estimate, build};

}  // namespace weft::coll
