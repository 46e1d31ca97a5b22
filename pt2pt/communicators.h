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
//
// The blocking agreements (one at a time on a rank) take pairs below kBlockingPairs. The
// non-blocking ones (MPI_Comm_idup), which may be many in flight on a rank and agreed in any
// order, take pairs above it, in slices of 64: each round of one offers the pairs of a slice
// that are free and not offered by another round in flight here (it reserves what it offers
// until the round ends), so no two agreements can take the same pair on a rank.
inline constexpr uint32_t kContextPairs = 4096;
inline constexpr uint32_t kBlockingPairs = 3072;
inline constexpr uint32_t kSlices = (kContextPairs - kBlockingPairs) / 64;
struct ContextIds {
  uint64_t free_mask[kContextPairs / 64];
  uint64_t reserved[kSlices];  // per slice: pairs offered by a non-blocking round in flight

  // Every pair free but the first reserved_pairs; nothing reserved.
  void reset(uint32_t reserved_pairs);
  void set(uint32_t pair, bool free);
  // Takes the lowest pair free in `agreed` (the members' masks and-ed); false if none.
  bool take_lowest(const ContextIds& agreed, uint32_t* context);
  // What a blocking agreement offers: the free pairs below kBlockingPairs.
  ContextIds blocking() const;
  // A non-blocking round's offer in `slice`: its free pairs that no other round here offers
  // (bit k: pair kBlockingPairs + 64 slice + k), reserved until release().
  uint64_t offer(uint32_t slice);
  void release(uint32_t slice, uint64_t offered);
  // Takes the lowest pair of `agreed` (and-ed offers of `slice`, nonzero): its first id.
  uint32_t take_in_slice(uint32_t slice, uint64_t agreed);
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
