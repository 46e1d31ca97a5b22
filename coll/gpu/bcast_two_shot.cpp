// bcast gpu_bcast_two_shot (scatter + allgather): per slot-sized piece, the root copies the
// piece into its slot, a barrier, each other rank r copies share r of it out of the root's slot
// into its own slot, a second barrier, and every rank but the root copies each share out of its
// holder's slot into its buffer (the root's own share from the root's slot). The root's memory
// is read about once per piece instead of p - 1 times (gpu_bcast): for large messages, where
// the root's link or memory would be the bottleneck. Two barriers per piece keep the slot rule
// (workspace.h). Kernels allowed only.
#include <algorithm>

#include "steps.h"

namespace weft::coll::gpu {

namespace {

Status enqueue_bcast_two_shot(GpuWorkspace& ws, char* buf, size_t bytes, int root, cudaStream_t s) {
  const size_t p = size_t(ws.size);
  for (size_t off = 0; off < bytes; off += ws.half) {
    const Shares sh(std::min(ws.half, bytes - off), p, 1);
    const uint64_t piece = ws.pieces++;
    if (ws.rank == root) WEFT_CUDA_TRY(cudaMemcpyAsync(ws.slot(root, piece), buf + off, sh.n, cudaMemcpyDefault, s));
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    const size_t me = size_t(ws.rank);
    if (ws.rank != root) WEFT_TRY(copy_share(ws.slot(ws.rank, piece), ws.slot(root, piece), sh, me, 1, s));
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    if (ws.rank == root) continue;
    for (size_t q = 0; q < p; ++q) WEFT_TRY(copy_share(buf + off, ws.slot(int(q), piece), sh, q, 1, s));
  }
  return Status::ok;
}

// A rough model, printed with the choice: the launch floor (about 10 us), two barriers, and
// the vector copied in, scattered and gathered at about 2.1 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  const Comm& c = ctx.comm;
  return kLaunchUs + 4 + c.size * 0.5 + double(a.bytes) * (2 + 1.0 / c.size) / kCopyBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_bcast<enqueue_bcast_two_shot>("gpu_bcast_two_shot", a, c);
}

}  // namespace

extern const Algorithm bcast_gpu_two_shot{"gpu_bcast_two_shot", Collective::bcast, supports_bcast_kernels,
                                          ruled_estimate<estimate, bcast_gpu_two_shot>, build};

}  // namespace weft::coll::gpu
