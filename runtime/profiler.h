// The profiler plugin (include/weft/profiler.h): loading it, and the event sites' calls.
// With no plugin loaded every site costs one predictable branch on wants(); the events of a
// type the plugin did not ask for are never built.
#pragma once
#include <cstdint>
#include <string>

#include "status.h"
#include "include/weft/profiler.h"

namespace weft::profiler {

// The event types the loaded plugin asked for; 0 when none is loaded. Set before the first
// event and cleared after the last, so a plain read suffices.
// Hidden: read PC-relative inside libweft, not through the GOT.
extern uint32_t g_mask __attribute__((visibility("hidden")));
inline bool wants(uint32_t type) { return (g_mask & type) != 0; }
inline bool active() { return g_mask != 0; }

// Loads the plugin at `path` ("" loads nothing) and calls its init. A plugin that cannot be
// loaded, has an unknown ABI version or an incomplete table, or whose init fails, is refused
// with the reason as the error detail (the caller fails MPI_Init).
Status load(const std::string& path, const weft_profiler_job_info_t& job);
// The same for a consumer built into weft (the WEFT_TRACE writer); `label` names it in
// messages. Refused when a plugin is loaded already: one consumer at a time.
Status use_builtin(const weft_profiler_plugin_t* table, const std::string& label, const weft_profiler_job_info_t& job);
// Calls the plugin's finalize and unloads it (MPI_Finalize).
void unload();

// An event of `type` named `name` (static storage), every other field empty.
inline weft_profiler_event_t event(uint32_t type, const char* name) {
  weft_profiler_event_t e{};
  e.struct_size = sizeof e;
  e.type = type;
  e.name = name;
  e.peer = -1;
  e.tag = -1;
  return e;
}

// Starts e (its parent, if unset, is the thread's innermost open scope); the handle to stop
// it with, or null. Only for a wanted type.
void* start(weft_profiler_event_t& e);
// The same with no parent (an RMA epoch outlives the call that opens it).
void* start_top_level(weft_profiler_event_t& e);
void stop(void* handle);
// Marks the event failed with weft's status.
void failed(void* handle, Status s);

// The thread's innermost open scope (the parent of events started now), and a scope that
// makes `handle` the parent while it lives (a round while its transfers are posted).
void* current();
class ParentScope {
 public:
  explicit ParentScope(void* handle);
  ~ParentScope();
  ParentScope(const ParentScope&) = delete;
  ParentScope& operator=(const ParentScope&) = delete;

 private:
  void* saved_;
};

// An event enclosing what runs while it lives: started by open(), stopped by the destructor,
// the parent of the events started meanwhile on this thread.
class Scope {
 public:
  Scope() = default;
  ~Scope() {
    if (open_) [[unlikely]] close();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  void open(weft_profiler_event_t& e);
  void fail(Status s) {
    if (open_) [[unlikely]] failed(handle_, s);
  }

 private:
  void close();
  void* handle_ = nullptr;
  void* saved_ = nullptr;
  bool open_ = false;
};

// An MPI call's event, for the bindings: one branch when the API type is not wanted.
class ApiScope {
 public:
  explicit ApiScope(const char* fn) {
    if (wants(WEFT_PROFILER_API)) [[unlikely]] {
      weft_profiler_event_t e = event(WEFT_PROFILER_API, fn);
      scope_.open(e);
    }
  }
  void fail(Status s) { scope_.fail(s); }

 private:
  Scope scope_;
};

// A blocking point-to-point call's event (peer: job rank, or -1 for any source).
class P2pScope {
 public:
  P2pScope(const char* fn, int peer, int tag, uint64_t bytes, uint32_t comm) {
    if (wants(WEFT_PROFILER_P2P)) [[unlikely]] {
      weft_profiler_event_t e = event(WEFT_PROFILER_P2P, fn);
      e.peer = peer;
      e.tag = tag;
      e.bytes = bytes;
      e.comm = comm;
      scope_.open(e);
    }
  }
  void fail(Status s) { scope_.fail(s); }

 private:
  Scope scope_;
};

}  // namespace weft::profiler
