// Passive-target locks: the lock word that names its holders, behind a ticket queue that keeps
// the lock fair (control.h). A taker tries the lock word at once while nobody queues (one
// read of the queue more than a bare compare-and-swap); else it takes a ticket, waits to be
// admitted, takes the lock word as soon as its holders give it back, and admits the next
// ticket. Ranks that lock and unlock in a loop therefore join the queue behind a rank already
// waiting, instead of winning every race for the word (each at most once more, when it read an
// empty queue just before that rank joined).
#include <atomic>

#include "control.h"
#include "runtime/log.h"
#include "runtime/wait_deadline.h"
#include "window.h"

namespace weft::rma {

Status Window::ctrl_read(int target, size_t off, uint64_t* value) {
  const uint64_t* at = target == rank_ ? ctrl_word(off) : peers_[size_t(target)].ctrl_direct;
  if (at != nullptr) {
    if (target != rank_) at += off / 8;
    *value = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    return Status::ok;
  }
  const uint64_t zero = 0;
  return ctrl_atomic(target, off, Transport::RmaAtomic::add, &zero, value);
}

// WEFT_TIMEOUT ends the wait of an admitted rank for the holders (it then admits the next, so
// a rank in line behind it, whose bound has passed too, gives up as soon as it is admitted). A
// rank waiting in line does not give its ticket up for a timeout: its slot would be reused by
// its next lock, and the ticket never skipped.
Status Window::check_lock_holders(int target, uint64_t word) {
  if (wait_timed_out()) [[unlikely]] return waited_too_long(target, "a lock");
  Bootstrap& b = t_.boot();
  b.poll_local_liveness();
  if (b.failures_seen() == 0) [[likely]] return Status::ok;
  WEFT_TRY(peer_alive(target));
  const int holder = ctrl::exclusive_holder(word);
  if (holder >= 0 && holder < size() && holder != rank_ && rank_failed(holder))
    return holder_gone(target, holder, "an exclusive lock");
  if (!(word & ctrl::kReaderMask)) return Status::ok;
  if (!reader_slots_) {
    for (uint64_t bits = word & ctrl::kReaderMask; bits; bits &= bits - 1) {
      const int r = __builtin_ctzll(bits);
      if (r < size() && r != rank_ && rank_failed(r)) return holder_gone(target, r, "a shared lock");
    }
    return Status::ok;
  }
  // Counted holders: the slots of the dead ranks say whether one of them is among them.
  for (int r = 0; r < size(); ++r) {
    if (r == rank_ || !rank_failed(r)) continue;
    uint64_t slot = 0;
    WEFT_TRY(ctrl_read(target, ctrl::reader_slots(job_ranks_.size()) + 8 * size_t(r), &slot));
    if (slot) return holder_gone(target, r, "a shared lock");
  }
  return Status::ok;
}

// After a failure: a dead rank's ticket would never admit the next. Admission only lets a rank
// try the lock word, so skipping a ticket costs its owner its turn, never mutual exclusion; a
// waiter therefore skips the admitted ticket where a dead rank holds it (or a rank that gave it
// up, failing), or where no rank names it and a dead rank died taking a ticket. A dead holder
// of the lock word is found by each admitted rank in turn, which fails naming it where the
// lock it asks for conflicts, and admits the next.
Status Window::unblock_queue(int target, uint64_t queue) {
  Bootstrap& b = t_.boot();
  b.poll_local_liveness();
  if (b.failures_seen() == 0) [[likely]] return Status::ok;
  WEFT_TRY(peer_alive(target));
  const uint64_t admitted = uint64_t(ctrl::admitted_ticket(queue)) + ctrl::kTicketBias;
  bool owner_known = false, owner_dead = false, dead_taking = false;
  for (int r = 0; r < size() && !owner_known; ++r) {
    uint64_t slot = 0;
    WEFT_TRY(ctrl_read(target, ctrl::queue_slots(job_ranks_.size()) + 8 * size_t(r), &slot));
    if ((slot & ~ctrl::kTicketGivenUp) == admitted) {
      owner_known = true;
      owner_dead = (slot & ctrl::kTicketGivenUp) || (r != rank_ && rank_failed(r));
    } else if (slot == ctrl::kTakingTicket && r != rank_ && rank_failed(r)) {
      dead_taking = true;
    }
  }
  if (owner_dead || (!owner_known && dead_taking)) {
    uint64_t seen = queue;  // compare value in, old value out
    const uint64_t skipped = queue + ctrl::admit_next(ctrl::admitted_ticket(queue));
    WEFT_TRY(ctrl_atomic(target, ctrl::kQueue, Transport::RmaAtomic::cswap, &skipped, &seen));
    if (seen == queue)
      WEFT_INFO(Subsys::rma, "window rank %d: a lock ticket of a dead or failed rank skipped at window rank %d", rank_, target);
  }
  return Status::ok;
}

Status Window::try_lock_word(int target, LockType type, bool* taken, uint64_t* seen) {
  *taken = false;
  *seen = 0;  // compare value in, old value out
  if (type == LockType::exclusive) {
    const uint64_t mark = ctrl::exclusive_mark(rank_);
    WEFT_TRY(ctrl_atomic(target, ctrl::kLock, Transport::RmaAtomic::cswap, &mark, seen));
    *taken = *seen == 0;
    return Status::ok;
  }
  const uint64_t delta = shared_delta(), back = uint64_t(0) - delta;
  WEFT_TRY(ctrl_atomic(target, ctrl::kLock, Transport::RmaAtomic::add, &delta, seen));
  if (!(*seen & ctrl::kExclusive)) {
    *taken = true;
    return Status::ok;
  }
  uint64_t scratch = 0;
  return ctrl_atomic(target, ctrl::kLock, Transport::RmaAtomic::add, &back, &scratch);
}

Status Window::queued_lock(int target, LockType type) {
  const size_t slot = ctrl::queue_slots(job_ranks_.size()) + 8 * size_t(rank_);
  const uint64_t taking = ctrl::kTakingTicket, next = ctrl::kNextTicket, zero = 0;
  uint64_t scratch = 0, queue = 0;
  WEFT_TRY(ctrl_atomic(target, slot, Transport::RmaAtomic::swap, &taking, &scratch));
  WEFT_TRY(ctrl_atomic(target, ctrl::kQueue, Transport::RmaAtomic::add, &next, &queue));
  const uint32_t ticket = ctrl::next_ticket(queue);
  const uint64_t placed = uint64_t(ticket) + ctrl::kTicketBias;
  WEFT_TRY(ctrl_atomic(target, slot, Transport::RmaAtomic::swap, &placed, &scratch));
  // Admitted once the admitted ticket reaches this one (or passes it: skipped as a dead one's).
  uint32_t idle = 0;
  while (int32_t(ctrl::admitted_ticket(queue) - ticket) < 0) {
    Status s = unblock_queue(target, queue);
    t_.progress_engine().pass(&idle);
    if (s == Status::ok) s = ctrl_read(target, ctrl::kQueue, &queue);
    if (s != Status::ok) {  // failing in line: the ticket is given up, for waiters to skip
      const uint64_t given_up = placed | ctrl::kTicketGivenUp;
      if (!rank_failed(target)) (void)ctrl_atomic(target, slot, Transport::RmaAtomic::swap, &given_up, &scratch);
      return s;
    }
  }
  // Admitted: only the holders stand in the way, and each gives the word back in time.
  Status s = Status::ok;
  for (;;) {
    bool taken = false;
    uint64_t seen = 0;
    if ((s = try_lock_word(target, type, &taken, &seen)) != Status::ok || taken) break;
    if ((s = check_lock_holders(target, seen)) != Status::ok) break;
    t_.progress_engine().pass(&idle);
  }
  // Admit the next ticket whether or not this one got the lock (a dead holder fails each in
  // turn), unless waiters skipped this one; then leave the queue. On a dead target nothing is
  // left to tell.
  if (s == Status::ok || !rank_failed(target)) {
    Status left = Status::ok;
    while (left == Status::ok && ctrl::admitted_ticket(queue) == ticket) {
      uint64_t seen = queue;  // compare value in, old value out
      const uint64_t admit = queue + ctrl::admit_next(ticket);
      left = ctrl_atomic(target, ctrl::kQueue, Transport::RmaAtomic::cswap, &admit, &seen);
      if (seen == queue) break;
      queue = seen;
    }
    if (left == Status::ok) left = ctrl_atomic(target, slot, Transport::RmaAtomic::swap, &zero, &scratch);
    if (s == Status::ok) s = left;
  }
  return s;
}

Status Window::lock(int target, LockType type) {
  WaitBound bound;
  const bool counted = type == LockType::shared && reader_slots_;
  const uint64_t one = 1, zero = 0;
  uint64_t scratch = 0;
  // The slot first: a holder that dies after counting itself is always found by its slot.
  if (counted) WEFT_TRY(ctrl_atomic(target, own_reader_slot(), Transport::RmaAtomic::swap, &one, &scratch));
  uint64_t queue = 0;
  bool taken = false;
  Status s = ctrl_read(target, ctrl::kQueue, &queue);
  if (s == Status::ok && ctrl::next_ticket(queue) == ctrl::admitted_ticket(queue)) {
    uint64_t seen = 0;
    s = try_lock_word(target, type, &taken, &seen);
  }
  if (s == Status::ok && !taken) s = queued_lock(target, type);
  if (s != Status::ok) {
    if (counted && !rank_failed(target))
      (void)ctrl_atomic(target, own_reader_slot(), Transport::RmaAtomic::swap, &zero, &scratch);
    return s;
  }
  locks_[size_t(target)] = type;
  return Status::ok;
}

Status Window::unlock(int target) {
  const LockType type = locks_[size_t(target)];
  locks_[size_t(target)] = LockType::none;
  // Every access of the epoch lands before the lock is released.
  const Status flushed = target != rank_ ? flush(target) : Status::ok;
  if (flushed != Status::ok && rank_failed(target)) return flushed;
  const uint64_t delta =
      type == LockType::exclusive ? uint64_t(0) - ctrl::exclusive_mark(rank_) : uint64_t(0) - shared_delta();
  const uint64_t zero = 0;
  uint64_t old = 0;
  // Fetching atomics: applied at the target once they return, so no flush is needed after them.
  Status s = ctrl_atomic(target, ctrl::kLock, Transport::RmaAtomic::add, &delta, &old, flushed == Status::ok);
  if (s == Status::ok && type == LockType::shared && reader_slots_)
    s = ctrl_atomic(target, own_reader_slot(), Transport::RmaAtomic::swap, &zero, &old);
  // The own lock is taken and given back with the CPU's atomics, which never wait: a rank that
  // locks itself in a loop lets peers' lock requests (which may need its progress) in here,
  // while the lock is free.
  if (target == rank_) progress();
  return flushed != Status::ok ? flushed : s;
}

}  // namespace weft::rma
