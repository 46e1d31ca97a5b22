// Shared-memory barrier: every rank publishes the operation's number and waits until it sees
// every other rank's.
#include <limits>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
bool supports(const CollArgs& a, const CollContext& ctx) {
  return ctx.comm.single_node && ctx.comm.size > 1 && !a.any_start_order;
}
double estimate(const CollArgs&, const CollContext& ctx, const CostModel& m) {
  return shm::model_known(m) ? shm::flag_exchange_us(m, ctx.comm.size) : std::numeric_limits<double>::infinity();
}
std::shared_ptr<Schedule> build(const CollArgs&, const CollContext& ctx) {
  auto s = std::make_shared<Schedule>("barrier:shm");
  shm::add_operation(*s, ctx, shm::Operation{});
  return s;
}
}  // namespace

extern const Algorithm barrier_shm{"shm", Collective::barrier, supports, estimate, build};

}  // namespace weft::coll
