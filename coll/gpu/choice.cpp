// What every build shares of coll/gpu: the settings, whether a call is on device memory, and
// the selection rules for device-memory calls.
#include <string>

#include "gpu_coll.h"
#include "runtime/memkind.h"

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
#define WEFT_IS_GPU_ALGORITHM(var, name, coll) &a == &var ||
  return WEFT_GPU_ALGORITHMS(WEFT_IS_GPU_ALGORITHM) false;
#undef WEFT_IS_GPU_ALGORITHM
}

// Bcast, reduce and allgather: the one-shot, which was the fastest at every size from 8 B to
// 64 MiB on one H200 shared by 4 ranks (bcast 64 MiB: 140 us, two-shot 193, ring 519; reduce:
// 177, 300, 400); the two-shot and ring forms spread the traffic over links that one GPU does
// not have, and WEFT_COLL_TUNE forces them. Reduce_scatter: the one-shot, in its block form
// when the shares are equal.
const Algorithm* choose(const CollArgs& a, const Comm& c, std::string* why) {
  if (a.coll == Collective::allreduce) return choose_allreduce(a, c, why);
  const GpuWorkspace* ws = existing_workspace(c);
  if (!ws) return nullptr;
  const Algorithm* pick = nullptr;
  switch (a.coll) {
    case Collective::bcast: pick = &bcast_gpu; break;
    case Collective::reduce: pick = &reduce_gpu; break;
    case Collective::allgather: pick = &allgather_gpu; break;
    case Collective::reduce_scatter:
      pick = reduce_scatter_gpu_block.supports(a, c) ? &reduce_scatter_gpu_block : &reduce_scatter_gpu;
      break;
    default: return nullptr;
  }
  if (!pick->supports(a, c)) return nullptr;
  if (kernels_allowed(*ws))
    *why = "the one-shot; flag barriers";
  else
    *why = settings().mode == Mode::copy_engine ? "the one-shot; host barriers (WEFT_GPU_COLL_MODE=copy_engine)"
                                                : "the one-shot; host barriers (ranks share a GPU without MPS)";
  return pick;
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
  if (const size_t direct = settings().direct_min; direct && a.bytes >= direct && a.blocking) {
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
