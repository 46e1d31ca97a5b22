// allgather gpu_allgather_ring: the slot holds p blocks of a piece (a piece is at most a p-th
// of a slot). Per piece: a barrier (the slot rule), each rank copies its block into its place
// in its slot, then p - 1 steps: at step t every rank publishes the step and waits for its left
// neighbour alone, then copies block (r - t) mod p, which the neighbour received at its step
// t - 1 (or owns, t = 1), out of the neighbour's slot into its own and into its result. Each
// step reads only the left neighbour's memory: for GPUs linked in a ring; forced with
// WEFT_COLL_TUNE=allgather:@gpu_allgather_ring, never chosen by the rule on one node where
// every pair is linked. Kernels allowed only.
#include <algorithm>

#include "steps.h"

namespace weft::coll::gpu {

namespace {

Status enqueue_allgather_ring(GpuWorkspace& ws, const char* send, char* recv, size_t block, cudaStream_t s) {
  const size_t p = size_t(ws.size), r = size_t(ws.rank);
  const size_t per = std::max<size_t>(ws.half / p / 16 * 16, 1);
  const int left = int((r + p - 1) % p);
  const bool in_place = send == recv + r * block;
  for (size_t off = 0; off < block; off += per) {
    const size_t n = std::min(per, block - off);
    const uint64_t piece = ws.pieces++;
    char* mine = ws.slot(ws.rank, piece);
    const char* theirs = ws.slot(left, piece);
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    WEFT_CUDA_TRY(cudaMemcpyAsync(mine + r * per, send + off, n, cudaMemcpyDefault, s));
    if (!in_place) WEFT_CUDA_TRY(cudaMemcpyAsync(recv + r * block + off, send + off, n, cudaMemcpyDefault, s));
    for (size_t t = 1; t < p; ++t) {
      WEFT_TRY(enqueue_flag_wait_one(ws, left, s));
      const size_t b = (r + p - t) % p;
      char* out = recv + b * block + off;
      if (t + 1 == p) {  // the last block: nobody reads it from this rank's slot
        WEFT_CUDA_TRY(cudaMemcpyAsync(out, theirs + b * per, n, cudaMemcpyDefault, s));
        continue;
      }
      WEFT_CUDA_TRY(cudaMemcpyAsync(mine + b * per, theirs + b * per, n, cudaMemcpyDefault, s));
      WEFT_CUDA_TRY(cudaMemcpyAsync(out, mine + b * per, n, cudaMemcpyDefault, s));
    }
  }
  return Status::ok;
}

bool supports(const CollArgs& a, const CollContext& ctx) {
  return uniform_allgather(a, ctx) && kernel_call_supported(a, ctx.comm, true, false);
}

// A rough model, printed with the choice: a barrier and p - 1 steps of a launch and a pairwise
// flag each, and the result copied twice at about 2.1 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  const Comm& c = ctx.comm;
  return kLaunchUs + 2 + (c.size - 1) * kStepUs + double(a.bytes) * 2 / kCopyBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_enqueued("gpu_allgather_ring", c,
                             [send = static_cast<const char*>(a.send), recv = static_cast<char*>(a.recv),
                              block = a.own_bytes](GpuWorkspace& ws, cudaStream_t s) {
                               return enqueue_allgather_ring(ws, send, recv, block, s);
                             });
}

}  // namespace

extern const Algorithm allgather_gpu_ring{"gpu_allgather_ring", Collective::allgather, supports,
                                       ruled_estimate<estimate, allgather_gpu_ring>, build};

}  // namespace weft::coll::gpu
