// The levels of a communicator that spans nodes, as groups of its ranks: this rank's node, the
// node leaders (each node's lowest rank) and this rank's column (the ranks with its index on
// every node, for the multi-leader algorithms). Built once per communicator on first use and
// kept in its state (comm_state.h); the hierarchical algorithms build their phases as flat
// algorithms on these groups and run them under the call's tag, so no sub-communicator (and
// no context id) is needed.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "coll/coll.h"

namespace weft::coll {

struct Hierarchy {
  std::vector<int> node;     // the ranks of this rank's node, in rank order (leader first)
  std::vector<int> leaders;  // every node's leader, in order of the nodes' first ranks
  std::vector<int> column;   // the rank with this rank's node index on each node; empty unless uniform
  int node_index = 0;        // this rank's index within its node
  int largest_node = 0;      // ranks on the fullest node (the same at every rank)
  bool uniform = false;      // every node has as many ranks
  bool spans_nodes = false;
  // This rank's node as a communicator of its own, for the shared-memory engine (coll/shm):
  // the parent's context id and the node leader's job rank name its segment, which makes the
  // name unique per node and parent communicator. Its segment is made on first use.
  std::shared_ptr<Comm> node_comm;
  // The GPU collectives across nodes' state (owned and interpreted by coll/gpu/hier.h).
  mutable std::shared_ptr<void> gpu;
  // Releases the node communicator's state with the hierarchy.
  ~Hierarchy();
  int node_count() const { return int(leaders.size()); }
  bool is_leader() const { return node_index == 0; }
};

// The hierarchy of c (made on first use).
const Hierarchy& hierarchy(const Comm& c);

// Whether c's members lie on more than one node.
bool spans_nodes(const Comm& c);
// The same as an Algorithm::supports predicate, for hierarchical algorithms that take any call.
inline bool supports_spanning(const CollArgs&, const CollContext& ctx) { return spans_nodes(ctx.comm); }

// A communicator view of a group, as the flat builders see it: this rank's index in it
// (-1 when not a member) and its size.
Comm group_view(const std::vector<int>& ranks, int me);

// One level's point-to-point parameters.
struct Level {
  double alpha_us;
  double beta_us_per_byte;
  double step_us(double bytes) const { return alpha_us + bytes * beta_us_per_byte; }
};
// Between ranks of one node, and between nodes (each falls back to the flat link when the
// model does not know it).
Level node_level(const CostModel& m);
Level net_level(const CostModel& m);

class Schedule;
// The hierarchical allreduce's phases on buf[0, count), appended to s: reduce to the node
// leader (through the node's shared-memory segment with `shm`, else a binomial tree), recursive
// doubling among leaders, bcast in the node. after_up, if given, runs once this rank's part of
// the node reduction is done (a pipeline starts its next fragment then).
void append_hier_allreduce(Schedule& s, const CollContext& ctx, void* buf, size_t count, const Reduction& red,
                           bool shm, std::function<Status()> after_up);

}  // namespace weft::coll
