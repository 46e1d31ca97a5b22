// What every build shares of coll/gpu: the settings, whether a call is on device memory, and
// the selection rules for device-memory calls.
#include <string>

#include "gpu_coll.h"
#include "runtime/core/memkind.h"

namespace weft::coll {
extern const Algorithm allreduce_gpu_one_shot, allreduce_gpu_two_shot, allreduce_gpu_direct, allreduce_gpu_ring,
    allreduce_gpu_copy_engine;
extern const Algorithm bcast_gpu, allgather_gpu, reduce_scatter_gpu_block, reduce_gpu;
}

namespace weft::coll::gpu {

Settings& settings() {
  static Settings s;
  return s;
}

bool device_call(const CollArgs& a) {
  if (!a.recv || memkind_query(a.recv).kind != MemKind::cuda_device) return false;
  if (a.coll == Collective::bcast) return true;
  return a.send == a.recv || (a.send && memkind_query(a.send).kind == MemKind::cuda_device);
}

bool has_algorithms(Collective coll) {
  return coll == Collective::allreduce || coll == Collective::bcast || coll == Collective::allgather ||
         coll == Collective::reduce_scatter || coll == Collective::reduce;
}

bool is_gpu_algorithm(const Algorithm& a) {
  return &a == &allreduce_gpu_one_shot || &a == &allreduce_gpu_two_shot || &a == &allreduce_gpu_direct ||
         &a == &allreduce_gpu_ring || &a == &allreduce_gpu_copy_engine ||
         &a == &bcast_gpu || &a == &allgather_gpu || &a == &reduce_scatter_gpu_block || &a == &reduce_gpu;
}

const Algorithm* choose(const CollArgs& a, const Comm& c, std::string* why) {
  const Algorithm* only = nullptr;
  switch (a.coll) {
    case Collective::allreduce: return choose_allreduce(a, c, why);
    case Collective::bcast: only = &bcast_gpu; break;
    case Collective::allgather: only = &allgather_gpu; break;
    case Collective::reduce_scatter: only = &reduce_scatter_gpu_block; break;
    case Collective::reduce: only = &reduce_gpu; break;
    default: return nullptr;
  }
  const GpuWorkspace* ws = existing_workspace(c);
  if (!ws || !only->supports(a, c)) return nullptr;
  *why = kernels_allowed(*ws) ? "the one gpu algorithm; flag barriers"
         : settings().mode == Mode::copy_engine
             ? "the one gpu algorithm; host barriers (WEFT_GPU_COLL_MODE=copy_engine)"
             : "the one gpu algorithm; host barriers (ranks share a GPU without MPS)";
  return only;
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
  if (const size_t direct = settings().direct_min; direct && a.bytes >= direct) {
    *why = "from WEFT_GPU_ALLREDUCE_DIRECT_MIN (" + std::to_string(direct) + " bytes)";
    return &allreduce_gpu_direct;
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
