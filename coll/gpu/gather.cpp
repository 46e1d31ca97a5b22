// enqueue_gather (workspace.h): the one-launch broadcast and allgather through the slots.
#include "gather_kernel.h"
#include "workspace.h"

namespace weft::coll::gpu {

Status enqueue_gather(GpuWorkspace& ws, const char* own_in, char* const* out, size_t bytes, int root, cudaStream_t s) {
  if (!ws.kernels) return kernels_required();
  WEFT_TRY(ws.check_running());
  static_assert(kFlagRanks == kMaxRanks);
  GatherLaunch g;
  g.own_in = root < 0 || root == ws.rank ? own_in : nullptr;
  for (int q = 0; q < ws.size; ++q) {
    g.out[q] = out[q];
    g.slot[q] = ws.slot(q, ws.pieces);
    g.slot_next[q] = ws.slot(q, ws.pieces + 1);
    g.flag[q] = ws.flag(q);
  }
  g.arrive = ws.arrive();
  g.stop = ws.stop_device;
  g.me = ws.rank;
  g.ranks = ws.size;
  g.bytes = bytes;
  g.per = ws.half;
  ws.pieces += (bytes + ws.half - 1) / ws.half;
  const cudaError_t err = launch_gather(g, s);
  return err == cudaSuccess ? Status::ok : cuda_failure("gather kernel launch", err);
}

}  // namespace weft::coll::gpu
