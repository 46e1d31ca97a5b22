// General active target synchronisation (post / start / complete / wait) on the control
// block's counters, changed with remote atomics: a post adds 1 to the word each origin keeps
// for this target, a start waits until its word for each target is positive and takes 1 back
// (so a post may come before or after the start it matches, and epochs may follow each other
// at once); a complete flushes the accesses to each target, then adds 1 to the target's
// completion counter, which the wait waits for and takes back. A wait for a post or a
// completion fails once the rank that would send it is known dead.
#include "control.h"
#include "window.h"

namespace weft::rma {

Status Window::post(const std::vector<int>& origins, bool notify) {
  exposure_origins_ = origins;
  if (!notify) return Status::ok;  // MPI_MODE_NOCHECK: the origins do not wait for the post
  const uint64_t one = 1;
  for (int q : origins) {
    uint64_t old = 0;
    WEFT_TRY(ctrl_atomic(q, ctrl::kPosts + 8 * size_t(rank_), Transport::RmaAtomic::add, &one, &old));
  }
  return Status::ok;
}

Status Window::start(const std::vector<int>& targets, bool wait) {
  if (!wait) return Status::ok;
  const uint64_t minus_one = ~uint64_t(0);
  for (int q : targets) {
    const size_t off = ctrl::kPosts + 8 * size_t(q);
    WEFT_TRY(await_ctrl(off, 1, std::span<const int>(&q, 1)));
    uint64_t old = 0;
    WEFT_TRY(atomic_at(ctrl_word(off), Transport::RmaAtomic::add, &minus_one, &old, 8));
  }
  return Status::ok;
}

Status Window::complete(const std::vector<int>& targets) {
  const uint64_t one = 1;
  for (int q : targets) {
    if (q != rank_) WEFT_TRY(flush(q));  // the accesses land before the target hears of the completion
    uint64_t old = 0;
    WEFT_TRY(ctrl_atomic(q, ctrl::kComplete, Transport::RmaAtomic::add, &one, &old));  // fetching: done on return
  }
  return Status::ok;
}

Status Window::wait_complete(int origins, bool block, bool* done) {
  const uint64_t n = uint64_t(origins);
  if (block) WEFT_TRY(await_ctrl(ctrl::kComplete, n, exposure_origins_));
  *done = __atomic_load_n(ctrl_word(ctrl::kComplete), __ATOMIC_ACQUIRE) >= n;
  if (!*done) {
    (void)t_.progress_engine().poll();
    // An origin that died before completing never will.
    for (int q : exposure_origins_) WEFT_TRY(peer_alive(q));
    return Status::ok;
  }
  const uint64_t minus = uint64_t(0) - n;
  uint64_t old = 0;
  return atomic_at(ctrl_word(ctrl::kComplete), Transport::RmaAtomic::add, &minus, &old, 8);
}

}  // namespace weft::rma
