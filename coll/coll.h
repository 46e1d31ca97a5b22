// Collectives on host memory. A call is described by CollArgs; the selector (select.cpp) picks
// an algorithm by the cost model (cost_model.h) and the user's overrides (tune.h), and the
// algorithm builds a schedule (schedule.h) that runs blocking, non-blocking or persistently.
// Each algorithm lives in coll/<collective>/<name>.cpp and is listed in registry.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pt2pt/comm.h"
#include "pt2pt/transport.h"
#include "runtime/datatype.h"
#include "runtime/op.h"

namespace weft::coll {

using Reduction = weft::Reduction;  // runtime/op.h

enum class Collective : uint8_t {
  barrier, bcast, reduce, allreduce, allgather, alltoall, gather, scatter, reduce_scatter,
  scan, exscan, neighbor_allgather, neighbor_alltoall, count_
};
const char* collective_name(Collective c);

// A rank's part of a buffer, in bytes.
struct Block {
  size_t offset = 0;
  size_t bytes = 0;
};

// One collective call, on contiguous byte buffers (mpi/ packs other layouts).
struct CollArgs {
  explicit CollArgs(Collective c = Collective::barrier) : coll(c) {}
  Collective coll;
  const void* send = nullptr;  // in place: the rank's own block of recv (or recv itself)
  void* recv = nullptr;        // bcast: the buffer
  // The size selection sees, the same at every rank of a call: bcast/reduce/allreduce/scan the
  // vector; allgather/gather/scatter/alltoall/reduce_scatter/neighbour the total over all
  // blocks (v forms: what this rank knows).
  size_t bytes = 0;
  size_t own_bytes = 0;        // gather: bytes this rank sends; scatter: bytes it receives
  size_t count = 0;            // reductions: elements
  Reduction red{};             // reductions
  int root = 0;                // rooted collectives
  // allgather/gather/scatter: recv_blocks (gather, allgather) or send_blocks (scatter) per rank;
  // alltoall: both. Known at every rank except gather(v)/scatter(v) off the root.
  std::vector<Block> send_blocks, recv_blocks;
  std::vector<size_t> counts;  // reduce_scatter: result elements per rank
  bool uniform = true;         // every rank's block has the same size (not a v/w form)
  // Neighbour collectives: the ranks received from and sent to, in order (-1: MPI_PROC_NULL),
  // with recv_blocks per source and send_blocks per destination.
  std::vector<int> sources, destinations;
  bool cartesian = false;      // neighbours in (-1, +1) pairs per dimension
  // A blocking call. Non-blocking and persistent calls must start their device work when they
  // start (the ranks then enqueue it in the same order), so an algorithm that first waits for
  // host messages (gpu_direct) runs for blocking calls only.
  bool blocking = true;
  // A persistent call: its ranks may start it in another order relative to their other
  // persistent calls (MPI matches those in the order they were initialized), so no algorithm
  // whose operations are numbered as the ranks start them (the shared-memory engine, coll/shm).
  bool any_start_order = false;
};

// alpha-beta-gamma: a message of n bytes costs alpha + n*beta; reducing n bytes costs n*gamma.
// The shared-memory collectives (coll/shm) have their own pair: a flag seen by another core
// costs shm_alpha, copying n bytes through the segment n*shm_beta. shm_alpha 0 means unknown
// (a tuning file without it): those algorithms are then never chosen by estimate.
// gap: the time between back-to-back small sends to one peer (LogGP's g), what a message costs
// its sender when nothing waits for an answer; 0 means unknown.
// Point-to-point has one pair per level: node_alpha/node_beta between ranks of one node,
// net_alpha/net_beta between nodes (0: unknown). alpha/beta is the link a flat algorithm
// crosses: the selector sets it per communicator (model_for), the network's where the
// communicator spans nodes; the hierarchical algorithms (coll/hier) cost each level apart.
struct CostModel {
  double alpha_us = 0;
  double beta_us_per_byte = 0;
  double node_alpha_us = 0;
  double node_beta_us_per_byte = 0;
  double net_alpha_us = 0;
  double net_beta_us_per_byte = 0;
  double gamma_us_per_byte = 0;
  double gap_us = 0;
  double shm_alpha_us = 0;
  double shm_beta_us_per_byte = 0;
  const char* source = "unset";
};

// The model as the algorithms of communicator c see it: alpha/beta are the network's where c
// spans nodes and the network is known, else the node's where known.
CostModel model_for(const Comm& c, const CostModel& m);

class Tuning;
class Calls;
struct Settings;
struct CommState;

// What a collective runs with: the transport, the communicator, coll's settings and the
// communicator's state. The algorithms' supports(), estimate_us() and build() see it too (they
// need no transport: a unit test leaves it null).
struct CollContext {
  Transport* transport;
  const Comm& comm;
  const CostModel& model;
  const Tuning* tuning = nullptr;  // WEFT_COLL_TUNE rules, or none
  bool dump = false;               // print every schedule before it runs (WEFT_COLL_DUMP)
  Calls* calls = nullptr;          // plan cache and runs in flight (call.h), or none
  bool require_fast_path = false;  // WEFT_REQUIRE_FAST_PATH: no staging of device buffers
  const Settings* settings = nullptr;  // coll's settings (settings.h); none: the defaults
  // comm's state (comm_state.h), found on first need (state_of); a context for another
  // communicator starts without it.
  mutable CommState* state = nullptr;
};

// The same context on another communicator (a level of comm's hierarchy), with its own state.
inline CollContext context_on(const CollContext& c, const Comm& other) {
  return CollContext{c.transport, other, c.model, c.tuning, c.dump, c.calls, c.require_fast_path, c.settings};
}
// A context for c alone (no transport, the default settings), to ask an algorithm's supports(),
// estimate_us() or build() outside a run (unit tests, tools).
inline CollContext bare_context(const Comm& c) {
  static const CostModel unset;
  return CollContext{nullptr, c, unset};
}

class Schedule;

// The schedule for a call, from the algorithm the selector picks (logged at INFO once per
// communicator, collective and size bucket). The same schedule runs blocking (run in
// schedule.h), non-blocking or persistently.
Status plan(const CollContext& c, const CollArgs& args, std::shared_ptr<Schedule>* out);

// Blocking allreduce for the runtime's own agreements (context ids, communicator splits).
Status allreduce(const CollContext& c, const void* send, void* recv, size_t count, const Reduction& red);

// Measures the model between job ranks 0 and 1 (ping-pong) and rank 0's reduction speed, and
// gives every rank of `world` rank 0's numbers, so that all ranks choose alike.
Status calibrate(Transport& t, const Comm& world, CostModel* out);
// Reads alpha_us, beta_us_per_byte and gamma_us_per_byte ("name = value" lines, '#' comments)
// from a tuning file (WEFT_COLL_MODEL=file).
Status load_cost_model(const char* path, CostModel* out, std::string* error);
// The same from the file's text (origin names it in errors); *out changes only on success.
Status parse_cost_model(std::string_view text, const char* origin, CostModel* out, std::string* error);

}  // namespace weft::coll
