// What the direct algorithms share (gpu_direct, gpu_reduce_scatter_direct): no copy through the
// workspace. The ranks exchange CUDA IPC descriptors of their buffers in a round of host
// messages, map the peers' buffers through the IPC cache, and agree in a second round that every
// rank mapped every peer's; then the call runs on the peers' buffers in place. Blocking calls
// only: the device work waits for host messages, so a non-blocking call's could be enqueued
// after a later call's on some rank.
//
// Every rank takes the same path: when some rank's buffer has no IPC handle (memory from
// stream-ordered pools or the virtual memory API), CUDA IPC is off, the cache is too small to
// hold the call's mappings, or a mapping fails, all of them learn it from the exchange and run
// the fallback instead, with an INFO line.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda_ipc.h"
#include "workspace.h"

namespace weft::coll::gpu {

// The state of one call, shared by the schedule's steps.
struct DirectCall {
  // One rank's part of the exchange (plain bytes: it travels as a host message).
  struct Exported {
    IpcDescriptor send, recv;
    uint64_t ok = 0;  // described, and this rank can map every peer's buffers
  };
  bool with_recv = true;            // the receive buffers are mapped too
  std::vector<Exported> rows;       // rows[q]: rank q's buffers
  std::vector<uint64_t> mapped;     // mapped[q]: rank q mapped every peer's buffers
  std::vector<void*> sends, recvs;  // every rank's buffers, mapped here (recvs: with_recv only)
  std::string why;                  // why this rank cannot take the direct path
};

using DirectRun = std::function<Status(GpuWorkspace& ws, const DirectCall& call, cudaStream_t s)>;
// The blocking schedule of a direct call named `name` on send (and recv, with_recv): the
// exchange, then run on the workspace's stream, or fallback (named fallback_name in the INFO
// line) where some rank could not map every peer's buffers; then the event poll.
std::shared_ptr<Schedule> build_direct(const char* name, const Comm& c, const void* send, void* recv, bool with_recv,
                                       DirectRun run, EnqueueFn fallback, const char* fallback_name);

}  // namespace weft::coll::gpu
