// Thread support: the level provided, the entry lock every binding takes while other threads
// may call MPI (MPI_THREAD_MULTIPLE, asynchronous progress), and the progress thread.
#include <string>

#include "runtime/log.h"
#include "runtime/memkind.h"
#include "state.h"

namespace weft::mpi {

int provided_level(int required) {
  const int level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                    : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                     : required;
  if (level == MPI_THREAD_MULTIPLE && !g_entry_locking) {
    set_entry_locking(true);
    WEFT_INFO(Subsys::init, "MPI_THREAD_MULTIPLE: every call holds the entry lock");
  }
  return level;
}

namespace {

// WEFT_ASYNC_PROGRESS_CPU: "auto" (a core no rank of the host is bound to, if any), "none" (run
// anywhere the rank may), or a list of CPU numbers dealt out to the local ranks in turn.
CpuSet progress_cpus(const std::string& choice) {
  if (choice == "none") return {};
  Bootstrap& boot = *g_state->boot;
  if (choice != "auto") {
    std::vector<int> listed;
    size_t pos = 0;
    while (pos < choice.size()) {
      size_t end = choice.find(',', pos);
      if (end == std::string::npos) end = choice.size();
      const std::string item = choice.substr(pos, end - pos);
      char* tail = nullptr;
      const long cpu = strtol(item.c_str(), &tail, 10);
      if (item.empty() || *tail || cpu < 0 || cpu >= 65536) {
        WEFT_WARN(Subsys::core, "WEFT_ASYNC_PROGRESS_CPU: '%s' is not a CPU number: the thread runs unbound",
                  item.c_str());
        return {};
      }
      listed.push_back(int(cpu));
      pos = end + 1;
    }
    if (listed.empty()) return {};
    const int cpu = listed[size_t(boot.local_rank()) % listed.size()];
    CpuSet set(size_t(cpu / 64) + 1, 0);
    set[size_t(cpu / 64)] |= uint64_t(1) << (cpu % 64);
    return set;
  }
  std::vector<CpuSet> cores;
  std::string error;
  if (topo::core_cpus(&cores, &error) != Status::ok) {
    WEFT_INFO(Subsys::core, "async progress: %s: the thread runs unbound", error.c_str());
    return {};
  }
  std::vector<CpuSet> bindings = host_peer_bindings(boot);
  bindings.push_back(g_state->own_cpus);
  return free_core_for(cores, bindings, boot.local_rank());
}

std::string cpu_list(const CpuSet& s) {
  std::string out;
  for (size_t w = 0; w < s.size(); ++w)
    for (int b = 0; b < 64; ++b)
      if (s[w] >> b & 1) out += (out.empty() ? "" : ",") + std::to_string(w * 64 + size_t(b));
  return out;
}

}  // namespace

void start_async_progress(const char* why) {
  if (g_state->async_progress) return;
  const std::string choice(g_state->config.value("WEFT_ASYNC_PROGRESS_CPU"));
  const CpuSet cpus = progress_cpus(choice);
  AsyncProgressOptions o;
  o.cpus = cpus;
  State* st = g_state;
  o.busy = [st] { return st->requests.in_use() > 0; };
  // A new thread's current device is device 0: set another one only (setting it starts the
  // device's context in that thread, which takes long).
  const int device = cuda_current_device();
  if (device > 0) o.on_start = [device] { cuda_use_device(device); };
  set_entry_locking(true);
  // A thread on a core of its own starts the non-blocking collectives' first steps too.
  g_state->coll_calls.defer_first_steps(!cpus.empty());
  entry_lock().watch_in_flight(g_state->requests.in_use_counter());
  g_state->async_progress = std::make_unique<AsyncProgress>(g_state->progress, entry_lock(), std::move(o));
  const std::string where = !cpus.empty()      ? "bound to cpu " + cpu_list(cpus)
                            : choice == "auto" ? "unbound: every core of this host is some rank's"
                                               : "unbound (WEFT_ASYNC_PROGRESS_CPU)";
  WEFT_INFO(Subsys::core, "async progress thread started (%s), %s", why, where.c_str());
}

void stop_async_progress() {
  if (g_state && g_state->async_progress) {
    g_state->async_progress->stop();
    g_state->async_progress.reset();
    g_state->coll_calls.defer_first_steps(false);
    entry_lock().watch_in_flight(nullptr);
  }
}

}  // namespace weft::mpi
