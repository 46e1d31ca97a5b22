// MPI_Comm_idup's agreement: the members of a communicator (both groups of an
// intercommunicator) agree on the duplicate's context pair without blocking, so that a rank may
// start several, on one communicator or on several, and the members may finish them in any
// order. The caller (mpi/) gives the duplicate its handle.
#pragma once
#include <functional>
#include <memory>

#include "coll.h"
#include "pt2pt/communicators.h"
#include "schedule.h"

namespace weft::coll {

// Rounds an agreement may take; it reserves as many tags of ctx.comm's collective sequence.
inline constexpr uint32_t kDupRounds = 64;

// Called once the members agreed, with this rank's view of the duplicate.
using DupDone = std::function<void(Comm&& view)>;

// A schedule, started as a non-blocking call (Calls::start) on *channel, that duplicates
// ctx.comm: rounds, each on a slice of the non-blocking pairs (ContextIds::offer), of a bitwise
// and of every member's offer over a tree, until one leaves a pair free on every member; then
// done(view). *channel is a copy of ctx.comm made here, which the schedule keeps alive (the
// communicator may be freed before the agreement ends). Status::transport with its detail when
// kDupRounds rounds found no pair.
std::shared_ptr<Schedule> dup_schedule(const CollContext& ctx, ContextIds* ids, DupDone done,
                                       std::shared_ptr<Comm>* channel);

}  // namespace weft::coll
