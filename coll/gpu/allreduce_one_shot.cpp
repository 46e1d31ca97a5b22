// allreduce gpu_one_shot: per slot-sized piece, every rank copies its input into its slot,
// enters a flag barrier, and reduces every rank's slot (in rank order, so every rank gets the
// same bits) straight into its result. One barrier per piece; the slots alternate by piece
// parity, so a piece's copy never overwrites a slot a slow peer still reads. Each rank reads
// p pieces per piece: for small messages, where the launch and barrier latency dominate.
// Pieces up to kFusedMaxBytes do all three steps in one single-block kernel (one launch);
// larger ones, with WEFT_GPU_FUSED on or auto, in one launch of a grid whose block b meets its
// peers' block b alone (a chunk of kOneShotBlockBytes each); calls from WEFT_GPU_FUSED's size
// run as multi-block fused pieces (allreduce_fused.cpp). WEFT_GPU_FUSED=off: copy, barrier
// kernel and reduction kernel, three launches a piece.
#include <algorithm>

#include "runtime/op_gpu.h"
#include "workspace.h"

namespace weft::coll::gpu {

namespace {

// Bytes of the vector per block of the multi-block one-shot; the grid also stays within
// kFusedOneShotMaxBlocks and 128 blocks on the GPU for all the ranks together (they spin).
constexpr size_t kOneShotBlockBytes = 8 * 1024;

int one_shot_blocks(const GpuWorkspace& ws, size_t bytes) {
  if (bytes <= kFusedMaxBytes) return 1;
  const size_t cap = std::clamp<size_t>(128 / size_t(ws.size), 1, kFusedOneShotMaxBlocks);
  return int(std::min(cap, (bytes + kOneShotBlockBytes - 1) / kOneShotBlockBytes));
}

}  // namespace

Status one_shot_launch_args(const GpuWorkspace& ws, uint64_t piece, size_t bytes, DeviceInputs* in,
                            DeviceFlags* flags) {
  WEFT_TRY(ws.check_running());
  in->count = ws.size;
  flags->me = ws.rank;
  flags->stop = ws.stop_device;
  flags->blocks = one_shot_blocks(ws, bytes);
  for (int q = 0; q < ws.size; ++q) {
    in->in[q] = ws.slot(q, piece);
    flags->at[q] = ws.flag(q);
    if (flags->blocks > 1) flags->lane[q] = ws.lane(q);
  }
  return Status::ok;
}

Status enqueue_one_shot(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                        ReduceOp op, cudaStream_t s, bool may_fuse) {
  const size_t elem = basic_type_size(type), per = piece_elements(ws, elem);
  if (may_fuse && allreduce_runs_fused(ws, AllreduceAlgo::one_shot, count * elem))
    return enqueue_fused(ws, send, recv, count, type, op, s, FusedForm::one_shot);
  const char* src = static_cast<const char*>(send);
  char* dst = static_cast<char*>(recv);
  for (size_t off = 0; off < count; off += per) {
    const size_t n = std::min(per, count - off);
    const uint64_t piece = ws.pieces++;
    if (n * elem <= kFusedMaxBytes || ws.settings.fused_min != SIZE_MAX) {  // copy, meeting, fold: one launch
      DeviceInputs in;
      DeviceFlags flags;
      WEFT_TRY(one_shot_launch_args(ws, piece, n * elem, &in, &flags));
      WEFT_TRY(reduce_device_fused_one_shot(op, type, src + off * elem, in, flags, dst + off * elem, n, s));
      continue;
    }
    WEFT_CUDA_TRY(cudaMemcpyAsync(ws.slot(ws.rank, piece), src + off * elem, n * elem, cudaMemcpyDefault, s));
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    DeviceInputs in;
    in.count = ws.size;
    for (int q = 0; q < ws.size; ++q) in.in[q] = ws.slot(q, piece);
    WEFT_TRY(reduce_device_multi(op, type, in, dst + off * elem, n, s));
  }
  return Status::ok;
}

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) { return kernel_call_supported(a, ctx.comm, true); }

// A rough model, printed with the choice (the rule in choice.cpp decides): the empty kernel
// plus sync floor (about 10 us) and a second launch, then p reads and one write of the vector
// at the 3.3 TB/s a reduction kernel moved on one H200 (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  constexpr double kLaunchUs = 10, kBytesPerUs = 3.3e6;
  return kLaunchUs + 2 + double(a.bytes) * (ctx.comm.size + 1) / kBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  // A blocking call below gpu_direct's size (the rule gives it the one-shot) runs as one launch,
  // never as fused pieces: at 1-2 MiB on one H100 (4 ranks) 21-28 us against 40-43 for
  // gpu_direct.
  const bool may_fuse = !(a.blocking && settings_of(ctx).direct_min && a.bytes < settings_of(ctx).direct_min);
  return build_enqueued("gpu_one_shot", c, [r = reduction_call(a), may_fuse](GpuWorkspace& ws, cudaStream_t s) {
    return enqueue_one_shot(ws, r.send, r.recv, r.count, r.type, r.op, s, may_fuse);
  });
}

}  // namespace

extern const Algorithm allreduce_gpu_one_shot{"gpu_one_shot", Collective::allreduce, supports,
                                           ruled_estimate<estimate, allreduce_gpu_one_shot>, build};

}  // namespace weft::coll::gpu
