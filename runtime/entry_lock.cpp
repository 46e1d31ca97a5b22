#include "entry_lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace weft {

bool g_entry_locking = false;
constinit EntryLock g_entry_lock;

void set_entry_locking(bool on) { g_entry_locking = on; }

void EntryLock::acquire_contended() {
  // Counted as waiting from the first spin: the progress thread stays out while anyone wants
  // in, so a call that finds it mid-pass gets the lock at the end of that pass instead of
  // losing the race for it again and again and going to sleep.
  waiting_.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < kSpinTries; ++i) {
    if (state_.load(std::memory_order_relaxed) == 0 && try_acquire()) {
      waiting_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  while (state_.exchange(2, std::memory_order_acquire) != 0)
    (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAIT_PRIVATE, 2, nullptr, nullptr, 0);
  waiting_.fetch_sub(1, std::memory_order_relaxed);
}

void EntryLock::wake_one() {
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void EntryLock::sleep_until_nudged(uint32_t timeout_us) {
  const uint32_t seen = nudges_.load(std::memory_order_acquire);
  sleeping_.store(true, std::memory_order_seq_cst);
  timespec ts{time_t(timeout_us / 1000000), long(timeout_us % 1000000) * 1000};
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(&nudges_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
  sleeping_.store(false, std::memory_order_relaxed);
}

void EntryLock::nudge() {
  nudges_.fetch_add(1, std::memory_order_release);
  (void)syscall(SYS_futex, reinterpret_cast<uint32_t*>(&nudges_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace weft
