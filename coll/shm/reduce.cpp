// Shared-memory reduce: every rank publishes its vector; the root waits for all of them and
// reduces them in rank order. Up to one slot per rank.
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
  auto s = std::make_shared<Schedule>("reduce:shm");
  s->set_reduction(a.red);
  const char* send = static_cast<const char*>(a.send);  // at an in-place root: recv
  char* recv = static_cast<char*>(a.recv);
  const size_t bytes = a.bytes, count = a.count;
  const Reduction red = a.red;
  const int root = a.root;
  shm::Operation o;
  o.waits = c.rank == root;
  o.write = [send, bytes](shm::Segment& g, uint64_t op) { memcpy(g.data(g.rank(), op, bytes), send, bytes); return Status::ok; };
  o.read = [recv, bytes, count, red, root](shm::Segment& g, uint64_t op) {
    if (g.rank() != root) return Status::ok;
    const int p = g.size();
    memcpy(recv, g.data(p - 1, op, bytes), bytes);
    for (int r = p - 2; r >= 0; --r) WEFT_TRY(red.apply(g.data(r, op, bytes), recv, count));
    return Status::ok;
  };
  shm::add_operation(*s, c, std::move(o));
  return s;
}
}  // namespace

extern const Algorithm reduce_shm{"shm", Collective::reduce, supports, estimate, build};

}  // namespace weft::coll
