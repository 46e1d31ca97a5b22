// A communicator as the transport and collective layers see it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft {

struct Comm {
  uint32_t context_id = 0;  // even; user point-to-point uses it, collectives context_id + 1
  int rank = 0;
  int size = 1;
  std::vector<int> world_ranks;  // communicator rank -> job rank
  std::string name;
  int handle = 0;       // the MPI handle (interpreted by mpi/ only)
  int errhandler = 0;   // the MPI errhandler handle (interpreted by mpi/ only)
  // Collectives started on this communicator so far: every rank starts them in the same order,
  // so the count tags each one's messages apart from the others'.
  mutable uint32_t coll_seq = 0;
  // Algorithm chosen per collective and size bucket (owned and interpreted by coll/).
  mutable std::unordered_map<uint32_t, const void*> coll_choices;
  // Every member runs on this process's node (the shared-memory collectives need it).
  bool single_node = false;
  // Node id of every member, by communicator rank (virtual nodes with WEFT_FAKE_NODES).
  std::vector<uint32_t> nodes;
  // Failure is contagious: a member known to have failed fails every operation here. The
  // first such member (communicator rank, -1: none), as of the bootstrap's failure count
  // failures_checked (kept by Transport::failed_member).
  mutable int failed_member = -1;
  mutable uint32_t failures_checked = 0;
  // The shared-memory collective segment, made on first use (owned and interpreted by coll/).
  mutable std::shared_ptr<void> coll_shm;
  // The node / leader / column rank groups of a communicator spanning nodes, made on first
  // use (owned and interpreted by coll/hier).
  mutable std::shared_ptr<void> coll_hier;
  // The GPU collective workspace (device scratch, peers' IPC mappings), made on the first
  // GPU-native collective and released with the communicator (owned and interpreted by
  // coll/gpu).
  mutable std::shared_ptr<void> coll_gpu;
  // The in-network offload plugin's state for this communicator among its node leaders, made
  // by the first offloadable collective (owned and interpreted by coll/offload).
  mutable std::shared_ptr<void> coll_offload;

  // The name in logs and error messages: the one set (MPI_Comm_set_name, or a predefined
  // communicator's), else one made of the context id (MPI_Comm_get_name still returns "").
  std::string label() const { return name.empty() ? "communicator " + std::to_string(context_id) : name; }

  uint32_t pt2pt_context() const { return context_id; }
  uint32_t coll_context() const { return context_id + 1; }
  int world_rank(int r) const { return world_ranks[size_t(r)]; }
};

}  // namespace weft
