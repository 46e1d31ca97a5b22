// reduce_scatter gpu_reduce_scatter_ring (the block form): per piece (the same n elements of
// every block, p * n at most a slot), a barrier (the slot rule), each rank copies its p
// sub-blocks into its slot (one 2D copy), then the ring's reduce-scatter steps
// (enqueue_ring_reduce_scatter, rotated so that rank r ends with sub-block r): at each step a
// rank folds one sub-block of its left neighbour's slot into its own and they meet pairwise.
// Last, rank r copies its sub-block to its result. In place (the input in recv), a piece's
// result overwrites only elements of block 0 that earlier pieces already copied. Each step
// reads only the left neighbour's memory: for GPUs linked in a ring; forced with
// WEFT_COLL_TUNE=reduce_scatter:@gpu_reduce_scatter_ring. Kernels allowed only.
#include <algorithm>

#include "steps.h"

namespace weft::coll::gpu {

namespace {

Status enqueue_reduce_scatter_ring(GpuWorkspace& ws, const char* send, char* recv, size_t count, BasicType type,
                                   ReduceOp op, cudaStream_t s) {
  const size_t elem = basic_type_size(type), p = size_t(ws.size), r = size_t(ws.rank);
  const size_t per = sub_block_elements(ws, elem);
  const int left = int((r + p - 1) % p);
  for (size_t off = 0; off < count; off += per) {
    const size_t n = std::min(per, count - off);
    Shares sh(n * p, p, elem);
    sh.share = n;  // sub-block k is share k
    const uint64_t piece = ws.pieces++;
    char* mine = ws.slot(ws.rank, piece);
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    WEFT_CUDA_TRY(cudaMemcpy2DAsync(mine, n * elem, send + off * elem, count * elem, n * elem, p, cudaMemcpyDefault, s));
    WEFT_TRY(enqueue_flag_wait_one(ws, left, s));
    WEFT_TRY(enqueue_ring_reduce_scatter(ws, piece, sh, p - 1, type, op, s));
    WEFT_CUDA_TRY(cudaMemcpyAsync(recv + off * elem, mine + r * n * elem, n * elem, cudaMemcpyDefault, s));
  }
  return Status::ok;
}

bool supports(const CollArgs& a, const CollContext& ctx) {
  return block_reduce_scatter(a, ctx.comm) && kernel_call_supported(a, ctx.comm, true, true);
}

// A rough model, printed with the choice: a barrier and p steps of a launch and a pairwise flag
// each, the input copied in at about 2.1 TB/s and two reads and a write per step's share at
// 3.3 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  const Comm& c = ctx.comm;
  return kLaunchUs + 2 + c.size * kStepUs + double(a.bytes) / kCopyBytesPerUs +
         double(a.bytes) * 3 / kReduceBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_enqueued("gpu_reduce_scatter_ring", c,
                             [r = reduction_call(a), n = a.counts[0]](GpuWorkspace& ws, cudaStream_t s) {
                               return enqueue_reduce_scatter_ring(ws, static_cast<const char*>(r.send),
                                                                       static_cast<char*>(r.recv), n, r.type, r.op, s);
                             });
}

}  // namespace

extern const Algorithm reduce_scatter_gpu_ring{"gpu_reduce_scatter_ring", Collective::reduce_scatter, supports,
                                               ruled_estimate<estimate, reduce_scatter_gpu_ring>, build};

}  // namespace weft::coll::gpu
