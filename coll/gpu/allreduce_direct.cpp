// allreduce gpu_direct: no copy through the workspace (direct.h: the ranks exchange CUDA IPC
// descriptors of their send and receive buffers and map the peers' through the IPC cache). Then
// the ranks meet in a flag barrier; rank r reduces share r of every rank's input straight into
// share r of every rank's output, in one kernel, and a second barrier ends the call (every
// output is complete, and no peer reads an input any more). Each input byte is read once and
// each output byte written once, the 2pS bound of one GPU (gpu_two_shot moves (3p-1)S).
// For large messages: the exchange costs two rounds of host messages, and a buffer's first use
// costs an IPC open per peer (then cached, WEFT_CUDA_IPC_CACHE). Where some rank cannot map
// every peer's buffers, every rank runs gpu_two_shot.
#include <algorithm>

#include "direct.h"
#include "runtime/op_gpu.h"

namespace weft::coll::gpu {

namespace {

Status enqueue_direct(GpuWorkspace& ws, const DirectCall& call, size_t count, BasicType type, ReduceOp op,
                      cudaStream_t s) {
  const size_t elem = basic_type_size(type), p = size_t(ws.size);
  const size_t align = std::max<size_t>(1, 16 / elem);
  const size_t share = ((count + p - 1) / p + align - 1) / align * align;
  const size_t lo = std::min(count, size_t(ws.rank) * share), hi = std::min(count, lo + share);
  WEFT_TRY(enqueue_flag_barrier(ws, s));
  if (hi > lo) {
    DeviceInputs in;
    DeviceOutputs out;
    in.count = out.count = ws.size;
    for (size_t q = 0; q < p; ++q) {
      in.in[q] = static_cast<const char*>(call.sends[q]) + lo * elem;
      out.out[q] = static_cast<char*>(call.recvs[q]) + lo * elem;
    }
    WEFT_TRY(reduce_device_multi_out(op, type, in, out, hi - lo, s));
  }
  return enqueue_flag_barrier(ws, s);
}

// Blocking calls only: the device work waits for two rounds of host messages, so a
// non-blocking call's could be enqueued after a later call's on some rank.
bool supports(const CollArgs& a, const CollContext& ctx) {
  return a.blocking && kernel_call_supported(a, ctx.comm, true);
}

// A rough model, printed with the choice (the rule in choice.cpp decides): the launch floor
// (about 10 us), two host message rounds and two barriers, then one read and one write of the
// vector per rank at 3.3 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  constexpr double kLaunchUs = 10, kBytesPerUs = 3.3e6;
  return kLaunchUs + 8 + ctx.comm.size * 1.0 + double(a.bytes) * 2 / kBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const void* send = a.send;
  void* recv = a.recv;
  const size_t count = a.count;
  const BasicType type = a.red.type;
  const ReduceOp op = a.red.op;
  return build_direct(
      "gpu_direct", ctx.comm, send, recv, true,
      [count, type, op](GpuWorkspace& ws, const DirectCall& call, cudaStream_t s) {
        return enqueue_direct(ws, call, count, type, op, s);
      },
      [send, recv, count, type, op](GpuWorkspace& ws, cudaStream_t s) {
        return enqueue_two_shot(ws, send, recv, count, type, op, s);
      },
      "gpu_two_shot");
}

}  // namespace

extern const Algorithm allreduce_gpu_direct{"gpu_direct", Collective::allreduce, supports,
                                         ruled_estimate<estimate, allreduce_gpu_direct>, build};

}  // namespace weft::coll::gpu
