// The asynchronous progress thread (WEFT_ASYNC_PROGRESS): it drives the one progress engine
// (runtime/progress.h) while the program computes, so non-blocking operations, collective
// schedules and the target side of one-sided operations advance with no MPI call. It takes the
// entry lock (runtime/entry_lock.h) only when it is free and no caller waits for it: a thread
// inside MPI progresses by itself. With operations in flight it keeps polling (on a core of its
// own) or polls and naps for microseconds (on CPUs the ranks compute on); with none, after a
// short idle spell it sleeps on a futex that the next MPI call's exit wakes, for 1 ms at most.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "entry_lock.h"
#include "progress.h"

namespace weft {

struct AsyncProgressOptions {
  CpuSet cpus;                 // where the thread runs; empty: anywhere the process may
  std::function<bool()> busy;  // whether operations are in flight (called under the entry lock)
  std::function<void()> on_start;  // in the new thread first (e.g. adopt the caller's GPU)
};

// The CPUs for the progress thread of local rank `local_index`: a core (all its hardware
// threads) that no rank of the host is bound to, the free cores dealt out round-robin among the
// local ranks; empty when every core is some rank's. cores: each core's CPUs; bindings: every
// local rank's, this one's included.
CpuSet free_core_for(const std::vector<CpuSet>& cores, const std::vector<CpuSet>& bindings, int local_index);

class AsyncProgress {
 public:
  AsyncProgress(Progress& progress, EntryLock& lock, AsyncProgressOptions options);
  ~AsyncProgress();  // stops the thread
  AsyncProgress(const AsyncProgress&) = delete;
  AsyncProgress& operator=(const AsyncProgress&) = delete;

  void stop();
  // Counters for the log at the end.
  struct Stats {
    uint64_t passes = 0, busy_passes = 0, events = 0, naps = 0, sleeps = 0, lock_misses = 0;
  };
  Stats stats() const { return stats_; }

 private:
  void run();
  void sleep_until_nudged(uint32_t timeout_us);

  Progress& progress_;
  EntryLock& lock_;
  AsyncProgressOptions options_;
  std::atomic<bool> stop_{false};
  Stats stats_;
  std::thread thread_;
};

}  // namespace weft
