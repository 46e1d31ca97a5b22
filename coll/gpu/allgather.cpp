// allgather gpu_allgather (one-shot, uniform blocks): per slot-sized piece of the block, each rank
// copies its piece into its slot, a barrier, each rank copies every peer's piece out of the peer's
// slot into the peer's block (and, out of place, its own piece from its send buffer); up to
// WEFT_GPU_GATHER_KERNEL_MAX with kernels allowed, all of it in one launch (gather_kernel.h). One barrier
// per piece keeps the slot rule (workspace.h): a rank writes piece n + 2's slot after piece n +
// 1's barrier, which every peer entered after reading piece n. Copies only: the copy-engine
// variant differs just in its host barriers.
#include <algorithm>

#include "steps.h"

namespace weft::coll::gpu {

namespace {

std::shared_ptr<const Pieces> allgather_pieces(GpuWorkspace& ws, const char* send, char* recv, size_t block) {
  auto p = std::make_shared<Pieces>();
  GpuWorkspace* w = &ws;
  const size_t per = ws.half;
  const bool in_place = send == recv + size_t(ws.rank) * block;
  p->count = (block + per - 1) / per;
  p->in = [w, send, block, per](size_t i, uint64_t piece, cudaStream_t s) {
    const size_t off = i * per, n = std::min(per, block - off);
    WEFT_CUDA_TRY(cudaMemcpyAsync(w->slot(w->rank, piece), send + off, n, cudaMemcpyDefault, s));
    return Status::ok;
  };
  p->out = [w, send, recv, block, per, in_place](size_t i, uint64_t piece, cudaStream_t s) {
    const size_t off = i * per, n = std::min(per, block - off);
    for (int q = 0; q < w->size; ++q) {
      char* dst = recv + size_t(q) * block + off;
      if (q != w->rank) WEFT_CUDA_TRY(cudaMemcpyAsync(dst, w->slot(q, piece), n, cudaMemcpyDefault, s));
      else if (!in_place) WEFT_CUDA_TRY(cudaMemcpyAsync(dst, send + off, n, cudaMemcpyDefault, s));
    }
    return Status::ok;
  };
  return p;
}

}  // namespace

Status allgather_enqueue(GpuWorkspace& ws, const void* send, void* recv, size_t block, void* stream) {
  if (runs_as_gather(ws, block)) {  // one launch (gather_kernel.h)
    const auto s = static_cast<cudaStream_t>(stream);
    return enqueue_stream_call(ws, s, "MPIX_Allgather_enqueue", [&] {
      return enqueue_allgather_gather(ws, static_cast<const char*>(send), static_cast<char*>(recv), block, s);
    });
  }
  return enqueue_pieces_on(ws, stream, "MPIX_Allgather_enqueue", [&] {
    return allgather_pieces(ws, static_cast<const char*>(send), static_cast<char*>(recv), block);
  });
}

namespace {

// Uniform blocks back to back in recv (what MPI_Allgather on a contiguous type gives).
bool supports(const CollArgs& a, const CollContext& ctx) {
  return uniform_allgather(a, ctx) && kernel_call_supported(a, ctx.comm, false, false);
}

// A rough model, printed with the choice (the rule picks this one on one node): the launch floor
// (about 10 us), a barrier, p copies, and the block copied in plus the whole result copied out
// at about 2.1 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  return kLaunchUs + 2 + ctx.comm.size * 0.5 + double(a.bytes + a.own_bytes) / kCopyBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  if (runs_as_gather(*shared_workspace(c), a.own_bytes))
    return build_enqueued("gpu_allgather", c, [send = static_cast<const char*>(a.send), recv = static_cast<char*>(a.recv),
                                               block = a.own_bytes](GpuWorkspace& ws, cudaStream_t s) {
      return enqueue_allgather_gather(ws, send, recv, block, s);
    });
  return build_pieces_on("gpu_allgather", c, [&](GpuWorkspace& ws) {
    return allgather_pieces(ws, static_cast<const char*>(a.send), static_cast<char*>(a.recv), a.own_bytes);
  });
}

}  // namespace

extern const Algorithm allgather_gpu{"gpu_allgather", Collective::allgather, supports,
                                  ruled_estimate<estimate, allgather_gpu>, build};

}  // namespace weft::coll::gpu
