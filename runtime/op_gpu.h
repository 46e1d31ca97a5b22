// Reductions on GPU device memory: inout[i] = in[i] op inout[i], as a kernel on a stream
// (enqueued; the call returns before the kernel runs). One kernel per (type, op) pair of
// op_gpu.cu's lists: sum, prod, min, max, band, bor, bxor, land, lor, lxor on 8- to 64-bit
// integers, half, bfloat16, float and double where MPI defines the op on the type.
#pragma once
#include <cstddef>

#include "op.h"

namespace weft {

// Whether reduce_device handles (op, type).
bool reduce_device_supports(ReduceOp op, BasicType type);

// stream: a cudaStream_t (nullptr: the default stream). Status::invalid_op for a pair the
// lists do not hold, Status::not_supported in a build without CUDA, Status::internal when the
// launch fails (logged).
Status reduce_device(ReduceOp op, BasicType type, const void* in, void* inout, size_t count, void* stream);

// Several inputs at once (the GPU collectives: every rank's slot of a piece):
// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i], folded left to right (rank order), so
// every rank that reduces the same inputs gets bitwise the same result; half and bfloat16 are
// rounded after each step, as the pairwise host loop does. `out` may be one of the inputs
// (each element is read before it is written). Same statuses as reduce_device.
constexpr int kReduceMaxInputs = 32;
struct DeviceInputs {
  const void* in[kReduceMaxInputs] = {};
  int count = 0;
};
Status reduce_device_multi(ReduceOp op, BasicType type, const DeviceInputs& inputs, void* out, size_t count,
                           void* stream);

// The same fold, stored into every output (gpu_direct: rank j's share of the result, written
// straight into every rank's receive buffer). An output may be one of the inputs.
struct DeviceOutputs {
  void* out[kReduceMaxInputs] = {};
  int count = 0;
};
Status reduce_device_multi_out(ReduceOp op, BasicType type, const DeviceInputs& inputs, const DeviceOutputs& outputs,
                               size_t count, void* stream);

// A whole small one-shot allreduce in one single-block kernel, where launch latency dominates:
// copy `own` into inputs.in[me], publish the next epoch (*flags[me] + 1) after a system-wide
// fence, wait until every other flags[q] has reached it, then out = the fold of every input (as
// reduce_device_multi). Flags are monotonic epoch words in memory every rank maps.
// One block reading its peers' memory: from 8 KiB three launches (copy, barrier, multi-block
// reduction) were faster between two H200s over NVLink (32 KiB: 11.6 against 25.2 µs).
constexpr size_t kFusedMaxBytes = 4 * 1024;
struct DeviceFlags {
  unsigned long long* at[kReduceMaxInputs] = {};
  int me = 0;
  const unsigned int* stop = nullptr;  // non-zero once the host gives up: the wait ends
};
// Loads every kernel of the multi-input and fused reductions now. With CUDA's lazy loading (the
// default) a kernel's first launch loads it, which may wait for the device: a stream-ordered
// call would then stall behind the work queued before it. Idempotent.
Status reduce_device_preload();

Status reduce_device_fused_one_shot(ReduceOp op, BasicType type, const void* own, const DeviceInputs& inputs,
                                   const DeviceFlags& flags, void* out, size_t count, void* stream);

}  // namespace weft
