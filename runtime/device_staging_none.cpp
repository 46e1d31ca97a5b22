// Build without CUDA: no staging sets, so device buffers are never pipelined (such a build
// refuses them anyway); unit tests may still install a host backend.
#include "device_staging_backend.h"

namespace weft {

const StagingBackend* cuda_staging_backend() { return nullptr; }

}  // namespace weft
