// enqueue_gather and its broadcast and allgather (workspace.h): one launch through the slots.
#include "gather_kernel.h"
#include "workspace.h"

namespace weft::coll::gpu {

Status enqueue_gather(GpuWorkspace& ws, const char* own_in, char* const* out, size_t bytes, cudaStream_t s) {
  if (!ws.kernels) return kernels_required();
  WEFT_TRY(ws.check_running());
  static_assert(kFlagRanks == kMaxRanks);
  GatherLaunch g;
  g.own_in = own_in;
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

bool runs_as_gather(const GpuWorkspace& ws, size_t bytes) {
  return ws.kernels && bytes <= ws.settings.gather_kernel_max;
}

Status enqueue_bcast_gather(GpuWorkspace& ws, char* buf, size_t bytes, int root, cudaStream_t s) {
  char* out[kMaxRanks] = {};
  if (ws.rank != root) out[root] = buf;
  return enqueue_gather(ws, ws.rank == root ? buf : nullptr, out, bytes, s);
}

Status enqueue_allgather_gather(GpuWorkspace& ws, const char* send, char* recv, size_t block, cudaStream_t s) {
  char* out[kMaxRanks] = {};
  for (int q = 0; q < ws.size; ++q) out[q] = recv + size_t(q) * block;
  if (send == out[ws.rank]) out[ws.rank] = nullptr;  // in place
  return enqueue_gather(ws, send, out, block, s);
}

}  // namespace weft::coll::gpu
