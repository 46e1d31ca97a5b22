// The one-launch copy collectives' kernel (gather_kernel.cu; C++17 for nvcc, so it sees no
// other coll header): broadcast and allgather through the workspace slots with every piece's
// copy in, meeting and copies out inside one multi-block kernel, instead of a copy, a flag
// barrier kernel and p copies per piece (each a launch on the stream).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "flags.h"

namespace weft::coll::gpu {

struct GatherLaunch {
  const char* own_in = nullptr;           // this rank's contribution from the launch's start; null: none
  char* out[kFlagRanks] = {};             // where rank q's contribution goes here; null: nowhere
  char* slot[kFlagRanks] = {};            // every rank's slot of the launch's first piece, mapped here
  char* slot_next[kFlagRanks] = {};       // and of the other parity
  unsigned long long* flag[kFlagRanks] = {};  // every rank's epoch word
  unsigned int* arrive = nullptr;         // this rank's block counter: zero between launches
  const unsigned int* stop = nullptr;     // non-zero once the host gives up: waits end
  int me = 0, ranks = 0;
  size_t bytes = 0;  // bytes of each rank's contribution
  size_t per = 0;    // bytes of a piece (a slot)
};

// Piece k: the contributors copy their k-th piece into their slot (parity k), every rank meets
// (its epoch word one up; one meeting a piece, as the flag barrier's), and each copies the
// contributors' pieces out. Blocks: enough for the largest copy, few enough to spin side by
// side with the peers' grids.
cudaError_t launch_gather(const GatherLaunch& g, cudaStream_t s);
// Loads the kernel now (see preload_flag_barrier): a lazily loaded module's first launch
// would wait for the device, and an enqueue call must not.
cudaError_t preload_gather();

}  // namespace weft::coll::gpu
