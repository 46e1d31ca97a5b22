// reduce_scatter_block gpu_reduce_scatter_direct (blocking calls): no copy through the workspace
// (direct.h: the ranks exchange CUDA IPC descriptors of their send buffers and map the peers'
// through the IPC cache). Then the ranks meet in a flag barrier, rank r folds block r of every
// rank's input, in rank order (bitwise what gpu_reduce_scatter_block gives), straight into its
// result, and a second barrier ends the call (no peer reads an input any more). Each rank reads
// p blocks and writes one, against a copy of its whole input into its slot first through the
// slots ((3p + 1) blocks). In place (the input in recv, on every rank) the result would overwrite
// block 0 while rank 0 reads it: such calls run through the slots, as does every call where
// some rank cannot map every peer's input.
#include "direct.h"
#include "runtime/op_gpu.h"
#include "steps.h"

namespace weft::coll::gpu {

namespace {

Status enqueue_scatter_direct(GpuWorkspace& ws, const DirectCall& call, char* recv, size_t count, BasicType type,
                              ReduceOp op, cudaStream_t s) {
  const size_t block = count * basic_type_size(type);
  WEFT_TRY(enqueue_flag_barrier(ws, s));
  DeviceInputs in;
  in.count = ws.size;
  for (int q = 0; q < ws.size; ++q) in.in[q] = static_cast<const char*>(call.sends[size_t(q)]) + size_t(ws.rank) * block;
  WEFT_TRY(reduce_device_multi(op, type, in, recv, count, s));
  return enqueue_flag_barrier(ws, s);
}

bool supports(const CollArgs& a, const CollContext& ctx) {
  return a.blocking && block_form_supported(a, ctx.comm) && kernel_call_supported(a, ctx.comm, true);
}

// A rough model, printed with the choice (the rule in choice.cpp decides): the launch floor, two
// host message rounds and two barriers, then p blocks read and one written per rank at 3.3 TB/s
// (gpu_direct's rate on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  constexpr double kBytesPerUs = 3.3e6;
  return kLaunchUs + 8 + ctx.comm.size * 1.0 + double(a.bytes) * (1 + 1.0 / ctx.comm.size) / kBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  const size_t count = a.counts[0];
  const BasicType type = a.red.type;
  const ReduceOp op = a.red.op;
  if (send == recv)
    return build_pieces_on("gpu_reduce_scatter_direct", c, [&](GpuWorkspace& ws) {
      return reduce_scatter_block_pieces(ws, send, recv, count, type, op);
    });
  return build_direct(
      "gpu_reduce_scatter_direct", c, send, recv, false,
      [recv, count, type, op](GpuWorkspace& ws, const DirectCall& call, cudaStream_t s) {
        return enqueue_scatter_direct(ws, call, recv, count, type, op, s);
      },
      [send, recv, count, type, op](GpuWorkspace& ws, cudaStream_t s) {
        return enqueue_pieces(ws, *reduce_scatter_block_pieces(ws, send, recv, count, type, op), s);
      },
      "gpu_reduce_scatter_block");
}

}  // namespace

extern const Algorithm reduce_scatter_gpu_direct{"gpu_reduce_scatter_direct", Collective::reduce_scatter, supports,
                                                 ruled_estimate<estimate, reduce_scatter_gpu_direct>, build};

}  // namespace weft::coll::gpu
