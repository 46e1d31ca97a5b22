// Build without CUDA: there is no stream capture.
#include "capture_mode.h"

namespace weft {

RelaxedCaptureScope::RelaxedCaptureScope(bool) {}
RelaxedCaptureScope::~RelaxedCaptureScope() = default;

}  // namespace weft
