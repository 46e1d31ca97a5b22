#include "profiler.h"

#include <dlfcn.h>

#include "gpu_timing.h"
#include "log.h"

namespace weft::profiler {

__attribute__((visibility("hidden"))) uint32_t g_mask = 0;

namespace {

// Every type this weft reports (GPU kernels and KV transfers are not reported yet).
constexpr uint32_t kReported = WEFT_PROFILER_API | WEFT_PROFILER_COLL | WEFT_PROFILER_P2P | WEFT_PROFILER_ROUND |
                               WEFT_PROFILER_TRANSFER | WEFT_PROFILER_RMA_EPOCH | WEFT_PROFILER_GPU |
                               WEFT_PROFILER_KV;

struct Loaded {
  void* library = nullptr;
  const weft_profiler_plugin_t* table = nullptr;
  void* context = nullptr;
  std::string path;
};
Loaded g;

thread_local void* t_current = nullptr;

void plugin_log(int level, const char* message) {
  const char* text = message ? message : "";
  const char* name = g.table && g.table->name ? g.table->name : "profiler";
  switch (level) {
    case WEFT_PROFILER_LOG_ERROR: WEFT_ERROR(Subsys::core, "profiler plugin %s: %s", name, text); break;
    case WEFT_PROFILER_LOG_WARN: WEFT_WARN(Subsys::core, "profiler plugin %s: %s", name, text); break;
    default: WEFT_INFO(Subsys::core, "profiler plugin %s: %s", name, text); break;
  }
}

// label: "the profiler plugin PATH (WEFT_PROFILER_PLUGIN)", or a built-in consumer's name.
Status refuse(const std::string& label, const std::string& why) {
  const std::string msg = label + " " + why;
  WEFT_ERROR(Subsys::init, "%s", msg.c_str());
  set_error_detail(msg);
  if (g.library) dlclose(g.library);
  g = Loaded{};
  return Status::not_supported;
}

}  // namespace

Status adopt(const weft_profiler_plugin_t* table, const std::string& path, const weft_profiler_job_info_t& job);

Status load(const std::string& file, const weft_profiler_job_info_t& job) {
  if (file.empty() || g.table) return Status::ok;
  const std::string path = "the profiler plugin " + file + " (WEFT_PROFILER_PLUGIN)";
  g.path = path;
  g.library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!g.library) return refuse(path, std::string("cannot be loaded: ") + dlerror());
  auto entry = reinterpret_cast<weft_profiler_entry_v1_fn>(dlsym(g.library, WEFT_PROFILER_ENTRY_V1));
  if (!entry)
    return refuse(path, "exports no " WEFT_PROFILER_ENTRY_V1 " (this weft speaks profiler ABI version " +
                            std::to_string(WEFT_PROFILER_ABI_VERSION) + ")");
  const weft_profiler_plugin_t* table = entry();
  if (!table) return refuse(path, WEFT_PROFILER_ENTRY_V1 " returned no table");
  return adopt(table, path, job);
}

Status use_builtin(const weft_profiler_plugin_t* table, const std::string& label,
                   const weft_profiler_job_info_t& job) {
  if (g.table) {
    const std::string msg = label + " and " + g.path + " cannot be used together: set one of them";
    WEFT_ERROR(Subsys::init, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::not_supported;
  }
  return adopt(table, label, job);
}

Status adopt(const weft_profiler_plugin_t* table, const std::string& path, const weft_profiler_job_info_t& job) {
  g.path = path;
  if (table->abi_version != WEFT_PROFILER_ABI_VERSION)
    return refuse(path, "speaks profiler ABI version " + std::to_string(table->abi_version) +
                            "; this weft speaks version " + std::to_string(WEFT_PROFILER_ABI_VERSION));
  if (table->struct_size < sizeof(weft_profiler_plugin_t) || !table->init || !table->start_event ||
      !table->stop_event || !table->record_event_state || !table->finalize)
    return refuse(path, "has an incomplete table (struct_size " + std::to_string(table->struct_size) + ", needs " +
                            std::to_string(sizeof(weft_profiler_plugin_t)) + " and every function but last_error)");
  g.table = table;
  uint32_t mask = kReported;
  const int rc = table->init(&g.context, &job, &mask, plugin_log);
  if (rc != WEFT_PROFILER_OK) {
    const char* why = table->last_error ? table->last_error(g.context) : nullptr;
    return refuse(path, "refused init (status " + std::to_string(rc) + (why ? std::string(": ") + why : "") + ")");
  }
  g_mask = mask & kReported;
  WEFT_INFO(Subsys::init, "profiler consumer '%s' started (%s); event mask 0x%x", table->name ? table->name : "?",
            path.c_str(), g_mask);
  return Status::ok;
}

void unload() {
  if (!g.table) return;
  if (wants(WEFT_PROFILER_GPU)) gpu_timing::report_completed(true);  // GPU work still unreported
  g_mask = 0;
  g.table->finalize(g.context);
  if (g.library) dlclose(g.library);
  g = Loaded{};
}

void* start(weft_profiler_event_t& e) {
  if (!g.table) return nullptr;
  if (!e.parent) e.parent = t_current;
  void* handle = nullptr;
  if (g.table->start_event(g.context, &handle, &e) != WEFT_PROFILER_OK) return nullptr;
  return handle;
}

void* start_top_level(weft_profiler_event_t& e) {
  if (!g.table) return nullptr;
  e.parent = nullptr;
  void* handle = nullptr;
  if (g.table->start_event(g.context, &handle, &e) != WEFT_PROFILER_OK) return nullptr;
  return handle;
}

void stop(void* handle) {
  if (handle && g.table) g.table->stop_event(handle);
}

void failed(void* handle, Status s) {
  if (handle && g.table) g.table->record_event_state(handle, WEFT_PROFILER_STATE_FAILED, int64_t(s));
}

void* current() { return t_current; }

ParentScope::ParentScope(void* handle) : saved_(t_current) { t_current = handle; }
ParentScope::~ParentScope() { t_current = saved_; }

void Scope::open(weft_profiler_event_t& e) {
  handle_ = start(e);
  saved_ = t_current;
  t_current = handle_;
  open_ = true;
}

void Scope::close() {
  stop(handle_);
  t_current = saved_;
  open_ = false;
}

}  // namespace weft::profiler
