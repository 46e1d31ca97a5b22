// Shared-memory broadcast: the root copies the buffer into its slots a slot at a time and
// publishes each piece; every other rank waits for that one flag and copies the piece out. The
// root runs up to `slots` pieces ahead of the slowest reader, so copying in and out overlap.
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "pieces.h"

namespace weft::coll {

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  if (!shm::model_known(m)) return std::numeric_limits<double>::infinity();
  const shm::SlotPieces pieces = shm::slot_pieces(shm::geometry_of(ctx), a.bytes, ctx.comm.size);
  // One hand-off and one copy per piece, pipelined; the root checks every reader's progress
  // once per round of slots.
  return (pieces.count + 1) * (m.shm_alpha_us + pieces.bytes * m.shm_beta_us_per_byte) +
         pieces.count / shm::geometry_of(ctx).slots * shm::flag_exchange_us(m, ctx.comm.size);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("bcast:shm");
  char* buf = static_cast<char*>(a.recv);
  const int root = a.root;
  const size_t slot = shm::slot_bytes(shm::geometry_of(ctx), c.size);
  std::vector<shm::Operation> pieces;
  for (size_t at = 0; at < a.bytes || pieces.empty(); at += slot) {
    const size_t bytes = std::min(slot, a.bytes - at);
    char* piece = buf + at;
    shm::Operation o;
    o.publishes = c.rank == root;
    o.waits = c.rank != root;
    o.wait_rank = root;
    o.write = [piece, bytes](shm::Segment& g, uint64_t op) { memcpy(g.data(g.rank(), op, bytes), piece, bytes); return Status::ok; };
    o.read = [piece, bytes, root](shm::Segment& g, uint64_t op) {
      if (g.rank() != root) memcpy(piece, g.data(root, op, bytes), bytes);
      return Status::ok;
    };
    o.work = {bytes, 0};  // the root writes the piece, the others read it
    pieces.push_back(std::move(o));
  }
  shm::add_operations(*s, ctx, std::move(pieces));
  return s;
}
}  // namespace

extern const Algorithm bcast_shm{"shm", Collective::bcast, shm::node_call, estimate, build};

}  // namespace weft::coll
