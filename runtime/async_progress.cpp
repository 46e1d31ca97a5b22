#include "async_progress.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "log.h"

namespace weft {

namespace {

// Idle passes (nothing in flight, nothing handled) before the thread sleeps: tens of
// microseconds, so a program that calls MPI in a loop rarely has to wake it.
constexpr uint32_t kIdlePassesBeforeSleep = 4096;
constexpr uint32_t kSleepUs = 1000;
// With operations in flight on CPUs the ranks compute on, the thread naps between short spells
// of polling instead of spinning: a thread that wakes from a short sleep is scheduled ahead of
// the computation it shares a CPU with (a spinning one waits for its time slice, milliseconds),
// and it takes little CPU time from it.
constexpr uint32_t kNapUs = 20;

}  // namespace

CpuSet free_core_for(const std::vector<CpuSet>& cores, const std::vector<CpuSet>& bindings, int local_index) {
  std::vector<const CpuSet*> free;
  for (const CpuSet& core : cores) {
    bool taken = false;
    for (const CpuSet& b : bindings) taken = taken || cpus_overlap(core, b);
    if (!taken && cpu_count(core) > 0) free.push_back(&core);
  }
  if (free.empty() || local_index < 0) return {};
  return *free[size_t(local_index) % free.size()];
}

AsyncProgress::AsyncProgress(Progress& progress, EntryLock& lock, AsyncProgressOptions options)
    : progress_(progress), lock_(lock), options_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

AsyncProgress::~AsyncProgress() { stop(); }

void AsyncProgress::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_relaxed);
  lock_.nudge();
  thread_.join();
  WEFT_INFO(Subsys::core,
            "async progress: %llu passes (%llu with operations in flight), %llu events, %llu naps, %llu sleeps, "
            "%llu times the lock was taken",
            (unsigned long long)stats_.passes, (unsigned long long)stats_.busy_passes,
            (unsigned long long)stats_.events, (unsigned long long)stats_.naps, (unsigned long long)stats_.sleeps,
            (unsigned long long)stats_.lock_misses);
}

void AsyncProgress::run() {
  if (!options_.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (size_t w = 0; w < options_.cpus.size(); ++w)
      for (int b = 0; b < 64; ++b)
        if (options_.cpus[w] >> b & 1 && w * 64 + size_t(b) < CPU_SETSIZE) CPU_SET(w * 64 + size_t(b), &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
      WEFT_WARN(Subsys::core, "async progress: could not bind the thread to its core; it runs unbound");
  }
  if (options_.on_start) options_.on_start();
  // Naps of microseconds need timers that fire on time (the default slack is 50 us).
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const bool shares_cpus = options_.cpus.empty();
  uint32_t idle = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    // A thread inside MPI (or waiting to enter) progresses by itself: stay out of its way until
    // it leaves (its exit wakes a sleeping thread when operations are in flight).
    if (lock_.waiting() > 0 || !lock_.try_lock()) {
      ++stats_.lock_misses;
      if (shares_cpus) lock_.sleep_until_nudged(kSleepUs);
      else sched_yield();
      continue;
    }
    const int events = progress_.poll();
    const bool busy = options_.busy && options_.busy();
    lock_.unlock();
    ++stats_.passes;
    if (events > 0) {
      stats_.events += uint64_t(events);
      idle = 0;
      continue;
    }
    if (busy) {
      ++stats_.busy_passes;
      if (!shares_cpus) continue;
      ++stats_.naps;
      lock_.sleep_until_nudged(kNapUs);
      continue;
    }
    if (!shares_cpus && ++idle < kIdlePassesBeforeSleep) continue;
    ++stats_.sleeps;
    lock_.sleep_until_nudged(kSleepUs);
    idle = 0;
  }
}

}  // namespace weft
