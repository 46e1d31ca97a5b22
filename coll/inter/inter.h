// Collectives on intercommunicators (MPI-4.0 §6.2.2): schedules of steps between the groups
// (peers: remote ranks) and steps among the local group (local_peer ranks, built by the
// intracommunicator builders on Comm::local and appended with Schedule::append_local). One
// builder per collective, one file each; plan_inter picks the builder. The same schedule runs
// blocking, non-blocking and persistent.
#pragma once
#include <memory>

#include "coll/schedule.h"

namespace weft::coll {

// Rooted collectives on an intercommunicator (CollArgs::root): this rank is the root, or in the
// root's group but not the root; else root is the root's rank in the remote group.
inline constexpr int kRootHere = -1;
inline constexpr int kRootElsewhere = -2;

// The schedule of a call on the intercommunicator ctx.comm. Status::not_supported (detail set)
// for a collective not defined on intercommunicators.
Status plan_inter(const CollContext& ctx, const CollArgs& a, std::shared_ptr<Schedule>* out);

// The builders. Byte buffers and blocks as in CollArgs; blocks are per remote rank.
std::shared_ptr<Schedule> build_inter_barrier(const Comm& ic);
std::shared_ptr<Schedule> build_inter_bcast(const Comm& ic, void* buf, size_t bytes, int root);
std::shared_ptr<Schedule> build_inter_gather(const Comm& ic, const CollArgs& a);
std::shared_ptr<Schedule> build_inter_scatter(const Comm& ic, const CollArgs& a);
std::shared_ptr<Schedule> build_inter_allgather(const Comm& ic, const CollArgs& a);
std::shared_ptr<Schedule> build_inter_alltoall(const Comm& ic, const CollArgs& a);
std::shared_ptr<Schedule> build_inter_reduce(const Comm& ic, const CollArgs& a);
std::shared_ptr<Schedule> build_inter_allreduce(const Comm& ic, const CollArgs& a);
std::shared_ptr<Schedule> build_inter_reduce_scatter(const Comm& ic, const CollArgs& a);

// Shared steps: the reduction of `count` elements of every local rank's `send` at local rank 0,
// into scratch of s there (returned; send itself in a group of one; null elsewhere).
const void* reduce_to_leader(Schedule& s, const Comm& ic, const void* send, size_t count, const Reduction& red);

}  // namespace weft::coll
