#include "wait_deadline.h"

#include <time.h>

#include <cstdio>

#include "clock.h"

namespace weft {

thread_local WaitDeadline t_wait_deadline;
uint64_t g_wait_timeout_ns = 0;

namespace {
uint64_t now_ns() { return monotonic_ns(); }
}  // namespace

void set_wait_timeout(double seconds) { g_wait_timeout_ns = seconds > 0 ? uint64_t(seconds * 1e9) : 0; }

std::string wait_timeout_text() {
  char text[48];
  snprintf(text, sizeof text, "WEFT_TIMEOUT (%g s)", wait_timeout_seconds());
  return text;
}

void WaitBound::start() { t_wait_deadline = WaitDeadline{now_ns() + g_wait_timeout_ns, 0, false}; }

bool wait_deadline_passed() {
  WaitDeadline& d = t_wait_deadline;
  if (d.expired) return true;
  if ((++d.calls & 63) != 0) return false;
  d.expired = now_ns() >= d.at_ns;
  return d.expired;
}

}  // namespace weft
