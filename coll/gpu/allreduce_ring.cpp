// allreduce gpu_ring (and reduce gpu_reduce_ring): per slot-sized piece, every rank copies its
// input into its slot and a flag barrier follows; the piece is cut into p shares (16-byte
// multiples). Reduce-scatter in p - 1 steps (enqueue_ring_reduce_scatter): at step s, rank r
// folds share (r - s - 1) mod p of its left neighbour's slot into the same share of its own,
// then publishes the step and waits for its left neighbour alone; after the last step rank r
// holds share (r + 1) mod p reduced over every rank. A barrier, then allgather in p - 1 steps:
// at step t rank r copies share (r - t) mod p out of its left neighbour's slot into its own
// (final since the neighbour's previous step), and they meet pairwise again. Last, the slot is
// copied to the result. The reduce variant gathers instead: after the barrier the root copies
// each share out of the slot of the rank that holds it.
// Each step touches only the left neighbour's memory: the pattern for GPUs linked in a ring or
// through PCIe switches, where not every pair has a fast link. Where every rank reaches every
// other one directly (one GPU under MPS, or NVSwitch), gpu_direct moves less data and the rule
// never picks the ring; WEFT_COLL_TUNE=allreduce:@gpu_ring (reduce:@gpu_reduce_ring) forces it.
#include <algorithm>

#include "runtime/op_gpu.h"
#include "steps.h"

namespace weft::coll::gpu {

Status enqueue_ring(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                    cudaStream_t s, int root) {
  const size_t elem = basic_type_size(type), per = piece_elements(ws, elem);
  const size_t p = size_t(ws.size), r = size_t(ws.rank);
  const int left = int((r + p - 1) % p);
  const char* src = static_cast<const char*>(send);
  char* dst = static_cast<char*>(recv);
  for (size_t off = 0; off < count; off += per) {
    const Shares sh(std::min(per, count - off), p, elem);
    const uint64_t piece = ws.pieces++;
    char* mine = ws.slot(ws.rank, piece);
    const char* theirs = ws.slot(left, piece);
    WEFT_CUDA_TRY(cudaMemcpyAsync(mine, src + off * elem, sh.n * elem, cudaMemcpyDefault, s));
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    WEFT_TRY(enqueue_ring_reduce_scatter(ws, piece, sh, 0, type, op, s));
    // Every partial share has been read before any rank overwrites one with a final share.
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    if (root >= 0) {
      if (ws.rank != root) continue;
      for (size_t k = 0; k < p; ++k)
        WEFT_TRY(copy_share(dst + off * elem, ws.slot(int((k + p - 1) % p), piece), sh, k, elem, s));
      continue;
    }
    for (size_t step = 0; step + 1 < p; ++step) {
      const size_t k = (r + p - step) % p;
      WEFT_TRY(copy_share(mine, theirs, sh, k, elem, s));
      if (step + 2 < p) WEFT_TRY(enqueue_flag_wait_one(ws, left, s));
    }
    WEFT_CUDA_TRY(cudaMemcpyAsync(dst + off * elem, mine, sh.n * elem, cudaMemcpyDefault, s));
  }
  return Status::ok;
}

namespace {

// A rough model, printed with the choice: two barriers and 2(p - 1) steps of a launch and a
// pairwise flag each, then the copy in and out and about two reads and a write of the vector
// at 3.3 TB/s (measured on one H200). The reduce variant is about the same.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  const Comm& c = ctx.comm;
  return kLaunchUs + 8 + 2.0 * (c.size - 1) * kStepUs + double(a.bytes) * 5 / kReduceBytesPerUs;
}

}  // namespace

extern const Algorithm allreduce_gpu_ring = allreduce_entry<enqueue_ring, "gpu_ring">(ruled_estimate<estimate, allreduce_gpu_ring>),
                       reduce_gpu_ring = reduce_entry<enqueue_ring, "gpu_reduce_ring">(ruled_estimate<estimate, reduce_gpu_ring>);

}  // namespace weft::coll::gpu
