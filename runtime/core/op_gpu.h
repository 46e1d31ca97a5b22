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

}  // namespace weft
