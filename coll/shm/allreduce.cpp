// Shared-memory allreduce (one shot): every rank publishes its vector, then reduces all of them
// itself in rank order, so every rank computes the same result bit for bit and non-commutative
// operations are applied in order. Up to one slot per rank.
#include <cstring>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  auto s = std::make_shared<Schedule>("allreduce:shm", a.red);
  // The caller has put the input in recv (coll::plan copies it there when out of place).
  char* buf = static_cast<char*>(a.recv);
  const size_t bytes = a.bytes, count = a.count;
  const Reduction red = a.red;
  shm::Operation o;
  o.write = [buf, bytes](shm::Segment& g, uint64_t op) {
    memcpy(g.data(g.rank(), op, bytes), buf, bytes);
    return Status::ok;
  };
  o.read = [buf, bytes, count, red](shm::Segment& g, uint64_t op) {
    return shm::reduce_published(g, op, bytes, count, red, buf);
  };
  // Publishes its vector, then combines every rank's (p - 1 reductions).
  o.work = {bytes, bytes * size_t(std::max(0, ctx.comm.size - 1))};
  shm::add_operation(*s, ctx, std::move(o));
  return s;
}
}  // namespace

extern const Algorithm allreduce_shm{"shm", Collective::allreduce, shm::fits_one_slot, shm::one_shot_us, build};

}  // namespace weft::coll
