// What every build shares of coll/gpu: the settings, whether a call is on device memory, and
// the selection rule for a device-memory allreduce.
#include <string>

#include "gpu_coll.h"
#include "runtime/core/memkind.h"

namespace weft::coll {
extern const Algorithm allreduce_gpu_one_shot, allreduce_gpu_two_shot, allreduce_gpu_copy_engine;
}

namespace weft::coll::gpu {

Settings& settings() {
  static Settings s;
  return s;
}

bool device_call(const CollArgs& a) {
  if (!a.recv || memkind_query(a.recv).kind != MemKind::cuda_device) return false;
  return a.send == a.recv || (a.send && memkind_query(a.send).kind == MemKind::cuda_device);
}

bool is_gpu_algorithm(const Algorithm& a) {
  return &a == &allreduce_gpu_one_shot || &a == &allreduce_gpu_two_shot || &a == &allreduce_gpu_copy_engine;
}

const Algorithm* choose_allreduce(const CollArgs& a, const Comm& c, std::string* why) {
  const GpuWorkspace* ws = existing_workspace(c);
  if (!ws) return nullptr;
  if (!kernels_allowed(*ws)) {
    *why = settings().mode == Mode::copy_engine
               ? "WEFT_GPU_COLL_MODE=copy_engine"
               : "ranks share a GPU without MPS: kernels of different processes would take turns";
    return &allreduce_gpu_copy_engine;
  }
  const size_t min = settings().two_shot_min;
  if (a.bytes >= min) {
    *why = "from WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN (" + std::to_string(min) + " bytes)";
    return &allreduce_gpu_two_shot;
  }
  *why = "below WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN (" + std::to_string(min) + " bytes)";
  return &allreduce_gpu_one_shot;
}

}  // namespace weft::coll::gpu
