// What every build shares of coll/gpu: the settings, whether a call is on device memory, the
// gate that decides whether a call on device buffers runs GPU-native, and the selection rule
// for device-memory calls that the GPU algorithms' estimates carry.
#include <string>

#include "coll/comm_state.h"
#include "coll/hier/hierarchy.h"
#include "coll/settings.h"
#include "gpu_coll.h"
#include "hier.h"
#include "runtime/log.h"
#include "runtime/memkind.h"

namespace weft::coll::gpu {

namespace {

// Below 256 KiB staging the whole call was faster on one H200 with two virtual nodes (one copy
// each way against three blocking calls); it stays the path there unless staging is forbidden.
constexpr size_t kHierMinBytes = size_t(256) << 10;

bool all_device(std::initializer_list<const void*> bufs) {
  const void* last = nullptr;
  for (const void* b : bufs) {
    if (b && b == last) continue;  // in place: one query
    if (!b || memkind_query(b).kind != MemKind::cuda_device) return false;
    last = b;
  }
  return true;
}

bool kernels_reduce(const Reduction* red) { return !red || (!red->user && supports(red->op, red->type)); }

// The node levels of ctx.comm for gpu_hier: every node of several ranks makes its workspace on
// its node communicator (collective over the node), then every rank agrees that all are usable
// (collective over ctx.comm). Every rank of ctx.comm calls it at the same point of its
// collectives. The node communicator shares ctx.comm's context id: the workspace's exchanges
// take collective sequence numbers reserved on ctx.comm, so they never meet its other calls.
bool prepare_hier(const CollContext& ctx, std::string* why) {
  const Comm& c = ctx.comm;
  const Hierarchy& h = hierarchy(c);
  HierGpu& g = hier_gpu(h);
  if (g.ready < 0) {
    constexpr uint32_t kReserved = 8;  // the workspace's two exchanges need two
    const uint32_t first = c.coll_seq;
    c.coll_seq += kReserved;
    std::string local;
    int64_t usable[1] = {1};
    if (h.node.size() > 1) {
      Comm& node = *h.node_comm;
      node.coll_seq = first;
      const CollContext nctx = context_on(ctx, node);
      if (!workspace(nctx, &local)) usable[0] = 0;
      if (node.coll_seq > first + kReserved)
        WEFT_WARN(Subsys::gpu, "the workspace of %s took %u collective numbers, %u were reserved",
                  node.label().c_str(), node.coll_seq - first, kReserved);
    }
    const Reduction min{ReduceOp::min, BasicType::i64, sizeof(int64_t)};
    if (coll::allreduce(ctx, usable, usable, 1, min) != Status::ok) usable[0] = 0;
    g.ready = int(usable[0]);
    g.tuning = ctx.tuning;
    g.why = usable[0] ? std::string()
            : !local.empty() ? "GPU collectives not usable on " + h.node_comm->label() + ": " + local
                             : "GPU collectives not usable on another node of " + c.label();
  }
  if (g.ready != 1) *why = g.why;
  return g.ready == 1;
}

}  // namespace

Gate gate(const CollContext& ctx, bool blocking, std::initializer_list<const void*> bufs, const Reduction* red,
          size_t bytes, std::string* why) {
  const Comm& c = ctx.comm;
  why->clear();
  if (!cuda_state().usable || c.size < 2) return Gate::host;
  // Across nodes, blocking calls of a useful size, whatever the node levels say.
  if (blocking && !c.single_node && (bytes >= kHierMinBytes || ctx.require_fast_path) && settings_of(ctx).enabled &&
      kernels_reduce(red)) {
    bool device = true;
    for (const void* b : bufs) device = device && b && memkind_query(b).kind == MemKind::cuda_device;
    if (device) return prepare_hier(ctx, why) ? Gate::hier : Gate::staged;
  }
  if (!all_device(bufs)) return Gate::host;
  if (!c.single_node) {
    *why = "GPU-native collectives need every rank on one node";
  } else if (!kernels_reduce(red)) {
    *why = red->user ? std::string("user-defined operations have no GPU kernel")
                     : std::string("no GPU kernel for ") + reduce_op_name(red->op) + " on " + basic_type_name(red->type);
  } else {
    const GpuWorkspace* ws = workspace(ctx, why);
    if (!ws)
      *why = "GPU collectives not usable on " + c.label() + ": " + *why;
    else if (!blocking && !kernels_allowed(*ws))
      *why = "non-blocking and persistent GPU-native collectives need flag kernels, and " + c.label() +
             " runs copy-engine algorithms only (ranks share a GPU without MPS, or WEFT_GPU_COLL_MODE=copy_engine)";
  }
  return why->empty() ? Gate::native : Gate::staged;
}

bool hier_ready(const CommState& st) {
  return st.hier && st.hier->gpu && static_cast<const HierGpu*>(st.hier->gpu.get())->ready == 1;
}

bool hier_ready(const Comm& c) {
  const CommState* st = find_state(c);
  return st && hier_ready(*st);
}

const Settings& settings_of(const CollContext& ctx) {
  static const Settings defaults;
  return ctx.settings ? ctx.settings->gpu : defaults;
}

bool device_call(const CollArgs& a) {
  if (!a.recv || memkind_query(a.recv).kind != MemKind::cuda_device) return false;
  if (a.coll == Collective::bcast) return true;
  return a.send == a.recv || (a.send && memkind_query(a.send).kind == MemKind::cuda_device);
}

bool has_algorithms(Collective coll) {
  return coll == Collective::allreduce || coll == Collective::bcast || coll == Collective::allgather ||
         coll == Collective::reduce_scatter || coll == Collective::reduce;
}

bool is_gpu_algorithm(const Algorithm& a) {
#define WEFT_IS_GPU_ALGORITHM(var, name, coll) &a == &var ||
  return WEFT_GPU_ALGORITHMS(WEFT_IS_GPU_ALGORITHM) false;
#undef WEFT_IS_GPU_ALGORITHM
}

// The rule for device-memory calls, as the GPU algorithms' estimates carry it (not a measured
// model). Across nodes: gpu_hier, the only GPU algorithm there. Allreduce: gpu_copy_engine
// where kernels are not allowed, else for blocking calls gpu_direct from
// WEFT_GPU_ALLREDUCE_DIRECT_MIN bytes and gpu_one_shot below (unless gpu_direct is off); other
// calls gpu_two_shot from WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN bytes and gpu_one_shot below. Bcast, reduce and allgather: the one-shot, which was the fastest at every size from
// 8 B to 64 MiB on one H200 shared by 4 ranks (bcast 64 MiB: 140 us, two-shot 193, ring 519;
// reduce: 177, 300, 400); the two-shot and ring forms spread the traffic over links that one
// GPU does not have, and WEFT_COLL_TUNE forces them. Reduce_scatter: the one-shot, in its
// block form when the shares are equal, except blocking block-form calls from
// WEFT_GPU_REDUCE_SCATTER_DIRECT_MIN bytes with kernels allowed: gpu_reduce_scatter_direct (from 4
// MiB of input on one H100 shared by 4 ranks: 40 against 50 us there, 88-93 against 228-230 at 32 MiB).
const Algorithm* rule_pick(const RuleCall& r, const Settings& s, std::string* why) {
  if (r.spans_nodes) {
    *why = "the only GPU algorithm across nodes: GPU-native stages within each node, host staging between "
           "the node leaders";
    switch (r.coll) {
      case Collective::allreduce: return &allreduce_gpu_hier;
      case Collective::bcast: return &bcast_gpu_hier;
      case Collective::reduce: return &reduce_gpu_hier;
      case Collective::allgather: return &allgather_gpu_hier;
      case Collective::reduce_scatter: return &reduce_scatter_gpu_hier;
      default: return nullptr;
    }
  }
  if (r.coll == Collective::allreduce) {
    if (!r.kernels) {
      *why = s.mode == Mode::copy_engine
                 ? "WEFT_GPU_COLL_MODE=copy_engine"
                 : "ranks share a GPU without MPS: kernels of different processes would take turns";
      return &allreduce_gpu_copy_engine;
    }
    if (s.direct_min && r.bytes >= s.direct_min && r.blocking) {
      *why = "from WEFT_GPU_ALLREDUCE_DIRECT_MIN (" + std::to_string(s.direct_min) + " bytes)";
      return &allreduce_gpu_direct;
    }
    if (s.direct_min && r.blocking && r.bytes >= s.two_shot_min) {
      *why = "a blocking call below WEFT_GPU_ALLREDUCE_DIRECT_MIN (" + std::to_string(s.direct_min) + " bytes)";
      return &allreduce_gpu_one_shot;
    }
    if (r.bytes >= s.two_shot_min) {
      *why = "from WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN (" + std::to_string(s.two_shot_min) + " bytes)";
      return &allreduce_gpu_two_shot;
    }
    *why = "below WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN (" + std::to_string(s.two_shot_min) + " bytes)";
    return &allreduce_gpu_one_shot;
  }
  if (r.coll == Collective::reduce_scatter && r.block_form && r.kernels && r.blocking &&
      s.reduce_scatter_direct_min && r.bytes >= s.reduce_scatter_direct_min) {
    *why = "a blocking call from WEFT_GPU_REDUCE_SCATTER_DIRECT_MIN (" + std::to_string(s.reduce_scatter_direct_min) +
           " bytes)";
    return &reduce_scatter_gpu_direct;
  }
  if (r.kernels)
    *why = "the one-shot; flag barriers";
  else
    *why = s.mode == Mode::copy_engine ? "the one-shot; host barriers (WEFT_GPU_COLL_MODE=copy_engine)"
                                       : "the one-shot; host barriers (ranks share a GPU without MPS)";
  switch (r.coll) {
    case Collective::bcast: return &bcast_gpu;
    case Collective::reduce: return &reduce_gpu;
    case Collective::allgather: return &allgather_gpu;
    case Collective::reduce_scatter: return r.block_form ? &reduce_scatter_gpu_block : &reduce_scatter_gpu;
    default: return nullptr;
  }
}

RuleCall rule_call(const CollArgs& a, const Comm& c) {
  const GpuWorkspace* ws = spans_nodes(c) ? nullptr : existing_workspace(c);
  return {a.coll, a.bytes, a.blocking, spans_nodes(c), ws && kernels_allowed(*ws),
          a.coll == Collective::reduce_scatter && block_form_supported(a, c)};
}

double rule_penalty_us(const Algorithm& self, const RuleCall& r, const Settings& s) {
  std::string why;
  return rule_pick(r, s, &why) == &self ? 0 : kRuleDeclinesUs;
}

// Across nodes the rule does not read the settings, and without a workspace no GPU algorithm
// supports the call: the defaults serve both.
const Settings& rule_settings(const Comm& c) {
  static const Settings defaults;
  const GpuWorkspace* ws = existing_workspace(c);
  return ws ? settings_of(*ws) : defaults;
}

double rule_penalty_us(const Algorithm& self, const CollArgs& a, const Comm& c) {
  return rule_penalty_us(self, rule_call(a, c), rule_settings(c));
}

std::string rule_reason(const Algorithm& chosen, const CollArgs& a, const Comm& c) {
  std::string why;
  const Algorithm* pick = rule_pick(rule_call(a, c), rule_settings(c), &why);
  return pick == &chosen ? "rule, not a measured model: " + why : std::string("lowest estimate");
}

}  // namespace weft::coll::gpu
