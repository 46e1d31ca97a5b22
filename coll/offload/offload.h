// In-network reduction offload (coll/offload): the host side of include/weft/offload.h.
// A plugin named by WEFT_OFFLOAD_PLUGIN is loaded once at init; on a communicator that spans
// nodes, the first collective that could use it sets the communicator up among its node
// leaders (each leader asks the plugin, which may decline; every rank then learns the verdict
// and the capabilities the leaders share). The offload algorithms (allreduce, reduce_scatter,
// allgather, barrier: one file each) are leader-level candidates of the selector like the
// hierarchical ones: the node's ranks meet at their leader, the leader posts the operation to
// the plugin and polls it without blocking, then broadcasts a status word (so a failure
// reaches every rank of its node and nobody waits for data that will not come) and the data.
// A plugin that declines, or a call it cannot take, falls back to the host algorithms with an
// INFO line; WEFT_OFFLOAD=require makes both errors instead.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "coll/algorithm.h"
#include "coll/hier/hierarchy.h"
#include "weft/offload.h"

namespace weft::coll::offload {

enum class Mode : uint8_t { off, automatic, require };

// The offload path's cost parameters (docs/PERFORMANCE.md, "Offload cost model").
struct CostParams {
  double hop_us = 1.0;       // one switch level, one way
  int radix = 40;            // leaders (or switches) below one switch
  double fragment_us = 0.2;  // per fragment of the service's reduction unit
  double fragment_bytes = 65536;  // the unit, where no plugin has said (models without one)
};

struct Options {
  Mode mode = Mode::automatic;
  std::string plugin;  // path of the shared object; empty: no plugin
  CostParams cost;
  // cost.hop_us was set by the user (WEFT_OFFLOAD_HOP_US). Otherwise each communicator's set-up
  // times a few barriers through the plugin and derives its hop cost from them.
  bool hop_given = false;
};

// Loads and initialises the plugin (mpi/, at init). A plugin that cannot be loaded, of
// another ABI version, or whose init fails is disabled with a WARN (an error under require).
Status load(const Options& options, const weft_offload_node_info& node);
void unload();  // at finalize, after every communicator's teardown

// Whether offload may apply to a collective at all.
bool offloadable(Collective coll);

// Before planning a call on c: on the first offloadable call of a communicator that spans
// nodes, sets it up among its leaders and agrees on the verdict (a collective over c: every
// rank makes the same call there). Under require, a declined setup is an error on every rank.
Status prepare(const CollContext& ctx, const CollArgs& a);

// Whether the offload algorithm can run this call on c; *why (optional) says why not.
bool usable(const CollArgs& a, const CollContext& c, std::string* why = nullptr);
// The offload algorithms' Algorithm::supports: c spans nodes and the call is usable.
bool supports(const CollArgs& a, const CollContext& c);

// Whether WEFT_OFFLOAD=require binds this call: a plugin is loaded under require and the
// offload algorithm can run the call.
bool required(const CollArgs& a, const CollContext& c);
// An offload algorithm's Algorithm::estimate_us: 0 where required() (a rule, not a measured
// model: the selector's argmin then takes it over every host algorithm), else its model.
template <auto modelled>
double ruled_estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  return required(a, ctx) ? 0 : modelled(a, ctx, m);
}

// The fabric's part of an offloaded operation on `bytes` bytes among c's leaders (one hop up
// and one down per switch level, the bytes once through the leader's link, each fragment's
// overhead); the algorithms add their node phases.
double fabric_us(const Comm& c, double bytes, const CostModel& m);

// What the algorithms' node phases are estimated from: the node level's costs, the ranks of the
// fullest node and the depth of a tree over them, and the call's bytes.
struct NodeTerms {
  Level node;
  double largest, depth, bytes;
};
inline NodeTerms node_terms(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  const int largest = hierarchy(c).largest_node;
  return {node_level(m), double(largest), double(ceil_log2(largest)), double(a.bytes)};
}

// The leader's part of an offloaded call, appended to s (a new round): posts `args` to the
// plugin and polls it until done, then broadcasts a status word in the node and fails every
// rank of the node if the leader's operation failed. Every rank of c calls it (non-leaders
// take part in the broadcast only).
void append_leader_operation(Schedule& s, const Comm& c, const weft_offload_op_args& args);

// The plugin's element type and operation for a reduction (false: none).
bool plugin_dtype(BasicType t, uint32_t* out);
bool plugin_op(ReduceOp op, uint32_t* out);

}  // namespace weft::coll::offload
