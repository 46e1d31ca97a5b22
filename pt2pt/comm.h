// A communicator as the transport and collective layers see it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft {

// A number no other communicator object of this process had (the first is 1).
uint64_t next_comm_serial();

struct Comm {
  // This communicator object, among all of this process's (a copy keeps it): what the layers
  // above key their per-communicator state by. Context ids do not tell objects apart: a
  // communicator's derived views (coll/hier's node communicator) share their parent's.
  uint64_t serial = next_comm_serial();
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
  // Every member runs on this process's node (the shared-memory collectives need it).
  bool single_node = false;
  // Node id of every member, by communicator rank (virtual nodes with WEFT_FAKE_NODES).
  std::vector<uint32_t> nodes;
  // Failure is contagious: a member known to have failed fails every operation here. The
  // first such member (communicator rank, -1: none), as of the bootstrap's failure count
  // failures_checked (kept by Transport::failed_member).
  mutable int failed_member = -1;
  // This communicator's entry in the rank's collective status board (pt2pt/status_board.h), -1:
  // none yet.
  mutable int board_entry = -1;
  mutable uint32_t failures_checked = 0;
  // Failed members acknowledged here (MPIX_Comm_failure_ack): under WEFT_FAULT_SCOPE=process,
  // wildcard receives fail while fewer than the failed members.
  uint32_t acked_failures = 0;

  // An intercommunicator: rank, size and world_ranks are the local group's; point-to-point
  // ranks and the collectives' remote steps name the remote group (remote_world_ranks). Both
  // groups share context_id; `local` is a view of the local group alone, on
  // local_context(), for the steps among the local group.
  bool inter = false;
  std::vector<int> remote_world_ranks;
  std::shared_ptr<Comm> local;

  // The name in logs and error messages: the one set (MPI_Comm_set_name, or a predefined
  // communicator's), else one made of the context id (MPI_Comm_get_name still returns "").
  std::string label() const { return name.empty() ? "communicator " + std::to_string(context_id) : name; }

  uint32_t pt2pt_context() const { return context_id; }
  uint32_t coll_context() const { return context_id + 1; }
  int world_rank(int r) const { return world_ranks[size_t(r)]; }
  // The ranks point-to-point names: the remote group's on an intercommunicator.
  int peer_count() const { return inter ? int(remote_world_ranks.size()) : size; }
  int peer_world_rank(int r) const { return inter ? remote_world_ranks[size_t(r)] : world_ranks[size_t(r)]; }
  // Context ids above every pair's (kContextPairs * 2) belong to intercommunicators' local
  // groups: local_context() and local_context() + 1 for the local group's own collectives.
  uint32_t local_context() const { return (1u << 13) + context_id; }
};

}  // namespace weft
