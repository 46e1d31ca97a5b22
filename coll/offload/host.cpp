// The offload host (offload.h): loading the plugin, setting communicators up among their
// leaders, what a call may offload, the fabric's cost, and the leader's step.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "coll/algorithm.h"
#include "coll/comm_state.h"
#include "coll/hier/hierarchy.h"
#include "coll/offload/offload.h"
#include "coll/schedule.h"
#include "runtime/log.h"

namespace weft::coll::offload {

namespace {

struct Loaded {
  void* library = nullptr;
  const weft_offload_plugin* table = nullptr;
  void* plugin = nullptr;
  Options options;
};
Loaded g;

}  // namespace

// A communicator's offload state; stored in its CommState (coll/comm_state.h).
struct CommOffload {
  enum Phase : uint8_t { setting_up, accepted, declined } phase = setting_up;
  void* comm = nullptr;  // the plugin's, at a leader that set up
  weft_offload_caps caps{};
  std::string reason;    // declined: why
  std::string label;
  double hop_us = 0;     // measured at set-up (0: the configured one)
  ~CommOffload();
};

namespace {

std::set<CommOffload*>& open_states() {
  static auto* s = new std::set<CommOffload*>;  // never destroyed: communicators may outlive statics
  return *s;
}

void teardown(CommOffload* st) {
  if (st->comm && g.table) g.table->comm_teardown(st->comm);
  st->comm = nullptr;
  open_states().erase(st);
}

}  // namespace

CommOffload::~CommOffload() { teardown(this); }

namespace {

CommOffload* offload_of(const Comm& c) {
  const CommState* st = find_state(c);
  return st ? st->offload.get() : nullptr;
}

void plugin_log(int level, const char* message) {
  const char* name = g.table && g.table->name ? g.table->name : "plugin";
  switch (level) {
    case WEFT_OFFLOAD_LOG_ERROR: WEFT_ERROR(Subsys::offload, "%s: %s", name, message); break;
    case WEFT_OFFLOAD_LOG_WARN: WEFT_WARN(Subsys::offload, "%s: %s", name, message); break;
    case WEFT_OFFLOAD_LOG_INFO: WEFT_INFO(Subsys::offload, "%s: %s", name, message); break;
    default: WEFT_TRACE(Subsys::offload, "%s: %s", name, message); break;
  }
}

std::string plugin_error(void* comm) {
  const char* e = g.table && g.table->last_error ? g.table->last_error(g.plugin, comm) : nullptr;
  return e && *e ? e : "no detail from the plugin";
}

// A plugin that cannot be used: a WARN, or under require an error.
Status refuse_plugin(const std::string& why) {
  const std::string msg = "in-network offload plugin " + g.options.plugin + ": " + why;
  if (g.table && g.plugin && g.table->finalize) g.table->finalize(g.plugin);
  if (g.library) dlclose(g.library);
  g.library = nullptr;
  g.table = nullptr;
  g.plugin = nullptr;
  if (g.options.mode == Mode::require) {
    WEFT_ERROR(Subsys::offload, "%s (WEFT_OFFLOAD=require)", msg.c_str());
    set_error_detail(msg);
    return Status::not_supported;
  }
  WEFT_WARN(Subsys::offload, "%s; collectives use host algorithms", msg.c_str());
  return Status::ok;
}

uint32_t coll_bit(Collective c) {
  switch (c) {
    case Collective::allreduce: return WEFT_OFFLOAD_ALLREDUCE;
    case Collective::reduce_scatter: return WEFT_OFFLOAD_REDUCE_SCATTER;
    case Collective::allgather: return WEFT_OFFLOAD_ALLGATHER;
    case Collective::barrier: return WEFT_OFFLOAD_BARRIER;
    default: return 0;
  }
}

bool is_reduction(Collective c) { return c == Collective::allreduce || c == Collective::reduce_scatter; }

}  // namespace

Status load(const Options& options, const weft_offload_node_info& node) {
  g.options = options;
  if (options.mode == Mode::off) return Status::ok;
  if (options.plugin.empty()) {
    if (options.mode != Mode::require) return Status::ok;
    const std::string msg = "WEFT_OFFLOAD=require but no plugin is named (WEFT_OFFLOAD_PLUGIN)";
    WEFT_ERROR(Subsys::offload, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::not_supported;
  }
  g.library = dlopen(options.plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!g.library) return refuse_plugin(std::string("cannot be loaded: ") + dlerror());
  auto entry = reinterpret_cast<weft_offload_entry_v1_fn>(dlsym(g.library, WEFT_OFFLOAD_ENTRY_V1));
  if (!entry)
    return refuse_plugin("exports no " WEFT_OFFLOAD_ENTRY_V1 " (this weft speaks offload ABI version " +
                         std::to_string(WEFT_OFFLOAD_ABI_VERSION) + "; the plugin was built for another one)");
  const weft_offload_plugin* table = entry();
  if (!table) return refuse_plugin(WEFT_OFFLOAD_ENTRY_V1 " returned no table");
  if (table->abi_version != WEFT_OFFLOAD_ABI_VERSION)
    return refuse_plugin("offload ABI version " + std::to_string(table->abi_version) + ", this weft speaks version " +
                         std::to_string(WEFT_OFFLOAD_ABI_VERSION));
  if (table->struct_size < sizeof(weft_offload_plugin) || !table->init || !table->comm_setup || !table->query ||
      !table->post || !table->test || !table->comm_teardown || !table->finalize)
    return refuse_plugin("its table is incomplete (struct_size " + std::to_string(table->struct_size) + ", needs " +
                         std::to_string(sizeof(weft_offload_plugin)) + " and every mandatory function)");
  g.table = table;
  const int rc = table->init(&node, plugin_log, &g.plugin);
  if (rc != WEFT_OFFLOAD_OK) {
    const std::string why = "init failed (status " + std::to_string(rc) + ": " + plugin_error(nullptr) + ")";
    g.plugin = nullptr;  // nothing to finalize
    return refuse_plugin(why);
  }
  WEFT_INFO(Subsys::offload, "in-network offload plugin '%s' loaded from %s (mode %s)",
            table->name ? table->name : "?", options.plugin.c_str(),
            options.mode == Mode::require ? "require" : "auto");
  return Status::ok;
}

void unload() {
  if (!g.table) return;
  for (CommOffload* st : std::set<CommOffload*>(open_states())) teardown(st);
  g.table->finalize(g.plugin);
  dlclose(g.library);
  g = Loaded{};
}


bool offloadable(Collective coll) { return coll_bit(coll) != 0; }

namespace {

// The plugin's code for a value of ours, from a table of (ours, the plugin's) pairs.
template <class T, size_t N>
bool plugin_code(T value, const std::pair<T, uint32_t> (&table)[N], uint32_t* out) {
  for (const auto& [ours, theirs] : table)
    if (ours == value) {
      *out = theirs;
      return true;
    }
  return false;
}

constexpr std::pair<BasicType, uint32_t> kDtypes[] = {
    {BasicType::i32, WEFT_OFFLOAD_INT32}, {BasicType::u32, WEFT_OFFLOAD_UINT32},  {BasicType::i64, WEFT_OFFLOAD_INT64},
    {BasicType::u64, WEFT_OFFLOAD_UINT64}, {BasicType::f32, WEFT_OFFLOAD_FLOAT32}, {BasicType::f64, WEFT_OFFLOAD_FLOAT64}};
constexpr std::pair<ReduceOp, uint32_t> kOps[] = {
    {ReduceOp::sum, WEFT_OFFLOAD_SUM}, {ReduceOp::prod, WEFT_OFFLOAD_PROD}, {ReduceOp::min, WEFT_OFFLOAD_MIN},
    {ReduceOp::max, WEFT_OFFLOAD_MAX}, {ReduceOp::band, WEFT_OFFLOAD_BAND}, {ReduceOp::bor, WEFT_OFFLOAD_BOR},
    {ReduceOp::bxor, WEFT_OFFLOAD_BXOR}};

}  // namespace

bool plugin_dtype(BasicType t, uint32_t* out) { return plugin_code(t, kDtypes, out); }

bool plugin_op(ReduceOp op, uint32_t* out) { return plugin_code(op, kOps, out); }

namespace {

constexpr int kCalibrationBarriers = 5;

// The mean time of a few barriers through the plugin, in ns, at a leader (UINT64_MAX: one
// failed, and the plugin's own time limit bounds the wait). Every leader runs them at once;
// a first, untimed one lines the leaders up.
uint64_t time_barriers(CommOffload* st) {
  weft_offload_op_args args{};
  args.struct_size = sizeof args;
  args.coll = WEFT_OFFLOAD_BARRIER;
  auto barrier = [&] {
    void* op = nullptr;
    if (g.table->post(st->comm, &args, &op) != WEFT_OFFLOAD_OK) return false;
    for (int done = 0; !done;)
      if (g.table->test(st->comm, op, &done) != WEFT_OFFLOAD_OK) return false;
    return true;
  };
  if (!barrier()) return UINT64_MAX;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalibrationBarriers; ++i)
    if (!barrier()) return UINT64_MAX;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
  return uint64_t(ns.count()) / kCalibrationBarriers;
}

// Switch levels between c's leaders in the cost model.
double switch_levels(const Comm& c) {
  const double leaders = hierarchy(c).node_count();
  return std::max(1.0, std::ceil(std::log(leaders) / std::log(double(std::max(2, g.options.cost.radix))) - 1e-9));
}

}  // namespace

Status prepare(const CollContext& ctx, const CollArgs& a) {
  const Comm& c = ctx.comm;
  if (!g.table || !offloadable(a.coll)) return Status::ok;
  CommOffload* st = state_of(ctx).offload.get();  // only communicators that span nodes get one
  if (!st) {
    if (!spans_nodes(c)) return Status::ok;
    auto fresh = std::make_shared<CommOffload>();
    fresh->label = c.label();
    state_of(ctx).offload = fresh;
    st = fresh.get();
    open_states().insert(st);
    const Hierarchy& h = hierarchy(c);
    // A key every leader shares, new for every setup (context ids are reused): rank 0's draw.
    uint64_t draw = 0, key = 0;
    if (c.rank == 0)
      draw = (uint64_t(getpid()) << 32) ^ uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
             (uint64_t(c.context_id) << 48);
    const Reduction bor{ReduceOp::bor, BasicType::u64, 8, true};
    WEFT_TRY(coll::allreduce(ctx, &draw, &key, 1, bor));
    // Leaders ask the plugin; non-leaders agree to anything. Then every rank learns the
    // capabilities all leaders share (bitwise and; the smallest sizes).
    uint64_t masks[4] = {~uint64_t(0), ~uint64_t(0), ~uint64_t(0), ~uint64_t(0)};  // accepted, colls, dtypes, ops
    uint64_t sizes[2] = {std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max()};
    std::string why;
    if (h.is_leader()) {
      weft_offload_comm_info info{sizeof(weft_offload_comm_info), key, 0, h.node_count()};
      for (int i = 0; i < h.node_count(); ++i)
        if (h.leaders[size_t(i)] == c.rank) info.leader_index = i;
      const int rc = g.table->comm_setup(g.plugin, &info, &st->comm);
      weft_offload_caps caps{};
      caps.struct_size = sizeof caps;
      if (rc == WEFT_OFFLOAD_OK && g.table->query(st->comm, &caps) == WEFT_OFFLOAD_OK) {
        masks[1] = caps.collectives;
        masks[2] = caps.dtypes;
        masks[3] = caps.ops;
        sizes[0] = caps.max_bytes;
        sizes[1] = caps.fragment_bytes ? caps.fragment_bytes : caps.max_bytes;
      } else {
        masks[0] = 0;
        why = rc == WEFT_OFFLOAD_DECLINED ? "the plugin declined it at leader rank " + std::to_string(c.rank)
                                          : "setting it up failed at leader rank " + std::to_string(c.rank) + " (status " +
                                                std::to_string(rc) + ": " + plugin_error(st->comm) + ")";
        if (rc != WEFT_OFFLOAD_DECLINED) WEFT_WARN(Subsys::offload, "%s on %s", why.c_str(), c.label().c_str());
      }
    }
    uint64_t all_masks[4], all_sizes[2];
    const Reduction band{ReduceOp::band, BasicType::u64, 8, true}, min{ReduceOp::min, BasicType::u64, 8, true};
    WEFT_TRY(coll::allreduce(ctx, masks, all_masks, 4, band));
    WEFT_TRY(coll::allreduce(ctx, sizes, all_sizes, 2, min));
    // The service's own latency for the cost model: the slowest leader's barrier time, agreed
    // by every rank (they must estimate alike).
    uint64_t barrier_ns = 0;
    if (all_masks[0] != 0 && !g.options.hop_given) {
      const uint64_t mine = h.is_leader() ? time_barriers(st) : 0;
      const Reduction max{ReduceOp::max, BasicType::u64, 8, true};
      WEFT_TRY(coll::allreduce(ctx, &mine, &barrier_ns, 1, max));
      if (barrier_ns == UINT64_MAX) {
        all_masks[0] = 0;
        why = "a barrier through the plugin failed at set-up";
      } else {
        st->hop_us = double(barrier_ns) / 1e3 / (2 * switch_levels(c));
      }
    }
    if (all_masks[0] == 0) {
      st->phase = CommOffload::declined;
      st->reason = why.empty() ? "another leader's plugin declined it or failed (its log says why)" : why;
      teardown(st);
      if (g.options.mode == Mode::require)
        WEFT_WARN(Subsys::offload, "in-network offload on %s (%d leaders): %s", c.label().c_str(), h.node_count(),
                  st->reason.c_str());
      else
        WEFT_INFO(Subsys::offload, "in-network offload on %s (%d leaders): %s; its collectives use host algorithms",
                  c.label().c_str(), h.node_count(), st->reason.c_str());
    } else {
      st->phase = CommOffload::accepted;
      st->caps.struct_size = sizeof st->caps;
      st->caps.collectives = uint32_t(all_masks[1]);
      st->caps.dtypes = uint32_t(all_masks[2]);
      st->caps.ops = uint32_t(all_masks[3]);
      st->caps.max_bytes = all_sizes[0];
      st->caps.fragment_bytes = all_sizes[1];
      WEFT_INFO(Subsys::offload,
                "in-network offload set up on %s: %d node leaders, plugin '%s', collectives 0x%x, up to %llu bytes, "
                "fragments of %llu bytes; cost model: %.2f us per switch level each way (%s)",
                c.label().c_str(), h.node_count(), g.table->name ? g.table->name : "?", st->caps.collectives,
                (unsigned long long)st->caps.max_bytes, (unsigned long long)st->caps.fragment_bytes,
                st->hop_us > 0 ? st->hop_us : g.options.cost.hop_us,
                st->hop_us > 0 ? "from barriers timed at set-up" : "WEFT_OFFLOAD_HOP_US");
    }
    // The set-up's own allreduces chose host algorithms while offload was not yet a candidate:
    // every size class chooses again now.
    state_of(ctx).choices.clear();
  }
  // Under require every offloadable call must be offloaded; otherwise a call the offload
  // cannot take is logged once per reason.
  std::string why;
  if (usable(a, ctx, &why)) return Status::ok;
  if (st->phase == CommOffload::declined && g.options.mode != Mode::require) return Status::ok;  // said at set-up
  const std::string msg = std::string(collective_name(a.coll)) + " on " + c.label() + " cannot be offloaded: " + why;
  if (g.options.mode == Mode::require) {
    WEFT_ERROR(Subsys::offload, "%s (WEFT_OFFLOAD=require)", msg.c_str());
    set_error_detail(msg + " (WEFT_OFFLOAD=require)");
    return Status::not_supported;
  }
  if (log_first_time("offload-fallback:" + std::to_string(c.context_id) + ":" + msg))
    WEFT_INFO(Subsys::offload, "%s; a host algorithm runs it", msg.c_str());
  return Status::ok;
}

bool usable(const CollArgs& a, const CollContext& ctx, std::string* why) {
  const Comm& c = ctx.comm;
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  const CommOffload* st = state_of(ctx).offload.get();
  if (!g.table) return no("no offload plugin is loaded");
  if (!st || st->phase == CommOffload::setting_up) return no("the communicator is not set up for offload");
  if (st->phase == CommOffload::declined) return no(st->reason);
  if (!(st->caps.collectives & coll_bit(a.coll))) return no("the plugin does not offer this collective");
  if (a.bytes > st->caps.max_bytes)
    return no(std::to_string(a.bytes) + " bytes exceed the plugin's limit of " + std::to_string(st->caps.max_bytes));
  if (is_reduction(a.coll)) {
    uint32_t dtype = 0, op = 0;
    if (a.red.user || !a.red.commutative) return no("user-defined or non-commutative operation");
    if (!plugin_dtype(a.red.type, &dtype) || !(st->caps.dtypes & (1u << dtype)))
      return no(std::string("the plugin does not reduce ") + basic_type_name(a.red.type));
    if (!plugin_op(a.red.op, &op) || !(st->caps.ops & (1u << op)))
      return no(std::string("the plugin does not apply ") + reduce_op_name(a.red.op));
    if ((op == WEFT_OFFLOAD_BAND || op == WEFT_OFFLOAD_BOR || op == WEFT_OFFLOAD_BXOR) &&
        (dtype == WEFT_OFFLOAD_FLOAT32 || dtype == WEFT_OFFLOAD_FLOAT64))
      return no("bitwise operations on floating-point types");
  }
  if (a.coll == Collective::allgather && a.recv_blocks.size() != size_t(c.size))
    return no("the receive layout is not known at every rank");
  return true;
}

// Only communicators that span nodes are ever set up, so usable() says it all.
bool supports(const CollArgs& a, const CollContext& ctx) { return usable(a, ctx); }

bool required(const CollArgs& a, const CollContext& ctx) {
  return g.options.mode == Mode::require && g.table && offloadable(a.coll) && usable(a, ctx);
}


double fabric_us(const Comm& c, double bytes, const CostModel& m) {
  const CommOffload* st = offload_of(c);
  const CostParams& p = g.options.cost;
  const double levels = switch_levels(c), hop_us = st && st->hop_us > 0 ? st->hop_us : p.hop_us;
  const double fragment = st && st->caps.fragment_bytes ? double(st->caps.fragment_bytes) : p.fragment_bytes;
  const double fragments = std::max(1.0, std::ceil(bytes / fragment));
  return 2 * levels * hop_us + bytes * net_level(m).beta_us_per_byte + fragments * p.fragment_us;
}

namespace {

// One leader's operation, posted and polled by the leader's poll step of every run.
struct LeaderOperation {
  std::shared_ptr<void> keep;  // the communicator's state
  CommOffload* st = nullptr;
  weft_offload_op_args args{};
  void* op = nullptr;
  bool posted = false;
  std::string error;
};

}  // namespace

void append_leader_operation(Schedule& s, const Comm& c, const weft_offload_op_args& args) {
  const Hierarchy& h = hierarchy(c);
  char* word = s.scratch(sizeof(uint64_t));  // 0: done; else the negated plugin status
  std::shared_ptr<LeaderOperation> lop;
  s.next_round();
  if (h.is_leader()) {
    lop = std::make_shared<LeaderOperation>();
    lop->keep = state_of(c).offload;
    lop->st = offload_of(c);
    lop->args = args;
    lop->args.struct_size = sizeof lop->args;
    s.poll([lop, word](const CollContext&) -> Status {
      auto finish = [&](int rc) {
        const uint64_t code = rc == WEFT_OFFLOAD_OK ? 0 : uint64_t(-int64_t(rc));
        memcpy(word, &code, sizeof code);
        if (rc != WEFT_OFFLOAD_OK) lop->error = "status " + std::to_string(rc) + ": " + plugin_error(lop->st->comm);
        lop->posted = false;
        lop->op = nullptr;
        return Status::ok;  // the status word tells the node; the check step fails the call
      };
      if (!g.table || !lop->st->comm) return finish(WEFT_OFFLOAD_ERR_INTERNAL);
      if (!lop->posted) {
        const int rc = g.table->post(lop->st->comm, &lop->args, &lop->op);
        if (rc != WEFT_OFFLOAD_OK) return finish(rc);
        lop->posted = true;
      }
      int done = 0;
      const int rc = g.table->test(lop->st->comm, lop->op, &done);
      if (rc != WEFT_OFFLOAD_OK) return finish(rc);
      return done ? finish(WEFT_OFFLOAD_OK) : Status::pending;
    });
  }
  auto down = build_bcast_binomial(group_view(h.node, c.rank), word, sizeof(uint64_t), 0);
  s.append_mapped(*down, h.node);
  s.next_round();
  const int leader = h.node.front();
  const std::string label = c.label();
  s.call([word, lop, leader, label]() -> Status {
    uint64_t code = 0;
    memcpy(&code, word, sizeof code);
    if (code == 0) return Status::ok;
    const std::string msg = lop ? "in-network offload on " + label + " failed (" + lop->error + ")"
                                : "in-network offload on " + label + " failed at this node's leader, rank " +
                                      std::to_string(leader) + " (plugin status -" + std::to_string(code) + ")";
    WEFT_ERROR(Subsys::offload, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::transport;
  });
}

}  // namespace weft::coll::offload
