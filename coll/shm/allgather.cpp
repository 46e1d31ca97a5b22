// Shared-memory allgather(v): every rank publishes its block, then copies every other rank's
// block out of the segment. Blocks of up to one slot each.
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "segment.h"

namespace weft::coll {

namespace {
size_t largest_block(const CollArgs& a) {
  size_t most = 0;
  for (const Block& b : a.recv_blocks) most = std::max(most, b.bytes);
  return most;
}
bool supports(const CollArgs& a, const Comm& c) {
  return c.single_node && c.size > 1 && a.recv_blocks.size() == size_t(c.size) &&
         largest_block(a) <= shm::geometry().slot_bytes;
}
double estimate(const CollArgs& a, const Comm& c, const CostModel& m) {
  if (!shm::model_known(m)) return std::numeric_limits<double>::infinity();
  const double block = double(largest_block(a));
  return shm::flag_exchange_us(m, c.size) + (c.size + 1) * block * m.shm_beta_us_per_byte;
}
std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  auto s = std::make_shared<Schedule>("allgather:shm");
  const char* mine = static_cast<const char*>(a.send);  // in place: inside recv
  char* recv = static_cast<char*>(a.recv);
  const std::vector<Block> blocks = a.recv_blocks;
  shm::Operation o;
  o.write = [mine, recv, blocks](shm::Segment& g, uint64_t op) {
    const Block& b = blocks[size_t(g.rank())];
    if (b.bytes) memcpy(g.data(g.rank(), op, b.bytes), mine, b.bytes);
    if (mine != recv + b.offset) memcpy(recv + b.offset, mine, b.bytes);
  };
  o.read = [recv, blocks](shm::Segment& g, uint64_t op) {
    for (int r = 0; r < g.size(); ++r) {
      const Block& b = blocks[size_t(r)];
      if (r != g.rank() && b.bytes) memcpy(recv + b.offset, g.data(r, op, b.bytes), b.bytes);
    }
    return Status::ok;
  };
  shm::add_operation(*s, c, std::move(o));
  return s;
}
}  // namespace

extern const Algorithm allgather_shm{"shm", Collective::allgather, supports, estimate, build};

}  // namespace weft::coll
