// bcast gpu_bcast (one-shot): per slot-sized piece, the root copies its piece into its slot, a barrier,
// every other rank copies the piece out of the root's slot into its buffer; up to
// WEFT_GPU_GATHER_KERNEL_MAX with kernels allowed, all of it in one launch (gather_kernel.h). One barrier per
// piece is enough for the slot rule (workspace.h): the root writes piece n + 2's slot only
// after piece n + 1's barrier, which every peer entered after copying piece n out (stream
// order). A root whose call has returned never waits for slow readers; the next call's
// barrier does. Copies only: the copy-engine variant differs just in its host barriers.
#include <algorithm>

#include "steps.h"

namespace weft::coll::gpu {

namespace {

std::shared_ptr<const Pieces> bcast_pieces(GpuWorkspace& ws, char* buf, size_t bytes, int root) {
  auto p = std::make_shared<Pieces>();
  GpuWorkspace* w = &ws;
  const size_t per = ws.half;
  p->count = (bytes + per - 1) / per;
  p->in = [w, buf, bytes, per, root](size_t i, uint64_t piece, cudaStream_t s) {
    if (w->rank != root) return Status::ok;
    const size_t off = i * per, n = std::min(per, bytes - off);
    WEFT_CUDA_TRY(cudaMemcpyAsync(w->slot(root, piece), buf + off, n, cudaMemcpyDefault, s));
    return Status::ok;
  };
  p->out = [w, buf, bytes, per, root](size_t i, uint64_t piece, cudaStream_t s) {
    if (w->rank == root) return Status::ok;
    const size_t off = i * per, n = std::min(per, bytes - off);
    WEFT_CUDA_TRY(cudaMemcpyAsync(buf + off, w->slot(root, piece), n, cudaMemcpyDefault, s));
    return Status::ok;
  };
  return p;
}

}  // namespace

Status bcast_enqueue(GpuWorkspace& ws, void* buf, size_t bytes, int root, void* stream) {
  if (runs_as_gather(ws, bytes)) {  // one launch (gather_kernel.h)
    const auto s = static_cast<cudaStream_t>(stream);
    return enqueue_stream_call(ws, s, "MPIX_Bcast_enqueue", [&] {
      return enqueue_bcast_gather(ws, static_cast<char*>(buf), bytes, root, s);
    });
  }
  return enqueue_pieces_on(ws, stream, "MPIX_Bcast_enqueue", [&] { return bcast_pieces(ws, static_cast<char*>(buf), bytes, root); });
}

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) {
  return a.bytes > 0 && kernel_call_supported(a, ctx.comm, false, false);
}

// A rough model, printed with the choice (the rule's pick for small messages): the launch
// floor (about 10 us), a barrier, and two copies of the vector at about 2.1 TB/s (one H200).
double estimate(const CollArgs& a, const CollContext&, const CostModel&) {
  return kLaunchUs + 2 + double(a.bytes) * 2 / kCopyBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  if (runs_as_gather(*shared_workspace(c), a.bytes))
    return build_enqueued("gpu_bcast", c, [buf = static_cast<char*>(a.recv), bytes = a.bytes, root = a.root](
                                              GpuWorkspace& ws, cudaStream_t s) {
      return enqueue_bcast_gather(ws, buf, bytes, root, s);
    });
  return build_pieces_on("gpu_bcast", c, [&](GpuWorkspace& ws) {
    return bcast_pieces(ws, static_cast<char*>(a.recv), a.bytes, a.root);
  });
}

}  // namespace

extern const Algorithm bcast_gpu{"gpu_bcast", Collective::bcast, supports, ruled_estimate<estimate, bcast_gpu>,
                              build};

}  // namespace weft::coll::gpu
