// Shared-memory allreduce in two shots, a slot-sized piece of the vector at a time: every rank
// publishes its piece; each rank reduces its 1/p share of the piece over all ranks (in rank
// order) and publishes that; every rank copies the p reduced shares out. Each rank reads about
// twice the piece instead of p times (one shot), so it carries large vectors.
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "pieces.h"

namespace weft::coll {

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  if (!shm::model_known(m)) return std::numeric_limits<double>::infinity();
  const shm::SlotPieces pieces = shm::slot_pieces(shm::geometry_of(ctx), a.bytes, ctx.comm.size);
  // Per piece: two flag exchanges; copy in, read and reduce the shares, copy out.
  return pieces.count * (2 * shm::flag_exchange_us(m, ctx.comm.size) +
                         pieces.bytes * (3 * m.shm_beta_us_per_byte + m.gamma_us_per_byte));
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("allreduce:shm_two_shot", a.red);
  // The caller has put the input in recv (coll::plan copies it there when out of place).
  char* buf = static_cast<char*>(a.recv);
  const Reduction red = a.red;
  const size_t elem = red.elem_size;
  const size_t per_piece = std::max<size_t>(1, shm::slot_bytes(shm::geometry_of(ctx), c.size) / elem);  // elements
  const int p = c.size;
  // Rank j's share of a piece of n elements: [n*j/p, n*(j+1)/p).
  auto share = [p](size_t n, int j) { return std::pair<size_t, size_t>{n * size_t(j) / size_t(p), n * size_t(j + 1) / size_t(p)}; };
  std::vector<shm::Operation> ops;
  for (size_t first = 0; first < a.count || ops.empty(); first += per_piece) {
    const size_t n = std::min(per_piece, a.count - first);
    char* piece = buf + first * elem;
    const size_t bytes = n * elem;
    shm::Operation in;  // publish the piece
    in.write = [piece, bytes](shm::Segment& g, uint64_t op) {
      memcpy(g.data(g.rank(), op, bytes), piece, bytes);
      return Status::ok;
    };
    shm::Operation out;  // reduce and publish this rank's share, then gather every share
    out.write = [bytes, n, elem, red, share](shm::Segment& g, uint64_t op) {
      const auto [lo, hi] = share(n, g.rank());
      if (hi == lo) return Status::ok;
      const size_t at = lo * elem, len = (hi - lo) * elem;
      const uint64_t inputs = op - 1;
      char* acc = g.data(g.rank(), op, bytes) + at;
      memcpy(acc, g.data(g.size() - 1, inputs, bytes) + at, len);
      for (int r = g.size() - 2; r >= 0; --r) WEFT_TRY(red.apply(g.data(r, inputs, bytes) + at, acc, hi - lo));
      return Status::ok;
    };
    out.read = [piece, bytes, n, elem, share](shm::Segment& g, uint64_t op) {
      for (int r = 0; r < g.size(); ++r) {
        const auto [lo, hi] = share(n, r);
        if (hi > lo) memcpy(piece + lo * elem, g.data(r, op, bytes) + lo * elem, (hi - lo) * elem);
      }
      return Status::ok;
    };
    // The piece written; this rank's share combined from every rank's (p - 1 reductions) and
    // written; every share read back.
    in.work = {bytes, 0};
    out.work = {bytes / size_t(p) + bytes, bytes / size_t(p) * size_t(p - 1)};
    ops.push_back(std::move(in));
    ops.push_back(std::move(out));
  }
  shm::add_operations(*s, ctx, std::move(ops));
  return s;
}
}  // namespace

extern const Algorithm allreduce_shm_two_shot{"shm_two_shot", Collective::allreduce, shm::node_call, estimate,
                                              build};

}  // namespace weft::coll
