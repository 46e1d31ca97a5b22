// The MPI_T variable tables (tool_vars.h): built from the config registry and the layers'
// counters, once.
#include "tool_vars.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <strings.h>

#include "coll/algorithm.h"
#include "coll/coll.h"
#include "coll/gpu/gpu_coll.h"
#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/wait_deadline.h"
#include "state.h"

namespace weft::mpi::tool {

namespace {

enum CategoryId { kCore, kPt2pt, kColl, kTopo, kGpu, kRma, kOffload, kKv, kCategoryCount };

// One category per layer, in the order of CategoryId.
constexpr struct {
  const char* name;
  const char* desc;
} kCategories[] = {
    {"weft_core", "the runtime: logging, waiting, progress, timeouts, profiling and the build's compilers"},
    {"weft_pt2pt", "point-to-point transport: the path (shared memory or UCX), its rings and staging"},
    {"weft_coll", "collectives: algorithm selection, tuning and shared-memory collectives"},
    {"weft_topo", "node topology: the topology file, fake nodes"},
    {"weft_gpu", "CUDA device buffers: IPC, staging and GPU collectives"},
    {"weft_rma", "one-sided communication"},
    {"weft_offload", "in-network and daemon offload of collectives"},
    {"weft_kv", "the KV-cache transfer API"},
};
static_assert(std::size(kCategories) == kCategoryCount);

// The category of a setting, by the prefix of its name (the registry lists them by layer).
CategoryId category_of(std::string_view name) {
  static constexpr struct {
    const char* prefix;
    CategoryId category;
  } kRules[] = {
      {"WEFT_UCX_", kPt2pt},          {"WEFT_PT2PT", kPt2pt}, {"WEFT_SHM_", kPt2pt},
      {"WEFT_STAGING_", kPt2pt},      {"WEFT_COPY_", kPt2pt}, {"WEFT_FAKE_NODES", kTopo},
      {"WEFT_TOPO_", kTopo},          {"WEFT_COLL_", kColl},  {"WEFT_CUDA", kGpu},
      {"WEFT_GPU_", kGpu},            {"WEFT_OFFLOAD", kOffload}, {"WEFT_AGGD_", kOffload},
      {"WEFT_RMA_", kRma},            {"WEFT_KV_", kKv},
  };
  for (const auto& r : kRules)
    if (name.substr(0, strlen(r.prefix)) == r.prefix) return r.category;
  return kCore;
}

// Settings that take effect when written while the job runs; every other one is read at init.
bool writable(std::string_view name) { return name == "WEFT_DEBUG" || name == "WEFT_TIMEOUT"; }

// --- performance variable readers ---

Transport* transport() { return g_state ? g_state->transport.get() : nullptr; }

// arg: 2 * path + (0 messages, 1 bytes).
uint64_t read_sent(size_t arg) {
  const Transport* t = transport();
  if (!t) return 0;
  const Transport::Traffic sent = t->sent_via(Transport::Path(arg / 2));
  return arg % 2 ? sent.bytes : sent.messages;
}

uint64_t read_unexpected(size_t) {
  const Transport* t = transport();
  return t ? t->unexpected_messages() : 0;
}

uint64_t read_algorithm_calls(size_t index) { return coll::algorithm_calls(index); }

// arg: 0 hits, 1 misses (a mapping opened), 2 evictions, 3 mappings open.
uint64_t read_ipc_cache(size_t arg) {
  const IpcCacheStats s = cuda_ipc_stats();
  const uint64_t values[] = {s.hits, s.opens, s.evictions, uint64_t(s.live), s.remaps};
  return arg < std::size(values) ? values[arg] : 0;
}

uint64_t read_registrations(size_t arg) {
  const coll::gpu::RegistrationStats r = coll::gpu::registration_stats();
  const uint64_t values[] = {r.made, r.dropped_stale, r.evicted, r.released_here, r.live};
  return arg < std::size(values) ? values[arg] : 0;
}

struct Tables {
  std::vector<Enumeration> enums;  // reserved up front: the control variables point into it
  std::vector<ControlVar> cvars;
  std::vector<PerfVar> pvars;
  std::vector<Category> cats;
};

void add_control_vars(Tables& t) {
  const auto settings = config_vars();
  size_t choices = 0;
  for (const ConfigVar& s : settings) choices += s.type == ConfigType::choice;
  t.enums.reserve(choices);
  for (const ConfigVar& s : settings) {
    const CategoryId cat = category_of(s.name);
    ControlVar v{&s, cat, cat == kCore ? MPI_T_VERBOSITY_USER_BASIC : MPI_T_VERBOSITY_TUNER_BASIC,
                 MPI_INT, 1, nullptr, writable(s.name) ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY};
    switch (s.type) {
      case ConfigType::string: v.datatype = MPI_CHAR; v.count = kStringCount; break;
      case ConfigType::integer: v.datatype = MPI_COUNT; break;
      case ConfigType::boolean: break;
      case ConfigType::size: v.datatype = MPI_UNSIGNED_LONG_LONG; break;
      case ConfigType::choice: {
        Enumeration e{s.name, {}};
        std::string_view rest(s.choices);
        for (size_t bar; (bar = rest.find('|')) != std::string_view::npos; rest.remove_prefix(bar + 1))
          e.items.emplace_back(rest.substr(0, bar));
        e.items.emplace_back(rest);
        t.enums.push_back(std::move(e));
        v.enumeration = &t.enums.back();
        break;
      }
    }
    t.cats[size_t(cat)].cvars.push_back(int(t.cvars.size()));
    t.cvars.push_back(v);
  }
}

void add_perf_var(Tables& t, CategoryId cat, std::string name, std::string desc, int var_class,
                  uint64_t (*read)(size_t), size_t arg) {
  t.cats[size_t(cat)].pvars.push_back(int(t.pvars.size()));
  t.pvars.push_back(PerfVar{std::move(name), std::move(desc), cat, MPI_T_VERBOSITY_TUNER_BASIC, var_class,
                            var_class != MPI_T_PVAR_CLASS_COUNTER, read, arg});
}

void add_perf_vars(Tables& t) {
  const char* paths[] = {"shm", "ucx", "self"};
  const char* path_docs[] = {"weft's shared memory (ranks of this node)", "UCX",
                             "this rank to itself, outside shared memory"};
  for (size_t p = 0; p < std::size(paths); ++p) {
    add_perf_var(t, kPt2pt, std::string("weft_pt2pt_") + paths[p] + "_messages_sent",
                 std::string("messages this rank sent through ") + path_docs[p] +
                     " (point-to-point and the collectives' and one-sided operations' own messages)",
                 MPI_T_PVAR_CLASS_COUNTER, read_sent, 2 * p);
    add_perf_var(t, kPt2pt, std::string("weft_pt2pt_") + paths[p] + "_bytes_sent",
                 std::string("payload bytes this rank sent through ") + path_docs[p],
                 MPI_T_PVAR_CLASS_COUNTER, read_sent, 2 * p + 1);
  }
  add_perf_var(t, kPt2pt, "weft_pt2pt_unexpected_queue_length",
               "messages that arrived through shared memory before a matching receive was posted "
               "(messages over UCX are matched inside UCX and not counted)",
               MPI_T_PVAR_CLASS_LEVEL, read_unexpected, 0);
  const auto algs = coll::algorithms();
  for (size_t k = 0; k < algs.size(); ++k) {
    const char* coll_name = coll::collective_name(algs[k]->coll);
    add_perf_var(t, kColl, std::string("weft_coll_") + coll_name + "_" + algs[k]->name + "_calls",
                 std::string("calls of ") + coll_name + " on intracommunicators run by the algorithm " +
                     algs[k]->name,
                 MPI_T_PVAR_CLASS_COUNTER, read_algorithm_calls, k);
  }
  add_perf_var(t, kGpu, "weft_gpu_ipc_cache_hits",
               "CUDA IPC mappings of peers' buffers found in the cache", MPI_T_PVAR_CLASS_COUNTER,
               read_ipc_cache, 0);
  add_perf_var(t, kGpu, "weft_gpu_ipc_cache_misses",
               "CUDA IPC mappings opened because the cache did not hold them", MPI_T_PVAR_CLASS_COUNTER,
               read_ipc_cache, 1);
  add_perf_var(t, kGpu, "weft_gpu_ipc_cache_evictions",
               "CUDA IPC mappings closed early: to make room (WEFT_CUDA_IPC_CACHE), or because the peer freed "
               "that memory", MPI_T_PVAR_CLASS_COUNTER, read_ipc_cache, 2);
  add_perf_var(t, kGpu, "weft_gpu_ipc_cache_remaps",
               "CUDA IPC opens the driver refused as already mapped, retried after closing that peer's mappings",
               MPI_T_PVAR_CLASS_COUNTER, read_ipc_cache, 4);
  add_perf_var(t, kGpu, "weft_gpu_ipc_cache_open", "CUDA IPC mappings open now",
               MPI_T_PVAR_CLASS_LEVEL, read_ipc_cache, 3);
  const char* const registration_counters[][2] = {
      {"made", "GPU buffer registrations made (MPIX_Comm_register_buffer, persistent and stream-ordered calls)"},
      {"dropped_stale", "stream-ordered calls' buffer registrations dropped because a rank freed their memory"},
      {"evicted", "stream-ordered calls' buffer registrations evicted for a user's or persistent call's"},
      {"released_here",
       "buffer registrations of memory this rank freed, dropped here so that a peer's buffer could be mapped"}};
  for (size_t k = 0; k < std::size(registration_counters); ++k)
    add_perf_var(t, kGpu, std::string("weft_gpu_registrations_") + registration_counters[k][0],
                 registration_counters[k][1], MPI_T_PVAR_CLASS_COUNTER, read_registrations, k);
  add_perf_var(t, kGpu, "weft_gpu_registrations_live", "GPU buffer registrations live now, on every communicator",
               MPI_T_PVAR_CLASS_LEVEL, read_registrations, 4);
}

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    for (const auto& c : kCategories) t.cats.push_back(Category{c.name, c.desc, {}, {}});
    add_control_vars(t);
    add_perf_vars(t);
    return t;
  }();
  return t;
}

// Values written through MPI_T, by setting name; they replace the environment's in later reads.
std::mutex g_written_mutex;
std::map<std::string, std::string, std::less<>> g_written;

std::string current_value(const ConfigVar& s) {
  {
    std::lock_guard lock(g_written_mutex);
    auto it = g_written.find(s.name);
    if (it != g_written.end()) return it->second;
  }
  std::string v(process_config().value(s.name));
  return v.empty() ? std::string(s.default_value) : v;
}

int choice_index(const Enumeration& e, std::string_view value) {
  for (size_t k = 0; k < e.items.size(); ++k)
    if (e.items[k].size() == value.size() && strncasecmp(e.items[k].data(), value.data(), value.size()) == 0)
      return int(k);
  return -1;
}

}  // namespace

std::span<const ControlVar> control_vars() { return tables().cvars; }
std::span<const PerfVar> perf_vars() { return tables().pvars; }
std::span<const Category> categories() { return tables().cats; }

bool is_enumeration(const void* p) {
  for (const Enumeration& e : tables().enums)
    if (&e == p) return true;
  return false;
}

void read_control(const ControlVar& v, void* buf) {
  const std::string value = current_value(*v.setting);
  switch (v.setting->type) {
    case ConfigType::string: {
      char* out = static_cast<char*>(buf);
      const size_t n = std::min(value.size(), size_t(kStringCount - 1));
      memcpy(out, value.data(), n);
      out[n] = '\0';
      break;
    }
    case ConfigType::integer: *static_cast<MPI_Count*>(buf) = strtoll(value.c_str(), nullptr, 10); break;
    case ConfigType::boolean: {
      bool on = false;
      (void)parse_bool(value, &on);
      *static_cast<int*>(buf) = on;
      break;
    }
    case ConfigType::size: {
      uint64_t n = 0;
      (void)parse_size(value, &n);
      *static_cast<unsigned long long*>(buf) = n;
      break;
    }
    case ConfigType::choice: *static_cast<int*>(buf) = choice_index(*v.enumeration, value); break;
  }
}

int write_control(const ControlVar& v, const void* buf) {
  const std::string_view name = v.setting->name;
  std::string text;
  if (name == "WEFT_DEBUG") {
    const int level = *static_cast<const int*>(buf);
    if (level < 0 || size_t(level) >= v.enumeration->items.size()) {
      WEFT_WARN(Subsys::core, "MPI_T_cvar_write: %d is not a value of WEFT_DEBUG (0 to %zu)", level,
                v.enumeration->items.size() - 1);
      return MPI_T_ERR_INVALID;
    }
    // The choices are listed in LogLevel's order.
    log_set_level(LogLevel(level));
    text = v.enumeration->items[size_t(level)];
  } else if (name == "WEFT_TIMEOUT") {
    // MPI_Init applies the environment's bound when it returns: a write before would be lost.
    if (!g_running) {
      WEFT_INFO(Subsys::core, "MPI_T_cvar_write: WEFT_TIMEOUT can be written only while MPI is initialized");
      return MPI_T_ERR_CVAR_SET_NOT_NOW;
    }
    const char* in = static_cast<const char*>(buf);
    text.assign(in, strnlen(in, kStringCount - 1));
    char* end = nullptr;
    errno = 0;
    const double seconds = strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(seconds) || seconds < 0) {
      WEFT_WARN(Subsys::core, "MPI_T_cvar_write: WEFT_TIMEOUT='%s' is not a number of seconds (0 for no bound)",
                text.c_str());
      return MPI_T_ERR_INVALID;
    }
    set_wait_timeout(seconds);
  } else {
    WEFT_INFO(Subsys::core, "MPI_T_cvar_write: %s is read once, at init; it cannot be changed while running",
              v.setting->name);
    return MPI_T_ERR_CVAR_SET_NEVER;
  }
  std::lock_guard lock(g_written_mutex);
  g_written[std::string(name)] = std::move(text);
  WEFT_INFO(Subsys::core, "MPI_T: %s set to %s", v.setting->name, g_written[std::string(name)].c_str());
  return MPI_SUCCESS;
}

}  // namespace weft::mpi::tool
