// Making communicator views: context id pairs, the members of a new communicator, the order of
// a split. The agreement among members (an allreduce) is the caller's.
#pragma once
#include <cstdint>
#include <vector>

#include "pt2pt/comm.h"

namespace weft {

// Context ids come in pairs (point-to-point, collectives): a bitmask of the pairs free on this
// rank. A new communicator takes the lowest pair free on every member: the bitwise and of the
// members' masks.
inline constexpr uint32_t kContextPairs = 4096;
struct ContextIds {
  uint64_t free_mask[kContextPairs / 64];

  // Every pair free but the first `reserved`.
  void reset(uint32_t reserved);
  void set(uint32_t pair, bool free);
  // Takes the lowest pair free in `agreed` (the members' masks and-ed); false if none.
  bool take_lowest(const ContextIds& agreed, uint32_t* context);
};

// The view of a communicator of world_ranks on `context`, from the rank `my_world_rank` (one
// of them: else rank is world_ranks.size()).
Comm member_view(uint32_t context, const std::vector<int>& world_ranks, int my_world_rank);
// The view of an intercommunicator on `context` from the rank my_world_rank of its local group
// (local_world_ranks), with the view of the local group alone (Comm::local).
Comm inter_view(uint32_t context, const std::vector<int>& local_world_ranks,
                const std::vector<int>& remote_world_ranks, int my_world_rank);
// MPI_Intercomm_merge's order: the group that passed high = false first; where both passed the
// same, the group whose first member has the lower job rank.
bool merged_first(const std::vector<int>& local_world_ranks, bool local_high,
                  const std::vector<int>& remote_world_ranks, bool remote_high);
// The members of `color`, ordered by key and then by parent rank, from the (color, key) pairs
// of every rank of parent (table[2 r], table[2 r + 1]).
std::vector<int> split_members(const Comm& parent, const std::vector<int64_t>& table, int color);

// The colour of MPI_Comm_split_type on a rank of `node`: node × 2^16, plus, for `resource` (an
// hwloc type name; nullptr or "mpi_shared_memory": the node itself), the instance of it that
// holds the rank's whole binding. `none` when the binding spans several instances or the
// resource is unknown (logged at INFO).
int split_type_color(uint32_t node, const char* resource, int none);

}  // namespace weft
