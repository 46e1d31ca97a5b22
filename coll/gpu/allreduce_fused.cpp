// The fused allreduce (WEFT_GPU_FUSED; gpu_one_shot above kFusedMaxBytes, gpu_two_shot): the
// slot-sized pieces of a call run in one launch of a multi-block kernel that meets the peers
// twice per piece on the device (runtime/op_gpu.h, reduce_device_fused_allreduce); pieces of
// WEFT_GPU_FUSED_SPLIT_MIN bytes or more run split, each by itself (three kernels). Where every
// rank's buffers of the whole call lie in registrations, the first piece folds the whole call
// and the rest (one launch) ends at once. One-shot: every rank folds every
// input into its own result; direct: rank r folds share r of every input into share r of
// every output, each input byte read once and each output byte written once. Inputs and outputs
// inside registrations are read and written in place; the others go through the rank's slot.
// Each piece ends with a meeting, so the slot rule (workspace.h) holds whatever the parities.
// The reduce-scatter form (gpu_reduce_scatter_block above one launch's size) runs the same
// pieces over the same elements of every block: rank r folds block r of every input into its
// own result, reading registered inputs in place (so a registered call moves each input byte
// once, as gpu_reduce_scatter_direct does, with no host exchange).
#include <algorithm>

#include "steps.h"
#include "workspace.h"

namespace weft::coll::gpu {

bool allreduce_runs_fused(const GpuWorkspace& ws, AllreduceAlgo algo, size_t bytes) {
  // As enqueue_one_shot and enqueue_two_shot choose.
  const size_t from = ws.settings.fused_min;
  if (from == SIZE_MAX) return false;
  // WEFT_GPU_FUSED=on: the two-shot at every size, the one-shot above one launch's piece.
  if (algo == AllreduceAlgo::two_shot && from <= kFusedMaxBytes + 1) return true;
  return bytes >= from && bytes > kFusedMaxBytes;
}

bool scatter_runs_fused(const GpuWorkspace& ws, size_t input_bytes) {
  const size_t from = ws.settings.reduce_scatter_fused_min;
  return ws.kernels && ws.settings.fused_min != SIZE_MAX && from && input_bytes >= from &&
         input_bytes > ws.settings.reduce_scatter_kernel_max;
}

Status enqueue_fused(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                     cudaStream_t s, FusedForm form) {
  const bool direct = form == FusedForm::direct, scatter = form == FusedForm::scatter;
  const size_t elem = basic_type_size(type), bytes = count * elem;
  const size_t per = scatter ? sub_block_elements(ws, elem) : piece_elements(ws, elem);
  const size_t blocks = scatter ? size_t(ws.size) : 1;  // of `count` elements in the input
  uint64_t in_off = 0, out_off = 0;
  // The one-shot and the reduce-scatter write their result while peers read their input: in
  // place, the input goes to the slot.
  const int32_t in_reg = direct || send != recv ? find_registration(ws, send, bytes * blocks, &in_off) : -1;
  const int32_t out_reg = direct ? find_registration(ws, recv, bytes, &out_off) : -1;
  FusedPiece fp;
  fp.mine.in_reg = in_reg;
  fp.mine.out_reg = out_reg;
  for (int q = 0; q < ws.size; ++q) {
    fp.flag[q] = ws.flag(q);
    fp.place[q] = ws.place(q);
  }
  fp.arrive = ws.arrive();
  fp.skip = ws.fused_skip();
  fp.call_count = count;
  fp.table = ws.regs.device;
  fp.stop = ws.stop_device;
  fp.error = ws.error_device;
  fp.me = ws.rank;
  fp.ranks = ws.size;
  fp.direct = direct;
  fp.scatter = scatter;
  fp.per = per;
  const uint64_t pieces = (count + per - 1) / per;
  fp.last = ws.pieces + pieces - 1;
  // Small pieces: one launch for all. Large ones run split, each by itself (three kernels whose
  // fold grid is as large as the data wants), except where this rank's buffers of the whole call
  // lie in registrations: the first piece may then fold the whole call, and the rest go in one
  // launch that ends at once if it did (a launch per skipped piece cost about 16 us under MPS).
  // The ranks may launch differently; every piece meets alike.
  const bool whole_here = in_reg >= 0 && (!direct || out_reg >= 0);
  const bool large = std::min(per, count) * elem * blocks >= ws.settings.fused_split_min;
  for (uint64_t k = 0; k < pieces;) {
    WEFT_TRY(ws.check_running());
    const bool alone = large && (k == 0 || !whole_here);
    const uint64_t n = alone ? 1 : pieces - k;
    const size_t off = k * per;
    fp.piece = ws.pieces;
    fp.first = k == 0;
    fp.count = std::min(n * per, count - off);
    fp.split = alone && fp.count * elem * blocks >= ws.settings.fused_split_min;
    fp.own_in = static_cast<const char*>(send) + off * elem;
    fp.own_out = static_cast<char*>(recv) + off * elem;
    fp.mine.in_off = in_off + off * elem;
    fp.mine.out_off = out_off + off * elem;
    for (int q = 0; q < ws.size; ++q) {
      fp.slot[q] = ws.slot(q, fp.piece);
      fp.slot_next[q] = ws.slot(q, fp.piece + 1);
    }
    ws.pieces += n;
    k += n;
    WEFT_TRY(reduce_device_fused_allreduce(op, type, fp, s));
  }
  return Status::ok;
}

}  // namespace weft::coll::gpu
