// Where initialisation's time goes: each start-up step marks its end, and the INFO line that
// ends MPI_Init lists the steps' durations, so a slow start names its slow step.
#pragma once
#include <cstdio>
#include <string>

#include "clock.h"

namespace weft {

class StartupPhases {
 public:
  void begin() {
    last_ = monotonic_seconds();
    summary_.clear();
  }
  void mark(const char* step) {
    const double now = monotonic_seconds();
    char part[96];
    snprintf(part, sizeof part, "%s%s %.1f", summary_.empty() ? "" : ", ", step, (now - last_) * 1e3);
    summary_ += part;
    last_ = now;
  }
  const std::string& summary() const { return summary_; }

 private:
  double last_ = 0;
  std::string summary_;
};

// The process's one start (MPI_Init or the first session) runs on one thread.
inline StartupPhases& startup_phases() {
  static StartupPhases phases;
  return phases;
}

}  // namespace weft
