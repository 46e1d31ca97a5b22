// What the GPU collectives across nodes (gpu_hier, hier.cpp) keep per communicator, with its
// hierarchy (coll/hier): whether every node's workspace is usable, agreed by every rank when
// the first such call is planned (gate() in choice.cpp), and this rank's device scratch.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "coll/hier/hierarchy.h"
#include "runtime/memkind.h"

namespace weft::coll {
class Tuning;
}

namespace weft::coll::gpu {

// A device buffer, freed when the last schedule that uses it is gone.
struct DeviceScratch {
  void* ptr = nullptr;
  size_t bytes = 0;
  ~DeviceScratch() { memkind_device_free(ptr); }
};

struct HierGpu {
  int ready = -1;                 // -1: not asked yet; 0: some node's workspace is not usable; 1: ready
  std::string why;                // why not ready
  const Tuning* tuning = nullptr; // WEFT_COLL_TUNE, for the node stages
  // This rank's device scratch for the stages (reduce: a head's partial; allgather: the node's
  // blocks; reduce_scatter: the whole vector); a larger call takes a new one.
  std::shared_ptr<DeviceScratch> scratch;
};

// The state of c's hierarchy (made on first use).
inline HierGpu& hier_gpu(const Hierarchy& h) {
  if (!h.gpu) h.gpu = std::make_shared<HierGpu>();
  return *static_cast<HierGpu*>(h.gpu.get());
}

}  // namespace weft::coll::gpu
