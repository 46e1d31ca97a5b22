// The one progress engine: transports and schedules register pollers; blocking calls wait
// here. Waiting spins, then yields; it yields at once when ranks outnumber cores.
#pragma once
#include <sched.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft {

enum class WaitPolicy : uint8_t { spin_then_yield, yield };

class Progress {
 public:
  using PollFn = int (*)(void* ctx);  // returns the number of events it handled

  void add_poller(PollFn fn, void* ctx) { pollers_.push_back({fn, ctx}); }
  // Not from inside a poller.
  void remove_poller(PollFn fn, void* ctx) {
    for (size_t i = 0; i < pollers_.size(); ++i)
      if (pollers_[i].fn == fn && pollers_[i].ctx == ctx) {
        pollers_.erase(pollers_.begin() + ptrdiff_t(i));
        return;
      }
  }
  void configure(WaitPolicy policy, uint32_t spin_count) {
    spin_limit_ = policy == WaitPolicy::yield ? 1 : (spin_count ? spin_count : 1);
  }

  int poll() {
    int events = 0;
    for (const auto& p : pollers_) events += p.fn(p.ctx);
    return events;
  }

  // One pass of a wait loop: polls, and yields after spin_count idle passes in a row.
  void pass(uint32_t* idle) {
    if (poll() == 0 && ++*idle >= spin_limit_) {
      sched_yield();
      *idle = 0;
    }
  }
  // Whether waits yield at once (ranks outnumber cores).
  bool yields_at_once() const { return spin_limit_ <= 1; }

  // Polls until done() holds.
  template <class Done>
  void wait(Done&& done) {
    uint32_t idle = 0;
    while (!done()) pass(&idle);
  }

 private:
  struct Poller { PollFn fn; void* ctx; };
  std::vector<Poller> pollers_;
  uint32_t spin_limit_ = 2000;
};

// Cores this process may run on (its affinity mask).
int usable_cores();

}  // namespace weft
