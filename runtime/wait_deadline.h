// WEFT_TIMEOUT: a bound on every blocking wait. The outermost wait of a blocking call starts the
// clock (WaitBound); the failure checks in the wait loops below it ask wait_timed_out(), which
// costs one global load while WEFT_TIMEOUT is off (the default), a thread-local load more while
// no bound is running, and reads the clock every 64th call while one is.
#pragma once
#include <cstdint>
#include <string>

namespace weft {

struct WaitDeadline {
  uint64_t at_ns = 0;  // 0: no bound running on this thread
  uint32_t calls = 0;
  bool expired = false;
};
// The default TLS model: libweft is also loaded with dlopen (Python extensions), where
// initial-exec TLS would need static TLS space the loader may not have.
extern thread_local WaitDeadline t_wait_deadline;
extern uint64_t g_wait_timeout_ns;  // 0: off (the default)

// From WEFT_TIMEOUT at MPI_Init (seconds; 0 turns the bound off).
void set_wait_timeout(double seconds);
inline double wait_timeout_seconds() { return double(g_wait_timeout_ns) * 1e-9; }
// "WEFT_TIMEOUT (2 s)": how the errors of a wait past the bound name it.
std::string wait_timeout_text();

bool wait_deadline_passed();  // reads the clock every 64th call

inline bool wait_timed_out() {
  if (g_wait_timeout_ns == 0) [[likely]] return false;
  if (t_wait_deadline.at_ns == 0) return false;
  return wait_deadline_passed();
}

// Starts the bound for the wait of one blocking call, unless a wait around it already did.
class WaitBound {
 public:
  WaitBound() : owner_(g_wait_timeout_ns != 0 && t_wait_deadline.at_ns == 0) {
    if (owner_) [[unlikely]] start();
  }
  ~WaitBound() {
    if (owner_) [[unlikely]] t_wait_deadline = WaitDeadline{};
  }
  WaitBound(const WaitBound&) = delete;
  WaitBound& operator=(const WaitBound&) = delete;

 private:
  static void start();
  bool owner_;
};

}  // namespace weft
