// CUDA build of capture_mode.h.
#include "capture_mode.h"

#include <cuda_runtime_api.h>

namespace weft {

RelaxedCaptureScope::RelaxedCaptureScope(bool on) {
  if (!on) return;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess) saved_ = int(mode);
  else (void)cudaGetLastError();  // the mode stays as it was
}

RelaxedCaptureScope::~RelaxedCaptureScope() {
  if (saved_ < 0) return;
  auto mode = cudaStreamCaptureMode(saved_);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

}  // namespace weft
