// The lock every MPI call holds while other threads may call MPI at the same time: under
// MPI_THREAD_MULTIPLE, and whenever the asynchronous progress thread runs. Otherwise it is off
// and a call pays one predictable branch. It is recursive (a callback, error handler or
// attribute function may call MPI again) and a waiting call lets others in between its passes
// of progress (Progress::pass), so one thread's blocking receive never stalls another's send.
#pragma once
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft {

class EntryLock {
 public:
  void lock() {
    const pthread_t self = pthread_self();
    if (owner_.load(std::memory_order_relaxed) == self) {
      ++depth_;
      return;
    }
    if (!try_acquire()) [[unlikely]] acquire_contended();
    owner_.store(self, std::memory_order_relaxed);
    depth_ = 1;
  }
  // Without waiting and without counting as a waiter (the progress thread's way in).
  bool try_lock() {
    if (!try_acquire()) return false;
    owner_.store(pthread_self(), std::memory_order_relaxed);
    depth_ = 1;
    return true;
  }
  void unlock() {
    if (--depth_ > 0) return;
    // A sleeping progress thread is woken when the call leaves operations in flight.
    const bool wake = sleeping_.load(std::memory_order_relaxed) && (!in_flight_ || *in_flight_ > 0);
    owner_.store(pthread_t(), std::memory_order_relaxed);
    release();
    if (wake) [[unlikely]] nudge();
  }
  // The count of operations in flight (read under the lock), for unlock's wake-up.
  void watch_in_flight(const size_t* count) { in_flight_ = count; }
  bool held_by_me() const { return owner_.load(std::memory_order_relaxed) == pthread_self(); }
  // Threads in lock() waiting for another holder (spinning or asleep).
  int waiting() const { return waiting_.load(std::memory_order_relaxed); }
  // Between two passes of a wait: when other threads wait for the lock, hands it to one of them
  // (waits, briefly, until one has taken it) and takes it back at the same depth.
  void let_others_in() {
    const int before = waiting_.load(std::memory_order_relaxed);
    if (before == 0 || !held_by_me()) return;
    const uint32_t depth = depth_;
    owner_.store(pthread_t(), std::memory_order_relaxed);
    release();
    for (int i = 0; i < kHandOffTries && waiting_.load(std::memory_order_relaxed) >= before; ++i) sched_yield();
    lock();
    depth_ = depth;
  }

  // The progress thread's sleep: until a call leaves MPI (it may have started an operation) or
  // timeout_us passes.
  void sleep_until_nudged(uint32_t timeout_us);
  void nudge();

 private:
  static constexpr int kSpinTries = 200, kHandOffTries = 200;
  // The mutex itself, inline (a call pays two atomic instructions and no library call):
  // 0 free, 1 held, 2 held with a thread perhaps asleep on it.
  bool try_acquire() {
    uint32_t expected = 0;
    return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  // A holder is most often the progress thread in one short pass: spin a little, then sleep.
  void acquire_contended();
  void release() {
    if (state_.exchange(0, std::memory_order_release) == 2) [[unlikely]] wake_one();
  }
  void wake_one();
  std::atomic<uint32_t> state_{0};
  std::atomic<pthread_t> owner_{};
  std::atomic<int> waiting_{0};
  uint32_t depth_ = 0;  // only the owner reads or writes it
  std::atomic<bool> sleeping_{false};
  const size_t* in_flight_ = nullptr;
  std::atomic<uint32_t> nudges_{0};  // the futex word the sleeper waits on
};

extern EntryLock g_entry_lock;
inline EntryLock& entry_lock() { return g_entry_lock; }
// Whether MPI calls take the entry lock: set at initialisation, before any second thread may call.
extern bool g_entry_locking;
void set_entry_locking(bool on);

// Holds the entry lock for one MPI call when locking is on.
class EntryGuard {
 public:
  EntryGuard() : held_(g_entry_locking) {
    if (held_) [[unlikely]] entry_lock().lock();
  }
  ~EntryGuard() {
    if (held_) [[unlikely]] entry_lock().unlock();
  }
  EntryGuard(const EntryGuard&) = delete;
  EntryGuard& operator=(const EntryGuard&) = delete;

 private:
  bool held_;
};

}  // namespace weft
