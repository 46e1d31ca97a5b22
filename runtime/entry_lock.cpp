#include "entry_lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace weft {

bool g_entry_locking = false;
constinit EntryLock g_entry_lock;

void set_entry_locking(bool on) { g_entry_locking = on; }

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
