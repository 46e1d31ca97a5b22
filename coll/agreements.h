// The agreements that make a new communicator, run as collectives on an existing one: the
// context pair every member takes, the members of a split, a distributed graph's edges. The
// caller (mpi/) checks the arguments and gives the new view a handle.
#pragma once
#include <cstdint>
#include <vector>

#include "coll.h"
#include "pt2pt/communicators.h"
#include "runtime/process_topology.h"

namespace weft::coll {

// Context pairs 0, 1 and 2 are MPI_COMM_WORLD's, MPI_COMM_SELF's and the group-creation
// channel's (make_comm_among).
inline constexpr uint32_t kReservedPairs = 3;
// The group-creation channel's first context id (pair 2): its collective context carries the
// agreements among a group's members, its point-to-point context the leaders' messages of
// MPI_Intercomm_create_from_groups.
inline constexpr uint32_t kGroupCreationContext = 4;
// The context of a duplicate whose members are still agreeing on its own (MPI_Comm_idup): the
// group-creation channel's, which no communicator frees.
inline constexpr uint32_t kPendingContext = kGroupCreationContext;

// A blocking agreement's turn to offer this process's free context pairs. Threads that make
// communicators at the same time would otherwise offer the same pairs and both take one: one
// agreement offers at a time, the others offer none for that round (which then finds no pair on
// any member, and all of them try again). Of the agreements waiting, the one whose parent has
// the lowest context id goes first, so every round some agreement can end. Callers hold the
// entry lock (all MPI calls do while threads share the process).
class OfferTurn {
 public:
  // key: the parent's context id, shifted, with the creation channel (make_comm_among) below.
  explicit OfferTurn(uint64_t key);
  ~OfferTurn();
  OfferTurn(const OfferTurn&) = delete;
  OfferTurn& operator=(const OfferTurn&) = delete;
  bool take();  // whether this agreement offers its pairs in the next round
  void give_back();

 private:
  uint64_t parent_;
  bool offering_ = false;
};

// This rank's view of world_ranks (this rank one of them) on `context`, with the members' nodes
// from the bootstrap.
Comm view_with_nodes(const CollContext& ctx, uint32_t context, const std::vector<int>& world_ranks);
// A new communicator of world_ranks (ranks of ctx.comm), made by every rank of ctx.comm: they
// take the lowest context pair free on all of them (an allreduce, bitwise and, of the masks in
// *ids; the pair stays free at a rank outside world_ranks). *out: this rank's view, with the
// members' nodes from the bootstrap; *member: whether this rank is one of world_ranks.
// Status::transport, with its detail, when no pair is free on every rank.
Status make_comm(const CollContext& ctx, ContextIds* ids, const std::vector<int>& world_ranks, Comm* out,
                 bool* member);
// The same made by the members alone (MPI_Comm_create_group), this rank one of them: they agree
// over a view of themselves on the reserved group-creation context.
// channel (1..4095; 0: none) keeps the agreements of creations running at the same time apart
// (their tag, MPI_Comm_create_group's or a hash of MPI_Comm_create_from_group's string tag): each
// channel has its own range of collective tags on the shared context.
Status make_comm_among(const CollContext& ctx, ContextIds* ids, const std::vector<int>& world_ranks, Comm* out,
                       uint32_t channel = 0);
// The channel of a creation's tag (1..4095).
uint32_t creation_channel(const void* tag, size_t bytes);
// MPI_Comm_split: every rank's (color, key) shared over ctx.comm (an allreduce of a table), then
// the communicator of the ranks of this rank's color, ordered by key and then parent rank, made
// as make_comm (a rank whose color is `undefined` is in none).
Status split_comm(const CollContext& ctx, ContextIds* ids, int color, int key, int undefined, Comm* out,
                  bool* member);
// Intercommunicators. Their agreements run among each group (collectives on the local group)
// and between the two groups' leaders (point-to-point): every member of both groups takes the
// lowest context pair free on all of them.
// MPI_Intercomm_create, by every rank of the local group (ctx.comm); the leader (local_leader)
// meets the remote group's leader (remote_leader, a rank of peer) on peer's point-to-point
// context under `tag`.
Status make_intercomm(const CollContext& ctx, ContextIds* ids, int local_leader, const Comm& peer, int remote_leader,
                      int tag, Comm* out);
// MPI_Intercomm_create_from_groups, by every member of the local group (local_world_ranks, this
// rank one of them) alone: they agree over a view of themselves on the group-creation channel,
// and the leader (local_leader, a rank of the local group) meets the remote leader (job rank
// remote_leader_world_rank) on the channel's point-to-point context under `tag`.
Status make_intercomm_from_groups(const CollContext& world, ContextIds* ids, const std::vector<int>& local_world_ranks,
                                  int local_leader, int remote_leader_world_rank, int tag, Comm* out);
// MPI_Intercomm_merge on the intercommunicator ctx.comm: the intracommunicator of both groups,
// the group of the ranks that passed high = false first (merged_first).
Status merge_intercomm(const CollContext& ctx, ContextIds* ids, bool high, Comm* out);
// MPI_Comm_dup on the intercommunicator ctx.comm.
Status dup_intercomm(const CollContext& ctx, ContextIds* ids, Comm* out);
// MPI_Comm_split (and MPI_Comm_create, a split of two colours) on the intercommunicator
// ctx.comm: the intercommunicator of this rank's colour in both groups, ordered by key then
// rank; *member is false where the colour is `undefined` or empty in either group.
Status split_intercomm(const CollContext& ctx, ContextIds* ids, int color, int key, int undefined, Comm* out,
                       bool* member);

// MPI_Dist_graph_create: every rank's (source, dest, weight) triples shared over ctx.comm (an
// allreduce of the counts, then one of the table), and the edges that touch this rank kept in *g.
Status share_edges(const CollContext& ctx, const std::vector<int64_t>& mine, DistGraph* g);

}  // namespace weft::coll
