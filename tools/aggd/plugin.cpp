// libweft-offload-aggd.so: the weft_offload_plugin table (include/weft/offload.h) over AggdComm.
// Configuration, read at init from weft's settings registry through node->setting (the plugin
// links nothing of weft; the registry reads the environment once, for the whole process):
// WEFT_AGGD_ADDRESS (unix:/path or tcp:host:port, required), WEFT_AGGD_KEY_FILE (the daemon's
// key, or a job key; default $HOME/.weft/aggd.key) and WEFT_AGGD_TIMEOUT_MS (default 10000: no
// progress for that long is an error).
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "tools/aggd/client.h"
#include "weft/offload.h"

namespace weft::aggd {
namespace {

constexpr int kDefaultTimeoutMs = 10000;
constexpr long kMaxTimeoutMs = 24L * 3600 * 1000;

struct Plugin {
  PluginContext ctx;
};

// The reason of a failed init: last_error(NULL, NULL) is the only way to ask for it, as no
// plugin object exists then. Written by init only, from the thread that calls MPI.
std::string& init_error() {
  static std::string* e = new std::string;  // never destroyed: may be read during exit
  return *e;
}

// A setting of weft's registry, or nullptr when unset or when the caller passes no lookup (an
// older weft, whose node information ends before it).
const char* setting(const weft_offload_node_info& node, const char* name) {
  if (node.struct_size < offsetof(weft_offload_node_info, setting) + sizeof node.setting || !node.setting)
    return nullptr;
  return node.setting(name);
}

Plugin* plugin_of(void* p) { return static_cast<Plugin*>(p); }
AggdComm* comm_of(void* c) { return static_cast<AggdComm*>(c); }

// Every entry point: no C++ exception may cross the C ABI.
template <class F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return WEFT_OFFLOAD_ERR_NO_MEMORY;
  } catch (...) {
    return WEFT_OFFLOAD_ERR_INTERNAL;
  }
}

int init_failed(weft_offload_log_fn log, int level, int status, const std::string& why) {
  init_error() = why;
  if (log)
    log(level, why.c_str());
  else
    fprintf(stderr, "weft offload aggd: %s\n", why.c_str());
  return status;
}

int aggd_init(const weft_offload_node_info* node, weft_offload_log_fn log, void** out) {
  return guarded([&] {
    if (!out) return init_failed(log, WEFT_OFFLOAD_LOG_ERROR, WEFT_OFFLOAD_ERR_ARG, "init without a plugin pointer");
    if (!node || node->struct_size < offsetof(weft_offload_node_info, job_id) + sizeof node->job_id)
      return init_failed(log, WEFT_OFFLOAD_LOG_ERROR, WEFT_OFFLOAD_ERR_ARG, "init without usable node information");
    auto p = std::make_unique<Plugin>();
    p->ctx.log = log;
    const char* address = setting(*node, "WEFT_AGGD_ADDRESS");
    if (!address || !*address)
      return init_failed(log, WEFT_OFFLOAD_LOG_WARN, WEFT_OFFLOAD_ERR_ARG,
                         "WEFT_AGGD_ADDRESS is not set: it must name the aggregation daemon "
                         "(unix:/path/to/socket or tcp:host:port)");
    std::string why;
    if (!parse_address(address, &p->ctx.address, &why))
      return init_failed(log, WEFT_OFFLOAD_LOG_ERROR, WEFT_OFFLOAD_ERR_ARG, "WEFT_AGGD_ADDRESS: " + why);
    p->ctx.address_text = address;
    p->ctx.timeout_ms = kDefaultTimeoutMs;
    if (const char* t = setting(*node, "WEFT_AGGD_TIMEOUT_MS"); t && *t) {
      char* end = nullptr;
      const long v = strtol(t, &end, 10);
      if (*end != '\0' || v <= 0 || v > kMaxTimeoutMs)
        return init_failed(log, WEFT_OFFLOAD_LOG_ERROR, WEFT_OFFLOAD_ERR_ARG,
                           std::string("WEFT_AGGD_TIMEOUT_MS '") + t + "' is not a number of milliseconds in [1, " +
                               std::to_string(kMaxTimeoutMs) + "]");
      p->ctx.timeout_ms = int(v);
    }
    // The key: with the daemon's key this process speaks for weft's job and derives that job's
    // key; a job key file names the job it may speak for, and that name is the job id sent.
    const char* key_env = setting(*node, "WEFT_AGGD_KEY_FILE");
    const std::string key_path = key_env && *key_env ? key_env : default_key_path();
    if (key_path.empty())
      return init_failed(log, WEFT_OFFLOAD_LOG_WARN, WEFT_OFFLOAD_ERR_ARG,
                         "WEFT_AGGD_KEY_FILE is not set and HOME is unset: no key for the aggregation daemon");
    KeyFile key;
    if (!read_key_file(key_path, &key, &why))
      return init_failed(log, WEFT_OFFLOAD_LOG_WARN, WEFT_OFFLOAD_ERR_ARG,
                         "no key for the aggregation daemon (WEFT_AGGD_KEY_FILE): " + why);
    if (key.kind == KeyFile::Kind::job) {
      p->ctx.job_id = key.job;
      p->ctx.job_key = key.key;
    } else {
      const std::string job = node->job_id ? node->job_id : "";
      p->ctx.job_id = job.substr(0, kMaxJobId - 1);
      p->ctx.job_key = derive_job_key(key.key, p->ctx.job_id);
    }
    init_error().clear();
    *out = p.release();
    return int(WEFT_OFFLOAD_OK);
  });
}

int aggd_comm_setup(void* plugin, const weft_offload_comm_info* info, void** out) {
  return guarded([&] {
    Plugin* p = plugin_of(plugin);
    if (!p || !out) return int(WEFT_OFFLOAD_ERR_ARG);
    if (!info || info->struct_size < sizeof(weft_offload_comm_info)) {
      p->ctx.last_error = "comm_setup without usable communicator information";
      p->ctx.report(WEFT_OFFLOAD_LOG_WARN, p->ctx.last_error);
      return int(WEFT_OFFLOAD_ERR_ARG);
    }
    std::unique_ptr<AggdComm> comm;
    const int rc = AggdComm::setup(p->ctx, *info, &comm);
    if (rc == WEFT_OFFLOAD_OK) *out = comm.release();
    return rc;
  });
}

int aggd_query(void* comm, weft_offload_caps* caps) {
  return guarded([&] { return comm ? comm_of(comm)->query(caps) : int(WEFT_OFFLOAD_ERR_ARG); });
}

int aggd_post(void* comm, const weft_offload_op_args* args, void** op) {
  return guarded([&] {
    if (!comm || !args || !op) return int(WEFT_OFFLOAD_ERR_ARG);
    return comm_of(comm)->post(*args, op);
  });
}

int aggd_test(void* comm, void* op, int* done) {
  return guarded([&] { return comm ? comm_of(comm)->test(op, done) : int(WEFT_OFFLOAD_ERR_ARG); });
}

void aggd_comm_teardown(void* comm) { delete comm_of(comm); }

void aggd_finalize(void* plugin) { delete plugin_of(plugin); }

const char* aggd_last_error(void* plugin, void* comm) {
  if (comm) return comm_of(comm)->last_error().c_str();
  if (plugin) return plugin_of(plugin)->ctx.last_error.c_str();
  return init_error().c_str();
}

const weft_offload_plugin kTable = {
    WEFT_OFFLOAD_ABI_VERSION,
    sizeof(weft_offload_plugin),
    "aggd",
    aggd_init,
    aggd_comm_setup,
    aggd_query,
    aggd_post,
    aggd_test,
    nullptr,  // mem_register: the daemon reads and writes through the socket only
    nullptr,
    aggd_comm_teardown,
    aggd_finalize,
    aggd_last_error,
};

}  // namespace
}  // namespace weft::aggd

extern "C" __attribute__((visibility("default"))) const struct weft_offload_plugin* weft_offload_plugin_v1(void) {
  return &weft::aggd::kTable;
}
