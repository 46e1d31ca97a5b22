// Shared-memory barrier: every rank publishes the operation's number and waits until it sees
// every other rank's.
#include <limits>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
bool supports(const CollArgs&, const Comm& c) { return c.single_node && c.size > 1; }
double estimate(const CollArgs&, const Comm& c, const CostModel& m) {
  return shm::model_known(m) ? shm::flag_exchange_us(m, c.size) : std::numeric_limits<double>::infinity();
}
std::shared_ptr<Schedule> build(const CollArgs&, const Comm& c) {
  auto s = std::make_shared<Schedule>("barrier:shm");
  shm::add_operation(*s, c, shm::Operation{});
  return s;
}
}  // namespace

extern const Algorithm barrier_shm{"shm", Collective::barrier, supports, estimate, build};

}  // namespace weft::coll
