// What coll keeps per communicator between calls: the algorithm chosen per size class, the
// plans of recent blocking and non-blocking calls, and what its algorithms made on first use (the shared-memory
// segment, the node hierarchy, the GPU workspace, the offload plugin's state). One table per
// process, keyed by Comm::serial (a communicator's derived views, such as coll/hier's node
// communicator, share its context id but not its serial). An entry is made on a
// communicator's first collective and dropped by release() when the communicator is freed.
// MPI calls are serialised, and so are the table's users.
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "coll/call.h"

namespace weft::coll {

struct Algorithm;
struct Hierarchy;
namespace shm {
class Segment;
}
namespace gpu {
struct CommGpu;
}
namespace offload {
struct CommOffload;
}

struct CommState {
  // Destroyed in reverse order of declaration: the plans and choices, then the offload
  // plugin's state (its teardown), the GPU workspace (peers' IPC mappings unmapped), the
  // hierarchy (with the node communicator's own state) and the shared-memory segment last.
  std::shared_ptr<shm::Segment> shm;            // coll/shm/segment.h
  std::shared_ptr<const Hierarchy> hier;        // coll/hier/hierarchy.h
  std::shared_ptr<gpu::CommGpu> gpu;            // coll/gpu/workspace.cpp
  std::shared_ptr<offload::CommOffload> offload;  // coll/offload/host.cpp
  // Algorithm chosen per collective, size bucket and kind of call (select.cpp).
  std::unordered_map<uint32_t, const Algorithm*> choices;
  std::vector<CachedPlan> plans;  // most recently used first (call.cpp)
};

// c's state, made on first use.
CommState& state_of(const Comm& c);
// The same for ctx.comm, found once per context (kept in ctx.state).
inline CommState& state_of(const CollContext& ctx) {
  if (!ctx.state) ctx.state = &state_of(ctx.comm);
  return *ctx.state;
}
// c's state, or null where it has none yet.
CommState* find_state(const Comm& c);
// c is being freed: its state goes (a schedule that still holds a part keeps that part alive).
void release(const Comm& c);

}  // namespace weft::coll
