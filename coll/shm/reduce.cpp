// Shared-memory reduce: every rank publishes its vector; the root waits for all of them and
// reduces them in rank order. Up to one slot per rank.
#include <cstring>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("reduce:shm", a.red);
  const char* send = static_cast<const char*>(a.send);  // at an in-place root: recv
  char* recv = static_cast<char*>(a.recv);
  const size_t bytes = a.bytes, count = a.count;
  const Reduction red = a.red;
  const int root = a.root;
  shm::Operation o;
  o.waits = c.rank == root;
  o.write = [send, bytes](shm::Segment& g, uint64_t op) {
    memcpy(g.data(g.rank(), op, bytes), send, bytes);
    return Status::ok;
  };
  o.read = [recv, bytes, count, red, root](shm::Segment& g, uint64_t op) {
    return g.rank() == root ? shm::reduce_published(g, op, bytes, count, red, recv) : Status::ok;
  };
  o.work = {bytes, c.rank == root ? bytes * size_t(std::max(0, c.size - 1)) : 0};
  shm::add_operation(*s, ctx, std::move(o));
  return s;
}
}  // namespace

extern const Algorithm reduce_shm{"shm", Collective::reduce, shm::fits_one_slot, shm::one_shot_us, build};

}  // namespace weft::coll
