// bcast gpu_bcast_ring (a pipelined chain): per slot-sized piece, a barrier (the slot rule:
// every peer has finished the pieces before), the root copies the piece into its slot, and the
// piece flows along the ring from the root in C chunks. At step t every rank publishes the step
// and waits for its left neighbour alone; the rank at distance d >= 1 from the root then copies
// chunk t - d + 1 out of its left neighbour's slot (complete since the neighbour's step t - 1)
// into its own slot and buffer. C + p - 2 steps move the whole piece, different ranks working
// on different chunks at once. Each step reads only the left neighbour's memory: for GPUs
// linked in a ring; forced with WEFT_COLL_TUNE=bcast:@gpu_bcast_ring, never chosen by the rule
// on one node where every pair is linked. Kernels allowed only.
#include <algorithm>

#include "steps.h"

namespace weft::coll::gpu {

namespace {

constexpr size_t kMaxChunks = 8;
constexpr size_t kMinChunkBytes = size_t(64) << 10;

Status enqueue_bcast_ring(GpuWorkspace& ws, char* buf, size_t bytes, int root, cudaStream_t s) {
  const size_t p = size_t(ws.size);
  const size_t d = (size_t(ws.rank) + p - size_t(root)) % p;
  const int left = int((size_t(ws.rank) + p - 1) % p);
  for (size_t off = 0; off < bytes; off += ws.half) {
    const size_t n = std::min(ws.half, bytes - off);
    const size_t chunks = std::clamp<size_t>(n / kMinChunkBytes, 1, kMaxChunks);
    const Shares sh(n, chunks, 1);
    const uint64_t piece = ws.pieces++;
    char* mine = ws.slot(ws.rank, piece);
    const char* theirs = ws.slot(left, piece);
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    if (d == 0) WEFT_CUDA_TRY(cudaMemcpyAsync(mine, buf + off, n, cudaMemcpyDefault, s));
    for (size_t t = 0; t + 2 < chunks + p; ++t) {
      WEFT_TRY(enqueue_flag_wait_one(ws, left, s));
      if (d == 0 || t + 1 < d || t + 1 - d >= chunks) continue;
      const size_t k = t + 1 - d, lo = sh.lo(k), len = sh.hi(k) - lo;
      if (len == 0) continue;
      if (d + 1 == p) {  // the end of the chain: nobody reads this rank's slot
        WEFT_CUDA_TRY(cudaMemcpyAsync(buf + off + lo, theirs + lo, len, cudaMemcpyDefault, s));
        continue;
      }
      WEFT_CUDA_TRY(cudaMemcpyAsync(mine + lo, theirs + lo, len, cudaMemcpyDefault, s));
      WEFT_CUDA_TRY(cudaMemcpyAsync(buf + off + lo, mine + lo, len, cudaMemcpyDefault, s));
    }
  }
  return Status::ok;
}

// A rough model, printed with the choice: a barrier and C + p - 2 steps of a launch and a
// pairwise flag each, and the vector copied twice per rank at about 2.1 TB/s (one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  const Comm& c = ctx.comm;
  return kLaunchUs + 2 + (8.0 + c.size) * kStepUs + double(a.bytes) * 2 / kCopyBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_bcast<enqueue_bcast_ring>("gpu_bcast_ring", a, c);
}

}  // namespace

extern const Algorithm bcast_gpu_ring{"gpu_bcast_ring", Collective::bcast, supports_bcast_kernels,
                                      ruled_estimate<estimate, bcast_gpu_ring>,
                                       build};

}  // namespace weft::coll::gpu
