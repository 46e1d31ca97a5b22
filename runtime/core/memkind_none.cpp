// Build without CUDA: every buffer is host memory.
#include "memkind.h"

namespace weft {

namespace {
CudaState g_cuda{.compiled = false, .usable = false, .devices = 0,
                 .reason = "built without CUDA support"};
}

const CudaState& cuda_probe(bool) { return g_cuda; }
const CudaState& cuda_state() { return g_cuda; }
MemInfo memkind_query(const void*) { return {}; }
Status memkind_copy(void*, const void*, size_t) { return Status::not_supported; }

}  // namespace weft
