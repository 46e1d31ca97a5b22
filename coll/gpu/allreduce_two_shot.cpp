// allreduce gpu_two_shot (and reduce gpu_reduce_two_shot): per slot-sized piece, every rank
// copies its input into its slot and enters a flag barrier; rank r reduces share r of the
// piece over every rank's slot, in rank order, into share r of its own slot (reduce-scatter); a
// second barrier; every rank copies each share out of its owner's slot (allgather), or, for
// reduce, the root alone does (gather). Each rank reads about twice the piece instead of p
// times: for large messages. Shares are 16-byte multiples, so the kernel's vector loads apply.
// Two barriers per piece keep the slot rule (workspace.h): a rank writes piece n + 2's slot
// after piece n + 1's barriers, which every peer entered after its reads of piece n.
// With WEFT_GPU_FUSED the allreduce runs as fused direct pieces instead (allreduce_fused.cpp):
// one launch per piece, registered buffers read and written in place.
#include <algorithm>

#include "runtime/op_gpu.h"
#include "steps.h"

namespace weft::coll::gpu {

Status enqueue_two_shot(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                        ReduceOp op, cudaStream_t s, int root) {
  if (root < 0 && allreduce_runs_fused(ws, AllreduceAlgo::two_shot, count * basic_type_size(type)))
    return enqueue_fused(ws, send, recv, count, type, op, s, FusedForm::direct);
  const size_t elem = basic_type_size(type), per = piece_elements(ws, elem);
  const char* src = static_cast<const char*>(send);
  char* dst = static_cast<char*>(recv);
  const auto p = size_t(ws.size);
  for (size_t off = 0; off < count; off += per) {
    const Shares sh(std::min(per, count - off), p, elem);
    const uint64_t piece = ws.pieces++;
    WEFT_CUDA_TRY(cudaMemcpyAsync(ws.slot(ws.rank, piece), src + off * elem, sh.n * elem, cudaMemcpyDefault, s));
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    const size_t lo = sh.lo(size_t(ws.rank)), hi = sh.hi(size_t(ws.rank));
    if (hi > lo) {
      DeviceInputs in;
      in.count = ws.size;
      for (int q = 0; q < ws.size; ++q) in.in[q] = ws.slot(q, piece) + lo * elem;
      WEFT_TRY(reduce_device_multi(op, type, in, ws.slot(ws.rank, piece) + lo * elem, hi - lo, s));
    }
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    if (root >= 0 && ws.rank != root) continue;
    for (size_t q = 0; q < p; ++q) WEFT_TRY(copy_share(dst + off * elem, ws.slot(int(q), piece), sh, q, elem, s));
  }
  return Status::ok;
}

namespace {

// A rough model, printed with the choice (the rule in choice.cpp decides): the launch floor
// (about 10 us), two barriers and p copies, then about two reads and two writes of the vector
// at 3.3 TB/s (measured on one H200). The reduce variant writes less at the others.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  return kLaunchUs + 4 + ctx.comm.size * 0.5 + double(a.bytes) * 4 / kReduceBytesPerUs;
}

}  // namespace

extern const Algorithm
    allreduce_gpu_two_shot = allreduce_entry<enqueue_two_shot, "gpu_two_shot">(ruled_estimate<estimate, allreduce_gpu_two_shot>),
    reduce_gpu_two_shot = reduce_entry<enqueue_two_shot, "gpu_reduce_two_shot">(ruled_estimate<estimate, reduce_gpu_two_shot>);

}  // namespace weft::coll::gpu
