// Pipelined chain broadcast: root -> root+1 -> ... -> root+p-1, the message cut into k
// segments; at each pipeline step a rank forwards segment j to its successor while it
// receives segment j+1 from its predecessor (one round per step). p - 2 + k steps of one
// segment each: for large messages on many ranks the time approaches n*beta, independent of p.
//
// Segment size: with k segments of s = n/k bytes the chain takes (p - 2 + k)(alpha + s*beta),
// least at s = sqrt(n*alpha / ((p - 2)*beta)). Builders see no cost model (only the call and
// the communicator, so that every rank cuts alike), so s uses a reference alpha/beta of 16 KiB
// (about 1.5 us of latency at 10 GB/s), rounded down to whole KiB and clamped to [8 KiB, n]:
// smaller segments would spend more on per-message overhead than the pipeline saves. With two
// ranks there is nothing to overlap, so the message goes whole. The estimate prices this same
// segmentation.
#include <algorithm>
#include <cmath>

#include "coll/algorithm.h"

namespace weft::coll {

namespace {
constexpr double kReferenceAlphaOverBeta = 16 * 1024;  // bytes
constexpr size_t kMinSegment = 8 * 1024;
}  // namespace

size_t bcast_chain_segment(size_t bytes, int p) {
  if (p <= 2 || bytes <= kMinSegment) return bytes;
  const double best = std::sqrt(double(bytes) * kReferenceAlphaOverBeta / double(p - 2));
  return std::clamp(size_t(best) / 1024 * 1024, kMinSegment, bytes);
}

std::shared_ptr<Schedule> build_bcast_chain(const Comm& c, void* buf, size_t bytes, int root,
                                            size_t segment) {
  auto s = std::make_shared<Schedule>("bcast:chain");
  const int p = c.size;
  if (p == 1 || bytes == 0) return s;
  if (segment == 0 || segment > bytes) segment = bytes;
  char* data = static_cast<char*>(buf);
  const int rel = (c.rank - root + p) % p;  // position in the chain
  const long k = long((bytes + segment - 1) / segment);
  auto seg_bytes = [&](long j) { return std::min(segment, bytes - size_t(j) * segment); };
  // Relative rank r receives segment j at step j + r - 1 and forwards it at step j + r.
  for (long step = 0; step < k + p - 2; ++step) {
    const long out = step - rel, in = step - rel + 1;
    const bool sends = rel + 1 < p && out >= 0 && out < k;
    const bool receives = rel > 0 && in >= 0 && in < k;
    if (!sends && !receives) continue;
    s->new_round();
    if (sends) s->send((c.rank + 1) % p, data + size_t(out) * segment, seg_bytes(out));
    if (receives) s->recv((c.rank - 1 + p) % p, data + size_t(in) * segment, seg_bytes(in));
  }
  return s;
}

namespace {
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const int p = c.size;
  if (p == 1 || a.bytes == 0) return 0;
  const size_t seg = bcast_chain_segment(a.bytes, p);
  const double k = double((a.bytes + seg - 1) / seg), n = double(a.bytes);
  return (p - 1 + k - 1) * (m.alpha_us + n / k * m.beta_us_per_byte);
}
std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_bcast_chain(c, a.recv, a.bytes, a.root, bcast_chain_segment(a.bytes, c.size));
}
}  // namespace

extern const Algorithm bcast_chain{"chain", Collective::bcast, always, estimate, build};

}  // namespace weft::coll
