// The one progress engine: transports and schedules register pollers; blocking calls wait
// here. Waiting spins, then yields; it yields at once when ranks outnumber cores.
#pragma once
#include <sched.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "entry_lock.h"

namespace weft {

enum class WaitPolicy : uint8_t { spin_then_yield, yield };

class Progress {
 public:
  using PollFn = int (*)(void* ctx);  // returns the number of events it handled
  using PollerId = size_t;

  // A poller with nothing to do is left out of passes while disarmed: its owner arms it when
  // work arrives and may disarm it from inside its own poll once the work is done, so a pass
  // calls only the pollers with work (a message-rate loop pays for none of the others).
  PollerId add_poller(PollFn fn, void* ctx, bool armed = true) {
    for (size_t i = 0; i < pollers_.size(); ++i)
      if (pollers_[i].fn == nullptr) {
        pollers_[i] = {fn, ctx, armed};
        return i;
      }
    pollers_.push_back({fn, ctx, armed});
    return pollers_.size() - 1;
  }
  // Not from inside a poller. Ids of the others stay valid.
  void remove_poller(PollFn fn, void* ctx) {
    for (auto& p : pollers_)
      if (p.fn == fn && p.ctx == ctx) {
        p = Poller{};
        return;
      }
  }
  void arm(PollerId id) { pollers_[id].armed = true; }
  void disarm(PollerId id) { pollers_[id].armed = false; }
  void configure(WaitPolicy policy, uint32_t spin_count) {
    spin_limit_ = policy == WaitPolicy::yield ? 1 : (spin_count ? spin_count : 1);
  }

  int poll() {
    int events = 0;
    for (const auto& p : pollers_)
      if (p.armed) events += p.fn(p.ctx);
    return events;
  }

  // One pass of a wait loop: polls, and yields after spin_count idle passes in a row. Other
  // threads waiting to call MPI get their turn here.
  void pass(uint32_t* idle) {
    if (poll() == 0 && ++*idle >= spin_limit_) {
      sched_yield();
      *idle = 0;
    }
    if (g_entry_locking) [[unlikely]] g_entry_lock.let_others_in();
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
  struct Poller {
    PollFn fn = nullptr;
    void* ctx = nullptr;
    bool armed = false;
  };
  std::vector<Poller> pollers_;
  uint32_t spin_limit_ = 2000;
};

// The CPUs a process may run on, one bit each (its affinity mask), in 64-bit words.
using CpuSet = std::vector<uint64_t>;
CpuSet own_cpus();
int cpu_count(const CpuSet& s);
// Whether two sets share a CPU.
bool cpus_overlap(const CpuSet& a, const CpuSet& b);

// Which ranks of the host compete for the CPUs this rank may use.
struct WaitChoice {
  WaitPolicy policy = WaitPolicy::spin_then_yield;
  int competing_ranks = 1;  // ranks whose binding overlaps this rank's (itself included)
  int cpus = 1;             // CPUs the bindings of those ranks cover together
};
// Spinning pays only when no rank waits for a CPU a spinner holds: yield at once when the ranks
// whose bindings overlap this rank's outnumber the CPUs those bindings cover. Each rank bound to
// its own core (Open MPI's default at np <= 2) spins; 4 unbound ranks on 2 CPUs yield.
WaitChoice choose_wait_policy(const CpuSet& mine, const std::vector<CpuSet>& host_peers);

}  // namespace weft
