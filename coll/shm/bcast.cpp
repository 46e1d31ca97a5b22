// Shared-memory broadcast: the root copies the buffer into its slot and publishes it; every
// other rank waits for that one flag and copies the data out. Up to one slot of data.
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
bool supports(const CollArgs& a, const Comm& c) {
  return c.single_node && c.size > 1 && a.bytes <= shm::geometry().slot_bytes;
}
double estimate(const CollArgs& a, const Comm&, const CostModel& m) {
  if (!shm::model_known(m)) return std::numeric_limits<double>::infinity();
  return m.shm_alpha_us + 2 * double(a.bytes) * m.shm_beta_us_per_byte;
}
std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  auto s = std::make_shared<Schedule>("bcast:shm");
  char* buf = static_cast<char*>(a.recv);
  const size_t bytes = a.bytes;
  const int root = a.root;
  shm::Operation o;
  o.publishes = c.rank == root;
  o.waits = c.rank != root;
  o.wait_rank = root;
  o.write = [buf, bytes](shm::Segment& g, uint64_t op) { memcpy(g.data(g.rank(), op, bytes), buf, bytes); };
  o.read = [buf, bytes, root](shm::Segment& g, uint64_t op) {
    if (g.rank() != root) memcpy(buf, g.data(root, op, bytes), bytes);
    return Status::ok;
  };
  shm::add_operation(*s, c, std::move(o));
  return s;
}
}  // namespace

extern const Algorithm bcast_shm{"shm", Collective::bcast, supports, estimate, build};

}  // namespace weft::coll
