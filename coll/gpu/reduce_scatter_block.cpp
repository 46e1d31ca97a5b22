// reduce_scatter_block gpu_reduce_scatter_block (one-shot): the input is p blocks of `count`
// elements. Per piece (the same `n` elements of every block, so p * n fill at most a slot), each
// rank copies its p sub-blocks into its slot (one 2D copy), a barrier, and rank r reduces
// sub-block r of every rank's slot, in rank order, into its result (bitwise what any rank folding
// the same inputs gets). One barrier per piece keeps the slot rule (workspace.h): a rank writes
// piece n + 2's slot after piece n + 1's barrier, which every peer entered after reducing piece n.
// In place (the input in recv), a piece's result overwrites only elements of block 0 that earlier
// pieces already copied. The reduction kernel never waits on flags, so the copy-engine variant
// runs it too, between host barriers. With kernels allowed, up to WEFT_GPU_REDUCE_SCATTER_KERNEL_MAX
// bytes of input, each piece is one launch of the fused one-shot kernel instead (copy in, meet,
// fold sub-block r: reduce_device_fused_one_shot's reduce-scatter form); the same slot rule
// holds, as for the one-shot allreduce. Above that size, with kernels allowed and WEFT_GPU_FUSED
// not off, a call runs as the fused allreduce's reduce-scatter form (allreduce_fused.cpp): in
// one launch per piece, and where every rank's input is registered (a stream-ordered call of
// WEFT_GPU_AUTO_REGISTER_MIN bytes or more registers it itself), folded whole from the peers'
// inputs in place.
#include <algorithm>

#include "runtime/op_gpu.h"
#include "steps.h"

namespace weft::coll::gpu {

std::shared_ptr<const Pieces> reduce_scatter_block_pieces(GpuWorkspace& ws, const char* send, char* recv, size_t count,
                                                          BasicType type, ReduceOp op) {
  auto p = std::make_shared<Pieces>();
  GpuWorkspace* w = &ws;
  const size_t elem = basic_type_size(type), ranks = size_t(ws.size);
  const size_t per = sub_block_elements(ws, elem);
  p->count = (count + per - 1) / per;
  p->in = [w, send, count, elem, per, ranks](size_t i, uint64_t piece, cudaStream_t s) {
    const size_t off = i * per, n = std::min(per, count - off);
    WEFT_CUDA_TRY(cudaMemcpy2DAsync(w->slot(w->rank, piece), n * elem, send + off * elem, count * elem, n * elem,
                                    ranks, cudaMemcpyDefault, s));
    return Status::ok;
  };
  p->out = [w, recv, count, elem, per, type, op](size_t i, uint64_t piece, cudaStream_t s) {
    const size_t off = i * per, n = std::min(per, count - off);
    DeviceInputs in;
    in.count = w->size;
    for (int q = 0; q < w->size; ++q) in.in[q] = w->slot(q, piece) + size_t(w->rank) * n * elem;
    return reduce_device_multi(op, type, in, recv + off * elem, n, s);
  };
  return p;
}

bool runs_as_scatter_kernel(const GpuWorkspace& ws, size_t input_bytes) {
  return ws.kernels && input_bytes <= ws.settings.reduce_scatter_kernel_max;
}

Status enqueue_reduce_scatter_block_one_launch(GpuWorkspace& ws, const char* send, char* recv, size_t count,
                                               BasicType type, ReduceOp op, cudaStream_t s) {
  if (!ws.kernels) return kernels_required();
  const size_t elem = basic_type_size(type), per = sub_block_elements(ws, elem);
  for (size_t off = 0; off < count; off += per) {
    const size_t n = std::min(per, count - off);
    DeviceInputs in;
    DeviceFlags flags;
    WEFT_TRY(one_shot_launch_args(ws, ws.pieces++, n * elem * size_t(ws.size), &in, &flags));
    WEFT_TRY(reduce_device_fused_one_shot(op, type, send + off * elem, in, flags, recv + off * elem, n, s, count));
  }
  return Status::ok;
}

Status reduce_scatter_block_enqueue(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                                    ReduceOp op, void* stream) {
  const size_t input_bytes = count * basic_type_size(type) * size_t(ws.size);
  const auto s = static_cast<cudaStream_t>(stream);
  if (runs_as_scatter_kernel(ws, input_bytes)) {
    return enqueue_stream_call(ws, s, "MPIX_Reduce_scatter_block_enqueue", [&] {
      return enqueue_reduce_scatter_block_one_launch(ws, static_cast<const char*>(send), static_cast<char*>(recv),
                                                     count, type, op, s);
    });
  }
  if (scatter_runs_fused(ws, input_bytes)) {
    return enqueue_stream_call(ws, s, "MPIX_Reduce_scatter_block_enqueue", [&] {
      return enqueue_fused(ws, send, recv, count, type, op, s, FusedForm::scatter);
    });
  }
  return enqueue_pieces_on(ws, stream, "MPIX_Reduce_scatter_block_enqueue", [&] {
    return reduce_scatter_block_pieces(ws, static_cast<const char*>(send), static_cast<char*>(recv), count, type, op);
  });
}

// MPI_Reduce_scatter_block: every rank's share is the same, and nothing else.
bool block_form_supported(const CollArgs& a, const Comm& c) {
  return block_reduce_scatter(a, c) && kernel_call_supported(a, c, false, true);
}

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) { return block_form_supported(a, ctx.comm); }

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  const GpuWorkspace& w = *shared_workspace(c);
  if (runs_as_scatter_kernel(w, a.bytes))
    return build_enqueued("gpu_reduce_scatter_block", c, [r = reduction_call(a), count = a.counts[0]](
                                                              GpuWorkspace& ws, cudaStream_t s) {
      return enqueue_reduce_scatter_block_one_launch(ws, static_cast<const char*>(r.send), static_cast<char*>(r.recv),
                                                     count, r.type, r.op, s);
    });
  if (scatter_runs_fused(w, a.bytes))
    return build_enqueued("gpu_reduce_scatter_block", c, [r = reduction_call(a), count = a.counts[0]](
                                                              GpuWorkspace& ws, cudaStream_t s) {
      return enqueue_fused(ws, r.send, r.recv, count, r.type, r.op, s, FusedForm::scatter);
    });
  return build_pieces_on("gpu_reduce_scatter_block", c, [&](GpuWorkspace& ws) {
    return reduce_scatter_block_pieces(ws, static_cast<const char*>(a.send), static_cast<char*>(a.recv),
                                            a.counts[0], a.red.type, a.red.op);
  });
}

}  // namespace

extern const Algorithm reduce_scatter_gpu_block{"gpu_reduce_scatter_block", Collective::reduce_scatter, supports,
                                                ruled_estimate<slots_reduce_scatter_us, reduce_scatter_gpu_block>,
                                                build};

}  // namespace weft::coll::gpu
