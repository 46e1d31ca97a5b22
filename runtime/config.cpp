#include "config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "log.h"

extern char** environ;

namespace weft {

namespace {

constexpr ConfigVar kVars[] = {
    {"WEFT_DEBUG", ConfigType::choice, "WARN",
     "log level: ERROR, WARN, INFO (paths, transports and algorithms chosen) or TRACE",
     "ERROR|WARN|INFO|TRACE"},
    {"WEFT_DEBUG_SUBSYS", ConfigType::string, "",
     "comma-separated subsystems to log (core,init,pt2pt,coll,topo,gpu,rma,offload); a leading ^ "
     "excludes them; empty means all", nullptr},
    {"WEFT_DEBUG_FILE", ConfigType::string, "",
     "write the log to this file instead of stderr; %h host, %p pid, %r rank", nullptr},
    {"WEFT_WAIT_POLICY", ConfigType::choice, "auto",
     "how blocking calls wait: spin, yield (sched_yield after every idle poll), or auto (yield "
     "when the host's ranks whose bindings overlap this rank's outnumber the cpus those bindings "
     "cover, else spin then yield)",
     "auto|spin|yield"},
    {"WEFT_SPIN_COUNT", ConfigType::integer, "2000",
     "idle progress polls before a waiting rank yields the core (policy auto or spin)", nullptr},
    {"WEFT_REQUIRE_FAST_PATH", ConfigType::boolean, "0",
     "turn every fallback to a slower path into an error instead of a warning", nullptr},
    {"WEFT_CUDA", ConfigType::choice, "auto",
     "CUDA support: auto (use it when a driver and a device are present) or off", "auto|off"},
    {"WEFT_CUDA_IPC", ConfigType::choice, "auto",
     "device buffers between ranks of one node: auto (CUDA IPC: the receiver maps the sender's "
     "buffer and copies it once) or off (staged through host memory)", "auto|off"},
    {"WEFT_CUDA_IPC_CACHE", ConfigType::integer, "64",
     "CUDA IPC mappings of peers' buffers kept open per process (least recently used closed "
     "first; a freed and reallocated buffer is mapped anew)", nullptr},
    {"WEFT_CUDA_STAGING_CHUNK", ConfigType::size, "0",
     "when not 0, device buffers sent to or received from ranks reached over UCX (other nodes) "
     "are staged through two pinned host chunks of this size per message: the copy of one chunk "
     "to or from the GPU overlaps the network transfer of the other (at least 4k; smaller values "
     "are raised to 4k). 0 (the default: faster over UCX tcp from 32 KiB, measured on one H200) "
     "stages the whole message through host memory, with a warning", nullptr},
    {"WEFT_UCX_ERR_MODE", ConfigType::choice, "none",
     "UCX endpoint error handling: none (all transports, fastest) or peer (detects peer "
     "failure on the transport, may exclude shared-memory transports)", "none|peer"},
    {"WEFT_PT2PT", ConfigType::choice, "auto",
     "point-to-point path: auto (weft shared memory when every rank is on one node, else ucx), "
     "ucx, or shm (fail at init if it cannot be used)", "auto|ucx|shm"},
    {"WEFT_SHM_CELLS", ConfigType::integer, "16",
     "cells in each shared-memory ring (one ring per sender and receiver on a node)", nullptr},
    {"WEFT_SHM_CELL_SIZE", ConfigType::size, "16k",
     "bytes per shared-memory cell (64-byte header included); messages up to the rest go eager, "
     "larger ones are copied once with cma. Unset, it is 4k when more than 32 ranks share a "
     "node (ring memory grows with the square of the local ranks)", nullptr},
    {"WEFT_SHM_SPLIT_MIN", ConfigType::size, "64k",
     "messages from this size up are copied by receiver and sender together (each copies half, "
     "on two cores); 0 turns it off", nullptr},
    {"WEFT_STAGING_CACHE", ConfigType::size, "1g",
     "bytes of packing and buffered-send buffers kept for reuse once released (it never holds "
     "more than was once in flight at the same time); 0 returns every buffer at once", nullptr},
    {"WEFT_FAKE_NODES", ConfigType::integer, "1",
     "split one host's ranks into this many virtual nodes (consecutive blocks of local ranks): "
     "ranks of different virtual nodes talk over UCX tcp on the loopback device, never shared "
     "memory, so multi-node paths run on one machine", nullptr},
    {"WEFT_TOPO_FILE", ConfigType::string, "",
     "use the node topology this file describes (weft JSON, or hwloc XML) instead of reading the "
     "machine through hwloc", nullptr},
    {"WEFT_TOPO_DUMP", ConfigType::string, "",
     "write the node topology and this rank's place in it as JSON to this file at init (%h host, "
     "%r rank, %p pid; without %r only each node's first rank writes); it adds a job-wide "
     "exchange at init, so set it for every rank or for none", nullptr},
    {"WEFT_COLL_SHM_SEGMENT", ConfigType::size, "4m",
     "data slots of one communicator's shared-memory collective segment (made on the first "
     "shared-memory collective of a communicator whose ranks share a node); a rank's slot is "
     "this / (ranks x WEFT_COLL_SHM_SLOTS), between 4 KiB and 64 KiB", nullptr},
    {"WEFT_COLL_SHM_SLOT", ConfigType::size, "0",
     "a rank's slot in the shared-memory collectives, overriding the share of "
     "WEFT_COLL_SHM_SEGMENT (0: that share): the largest reduce/allreduce vector they carry, "
     "and the piece size of their bcast and allgather", nullptr},
    {"WEFT_COLL_SHM_SLOTS", ConfigType::integer, "4",
     "shared-memory collectives a rank may run ahead of the slowest rank of its communicator "
     "(slots per rank, at least 2)", nullptr},
    {"WEFT_COLL_DUMP", ConfigType::boolean, "0",
     "print every collective schedule (its rounds of sends, receives, reductions and copies) to "
     "stderr before it runs", nullptr},
    {"WEFT_COLL_TUNE", ConfigType::string, "",
     "collective algorithm overrides, e.g. allreduce:0-4k:@recursive_doubling#allreduce:4k-inf:@ring "
     "('@name' forces, '^name' excludes; checked at init; weft_info --algorithms lists the names)",
     nullptr},
    {"WEFT_COLL_MODEL", ConfigType::string, "calibrate",
     "where the collective cost model's alpha, beta and gamma come from: calibrate (measured at "
     "init between ranks 0 and 1) or the path of a tuning file with lines 'alpha_us = ...', "
     "'beta_us_per_byte = ...', 'gamma_us_per_byte = ...'", nullptr},
    {"WEFT_GPU_COLL", ConfigType::choice, "auto",
     "GPU-native collectives (blocking MPI_Allreduce on device buffers, every rank on one node): "
     "auto (when every rank can map every other rank's GPU workspace) or off (staged through host "
     "memory)", "auto|off"},
    {"WEFT_GPU_COLL_SCRATCH", ConfigType::size, "64m",
     "device memory per rank and communicator for the GPU-native collectives, made on a "
     "communicator's first one: two slots of half this each; larger messages run in slot-sized "
     "pieces (the copy-engine algorithm adds (ranks - 1) slots of local memory)", nullptr},
    {"WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN", ConfigType::size, "256k",
     "device-memory allreduce: gpu_two_shot (reduce-scatter + allgather through IPC) from this "
     "many bytes, gpu_one_shot below (a guess, not yet measured; WEFT_COLL_TUNE forces either)",
     nullptr},
    {"WEFT_GPU_ALLREDUCE_DIRECT_MIN", ConfigType::size, "1m",
     "blocking device-memory allreduce: gpu_direct (IPC handles of the user's buffers exchanged, "
     "each rank reduces its share of every input into every output, no workspace copies) from "
     "this many bytes; 0 never; a buffer's first use costs an IPC open per peer (then cached)",
     nullptr},
    {"WEFT_GPU_COLL_MODE", ConfigType::choice, "auto",
     "GPU-native collectives: auto (kernels synchronising through flags in IPC memory, unless "
     "ranks share a GPU and some rank sees no MPS control pipe: then copy-engine algorithms with "
     "host barriers), kernels, or copy_engine; set it alike on every rank",
     "auto|kernels|copy_engine"},
    {"WEFT_OFFLOAD", ConfigType::choice, "auto",
     "in-network reduction offload (include/weft/offload.h): auto (the plugin, if one is named, "
     "is a candidate of the selector; declines fall back to host algorithms, logged at INFO), "
     "require (every allreduce, reduce_scatter, allgather and barrier on communicators that span "
     "nodes is offloaded, or fails), off",
     "off|auto|require"},
    {"WEFT_OFFLOAD_PLUGIN", ConfigType::string, "",
     "path of the offload plugin (a shared object exporting weft_offload_plugin_v1), e.g. "
     "libweft-offload-aggd.so", nullptr},
    {"WEFT_OFFLOAD_HOP_US", ConfigType::string, "1.0",
     "offload cost model: microseconds through one switch level, one way", nullptr},
    {"WEFT_OFFLOAD_RADIX", ConfigType::integer, "40",
     "offload cost model: node leaders (or switches) below one switch; levels = ceil(log_radix(leaders))",
     nullptr},
    {"WEFT_OFFLOAD_FRAGMENT_US", ConfigType::string, "0.2",
     "offload cost model: microseconds per fragment of the service's reduction unit", nullptr},
    {"WEFT_AGGD_ADDRESS", ConfigType::string, "",
     "libweft-offload-aggd.so: where weft-aggd listens (unix:/path or tcp:host:port)", nullptr},
    {"WEFT_AGGD_KEY_FILE", ConfigType::string, "",
     "libweft-offload-aggd.so: the key that admits this job to weft-aggd's groups: the daemon's "
     "key file (the job key is derived from it and the job id) or a job key file made by "
     "weft-aggd --print-job-key (its job name is the job id sent); must be private to the user "
     "(mode 0600); empty: $HOME/.weft/aggd.key", nullptr},
    {"WEFT_AGGD_TIMEOUT_MS", ConfigType::integer, "10000",
     "libweft-offload-aggd.so: an offloaded operation with no progress for this long fails", nullptr},
    {"WEFT_RMA_SEGMENT", ConfigType::boolean, "1",
     "MPI_Win_allocate on a communicator within one node: put the memory in a segment every "
     "rank maps (accesses are loads, stores and CPU atomics); 0 keeps it private (UCX)", nullptr},
    {"WEFT_RMA_CMA", ConfigType::boolean, "1",
     "puts and gets to windows of user memory (MPI_Win_create, dynamic) on ranks of the same "
     "node by cross-memory attach; 0 sends them through UCX", nullptr},
    {"WEFT_RMA_LOCK_READER_SLOTS", ConfigType::boolean, "0",
     "windows of up to 32 ranks record each shared lock holder as a bit of the target's lock "
     "word; 1 counts them and records each in a slot beside it, as larger windows do (for "
     "testing that encoding; any rank asking decides for the whole window)", nullptr},
    {"WEFT_COPY_STREAMING_MIN", ConfigType::size, "256k",
     "one-sided puts and gets on memory this rank maps copy with non-temporal stores from this "
     "many bytes (no read of the destination first, caches left alone); 0 never", nullptr},
    {"WEFT_RMA_STAGED", ConfigType::boolean, "0",
     "windows in host memory reached from other nodes the way device windows are: puts and gets "
     "as requests the target applies when it progresses (for testing that path without a GPU)",
     nullptr},
    {"WEFT_KV_IMPORT_TIMEOUT", ConfigType::integer, "10000",
     "milliseconds weft_kv_import waits for the owner of a blob to vouch for it (its seal and "
     "regions) before it gives up with WEFT_KV_ERR_PEER", nullptr},
    {"WEFT_KV_UNCHECKED_PREPARE", ConfigType::boolean, "0",
     "testing: weft_kv_prepare does not check remote blocks against the imported regions, so "
     "that only the owner's checks stand between a request and the owner's memory", nullptr},
    {"WEFT_KV_PROGRESS_THREAD", ConfigType::boolean, "1",
     "each KV agent runs a progress thread; 0 leaves progress to weft_kv_progress and the "
     "agent's calls", nullptr},
    // Read by the compiler wrappers (tools/mpicc.in), shell scripts that run before any weft
    // code: registered so that they are documented and not reported as unknown.
    {"WEFT_CC", ConfigType::string, "",
     "mpicc: the C compiler it runs; empty: the compiler weft was built with", nullptr},
    {"WEFT_CXX", ConfigType::string, "",
     "mpicxx: the C++ compiler it runs; empty: the compiler weft was built with", nullptr},
};

bool matches_choice(const char* choices, std::string_view v) {
  std::string_view rest(choices);
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    std::string_view item = rest.substr(0, bar);
    if (item.size() == v.size() && strncasecmp(item.data(), v.data(), v.size()) == 0) return true;
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  return false;
}

const ConfigVar* find_var(std::string_view name) {
  for (const auto& v : kVars)
    if (name == v.name) return &v;
  return nullptr;
}

Status validate(const ConfigVar& var, std::string_view v) {
  bool good = true;
  switch (var.type) {
    case ConfigType::string: break;
    case ConfigType::integer: {
      std::string s(v);
      char* end = nullptr;
      errno = 0;
      (void)strtoll(s.c_str(), &end, 10);
      good = !s.empty() && end && *end == '\0' && errno == 0;
      break;
    }
    case ConfigType::boolean: { bool b; good = parse_bool(v, &b); break; }
    case ConfigType::size: { uint64_t n; good = parse_size(v, &n); break; }
    case ConfigType::choice: good = matches_choice(var.choices, v); break;
  }
  if (good) return Status::ok;
  std::string msg = std::string("invalid value '") + std::string(v) + "' for " + var.name +
                    " (expected " + config_type_name(var.type) +
                    (var.choices ? std::string(": ") + var.choices : std::string()) + ")";
  WEFT_ERROR(Subsys::core, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::invalid_arg;
}

}  // namespace

std::span<const ConfigVar> config_vars() { return kVars; }

const char* config_type_name(ConfigType t) {
  switch (t) {
    case ConfigType::string: return "string";
    case ConfigType::integer: return "integer";
    case ConfigType::boolean: return "boolean";
    case ConfigType::size: return "size";
    case ConfigType::choice: return "one of";
  }
  return "?";
}

bool parse_bool(std::string_view t, bool* out) {
  for (const char* s : {"1", "y", "yes", "on", "true"})
    if (t.size() == strlen(s) && strncasecmp(t.data(), s, t.size()) == 0) return *out = true, true;
  for (const char* s : {"0", "n", "no", "off", "false"})
    if (t.size() == strlen(s) && strncasecmp(t.data(), s, t.size()) == 0) return *out = false, true;
  return false;
}

bool parse_size(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t n = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + uint64_t(text[i] - '0');
  }
  if (i == 0) return false;
  uint64_t mult = 1;
  if (i < text.size()) {
    switch (text[i] | 0x20) {
      case 'k': mult = 1ull << 10; break;
      case 'm': mult = 1ull << 20; break;
      case 'g': mult = 1ull << 30; break;
      default: return false;
    }
    ++i;
    if (i < text.size() && (text[i] | 0x20) == 'b') ++i;
    if (i != text.size()) return false;
  }
  if (n > UINT64_MAX / mult) return false;
  *out = n * mult;
  return true;
}

Config Config::capture(const char* const* envp) {
  Config cfg;
  for (const auto& v : kVars) cfg.values_[v.name] = v.default_value;
  for (const char* const* e = envp; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.substr(0, 5) != "WEFT_") continue;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    cfg.seen_.emplace_back(name);
    if (const ConfigVar* var = find_var(name)) {
      cfg.values_[var->name] = std::string(value);
      cfg.set_[var->name] = true;
    }
  }
  return cfg;
}

Status Config::check() const {
  for (const std::string& name : seen_) {
    const ConfigVar* var = find_var(name);
    if (!var) {
      // Variables read by tools and tests rather than the library itself.
      if (name.substr(0, 10) != "WEFT_TEST_" && name != "WEFT_DEPS_PREFIX")
        WEFT_WARN(Subsys::core, "unknown variable %s ignored (weft_info --config lists them)", name.c_str());
      continue;
    }
    WEFT_TRY(validate(*var, value(name)));
  }
  return Status::ok;
}

Status Config::load(const char* const* envp, Config* out) {
  Config cfg = capture(envp);
  WEFT_TRY(cfg.check());
  *out = std::move(cfg);
  return Status::ok;
}

const Config& process_config() {
  static const Config snapshot = Config::capture(environ);
  return snapshot;
}

namespace {

// The registered variable name, or nullptr (logged: a name missing from kVars is a bug).
const ConfigVar* registered(std::string_view name) {
  const ConfigVar* var = find_var(name);
  if (!var) WEFT_ERROR(Subsys::core, "%.*s is not a registered setting", int(name.size()), name.data());
  return var;
}

void warn_malformed(const ConfigVar& var, std::string_view value, const char* expected) {
  WEFT_WARN(Subsys::core, "%s=%.*s is not %s; %s (the default) is used", var.name, int(value.size()),
            value.data(), expected, var.default_value);
}

}  // namespace

std::string_view setting_string(std::string_view name) {
  return registered(name) ? process_config().value(name) : std::string_view{};
}

bool setting_bool(std::string_view name) {
  const ConfigVar* var = registered(name);
  if (!var) return false;
  bool on = false;
  const std::string_view v = process_config().value(name);
  if (!v.empty() && parse_bool(v, &on)) return on;
  if (!v.empty()) warn_malformed(*var, v, "a boolean");
  (void)parse_bool(var->default_value, &on);
  return on;
}

int64_t setting_integer(std::string_view name, int64_t min) {
  const ConfigVar* var = registered(name);
  if (!var) return 0;
  const std::string v(process_config().value(name));
  const int64_t fallback = strtoll(var->default_value, nullptr, 10);
  if (v.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long n = strtoll(v.c_str(), &end, 10);
  if (*end == '\0' && errno == 0 && n >= min) return n;
  const std::string expected = min == INT64_MIN ? "a number"
                               : min == 0        ? "a non-negative number"
                                                 : "a number of at least " + std::to_string(min);
  warn_malformed(*var, v, expected.c_str());
  return fallback;
}

uint64_t setting_size(std::string_view name) {
  const ConfigVar* var = registered(name);
  if (!var) return 0;
  uint64_t n = 0;
  const std::string_view v = process_config().value(name);
  if (!v.empty() && parse_size(v, &n)) return n;
  if (!v.empty()) warn_malformed(*var, v, "a size");
  (void)parse_size(var->default_value, &n);
  return n;
}

std::string_view Config::value(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string_view{} : std::string_view(it->second);
}

bool Config::is_set(std::string_view name) const { return set_.count(name) != 0; }

int64_t Config::integer(std::string_view name) const {
  return strtoll(std::string(value(name)).c_str(), nullptr, 10);
}

bool Config::boolean(std::string_view name) const {
  bool b = false;
  (void)parse_bool(value(name), &b);
  return b;
}

uint64_t Config::size(std::string_view name) const {
  uint64_t n = 0;
  (void)parse_size(value(name), &n);
  return n;
}

}  // namespace weft
