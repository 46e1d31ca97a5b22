// Build without CUDA: no GPU reductions.
#include "op_gpu.h"

namespace weft {

bool reduce_device_supports(ReduceOp, BasicType) { return false; }

Status reduce_device(ReduceOp, BasicType, const void*, void*, size_t, void*) {
  set_error_detail("GPU reductions need a build with CUDA");
  return Status::not_supported;
}

Status reduce_device_multi(ReduceOp, BasicType, const DeviceInputs&, void*, size_t, void*) {
  set_error_detail("GPU reductions need a build with CUDA");
  return Status::not_supported;
}

Status reduce_device_multi_out(ReduceOp, BasicType, const DeviceInputs&, const DeviceOutputs&, size_t, void*) {
  set_error_detail("GPU reductions need a build with CUDA");
  return Status::not_supported;
}

Status reduce_device_fused_one_shot(ReduceOp, BasicType, const void*, const DeviceInputs&, const DeviceFlags&, void*,
                                   size_t, void*) {
  set_error_detail("GPU reductions need a build with CUDA");
  return Status::not_supported;
}

Status reduce_device_fused_allreduce(ReduceOp, BasicType, const FusedPiece&, void*) {
  set_error_detail("GPU reductions need a build with CUDA");
  return Status::not_supported;
}

Status reduce_device_preload() { return Status::ok; }

}  // namespace weft
