// Shared-memory allgather(v): every rank publishes its block a slot-sized piece at a time; for
// each piece every rank waits for all the others' and copies them out. A call of n pieces
// (the largest block's) takes n consecutive operation numbers when it starts.
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "pieces.h"

namespace weft::coll {

namespace {
size_t largest_block(const CollArgs& a) {
  size_t most = 0;
  for (const Block& b : a.recv_blocks) most = std::max(most, b.bytes);
  return most;
}
bool supports(const CollArgs& a, const CollContext& ctx) {
  return shm::node_call(a, ctx) && a.recv_blocks.size() == size_t(ctx.comm.size);
}
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  if (!shm::model_known(m)) return std::numeric_limits<double>::infinity();
  const shm::SlotPieces pieces = shm::slot_pieces(shm::geometry_of(ctx), largest_block(a), ctx.comm.size);
  return pieces.count * (shm::flag_exchange_us(m, ctx.comm.size) + (ctx.comm.size + 1) * pieces.bytes * m.shm_beta_us_per_byte);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allgather:shm");
  const char* mine = static_cast<const char*>(a.send);  // in place: inside recv
  char* recv = static_cast<char*>(a.recv);
  auto blocks = std::make_shared<const std::vector<Block>>(a.recv_blocks);
  const size_t slot = shm::slot_bytes(shm::geometry_of(ctx), c.size), block = largest_block(a);
  // The part of rank r's block that piece k carries.
  auto part = [slot](const Block& b, size_t k) {
    const size_t at = std::min(b.bytes, k * slot);
    return Block{b.offset + at, std::min(slot, b.bytes - at)};
  };
  std::vector<shm::Operation> pieces;
  for (size_t k = 0; k * slot < block || pieces.empty(); ++k) {
    shm::Operation o;
    o.write = [mine, recv, blocks, part, k](shm::Segment& g, uint64_t op) {
      const Block& own = (*blocks)[size_t(g.rank())];
      const Block b = part(own, k);
      const char* from = mine + (b.offset - own.offset);
      if (b.bytes) memcpy(g.data(g.rank(), op, b.bytes), from, b.bytes);
      if (b.bytes && from != recv + b.offset) memcpy(recv + b.offset, from, b.bytes);
      return Status::ok;
    };
    o.read = [recv, blocks, part, k](shm::Segment& g, uint64_t op) {
      for (int i = 1; i < g.size(); ++i) {
        const int r = (g.rank() + i) % g.size();
        const Block b = part((*blocks)[size_t(r)], k);
        if (b.bytes) memcpy(recv + b.offset, g.data(r, op, b.bytes), b.bytes);
      }
      return Status::ok;
    };
    // Its own part written, every other rank's read.
    o.work = {std::min(slot, block) * size_t(c.size), 0};
    pieces.push_back(std::move(o));
  }
  shm::add_operations(*s, ctx, std::move(pieces));
  return s;
}
}  // namespace

extern const Algorithm allgather_shm{"shm", Collective::allgather, supports, estimate, build};

}  // namespace weft::coll
