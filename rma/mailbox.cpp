// Accumulate mailboxes (layout in mailbox.h). Accumulating into a node peer's user memory by
// cross-memory attach costs two system calls (read, write back) under the target's mutex; a
// target that is inside MPI can instead apply the accumulate itself, from a slot in the node
// segment, with plain loads and stores: one write of the request, one read of the reply.
// The target's poller applies every posted slot under its own accumulate mutex, so that it
// excludes the origins that reach the same memory by cross-memory attach. An origin whose
// request is not taken within kWithdrawAfter (the target computes outside MPI, or holds the
// mutex) withdraws it and goes the cross-memory way; it then skips the mailbox of that target
// for a number of accumulates that doubles with every withdrawal in a row.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mailbox.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "staged_wire.h"
#include "window.h"

namespace weft::rma {

namespace {

constexpr double kWithdrawAfter = 50e-6;  // seconds
constexpr uint32_t kFirstSkip = 16, kMaxSkip = 4096;
constexpr int kLooksPerPass = 64;

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::atomic_ref<uint32_t> state_of(char* slot) { return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(slot)); }
std::atomic_ref<uint64_t> posted_count(char* area) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(area));
}

}  // namespace

void Window::place_mailboxes(char* own) {
  mailbox_own_ = own;
  t_.progress_engine().add_poller(mailbox_poll, this);
}

char* Window::slot_at(char* area, int origin) const {
  return area + mailbox::kAreaHeader + size_t(origin) * mailbox::slot_bytes(job_ranks_.size());
}

Status Window::mailbox_call(int target, const MailboxRequest& r, size_t* done) {
  *done = 0;
  Peer& p = peers_[size_t(target)];
  if (p.mailbox_skip > 0) {
    --p.mailbox_skip;
    return Status::ok;
  }
  char* slot = slot_at(p.mailbox, rank_);
  auto& h = *reinterpret_cast<mailbox::SlotHeader*>(slot);
  char* data = slot + mailbox::kSlotHeader;
  const size_t esz = basic_type_size(r.type);
  const size_t capacity = mailbox::capacity(job_ranks_.size());
  const size_t piece = r.kind == mailbox::kCompareSwap ? r.bytes : capacity - capacity % esz;
  auto state = state_of(slot);
  auto posted = posted_count(p.mailbox);
  while (*done < r.bytes) {
    const size_t off = *done, n = std::min(piece, r.bytes - off);
    h.status = 0;
    h.kind = r.kind;
    h.op = uint8_t(r.op);
    h.type = uint8_t(r.type);
    h.result = r.result != nullptr;
    h.addr = r.addr + off;
    h.bytes = n;
    if (r.operand) memcpy(data, r.operand + off, n);
    if (r.kind == mailbox::kCompareSwap) memcpy(data + n, r.compare, n);
    posted.fetch_add(1);
    state.store(mailbox::kPosted, std::memory_order_release);
    const double start = monotonic_seconds();
    uint32_t idle = 0;
    for (uint32_t spins = 1;; ++spins) {
      // A few reads of the state before each pass of progress: a target inside MPI answers
      // within one pass of its own, which the origin's pass (UCX's included) would overshoot.
      uint32_t s = state.load(std::memory_order_acquire);
      for (int look = 0; look < kLooksPerPass && s != mailbox::kDone; ++look) {
        cpu_pause();
        s = state.load(std::memory_order_acquire);
      }
      if (s == mailbox::kDone) break;
      if (spins % 64 == 0) {
        Status alive = peer_alive(target);
        if (s == mailbox::kPosted && (alive != Status::ok || monotonic_seconds() - start > kWithdrawAfter)) {
          uint32_t expected = mailbox::kPosted;
          if (state.compare_exchange_strong(expected, mailbox::kFree)) {
            posted.fetch_sub(1);
            if (alive != Status::ok) return alive;
            p.mailbox_backoff = p.mailbox_backoff ? std::min(2 * p.mailbox_backoff, kMaxSkip) : kFirstSkip;
            p.mailbox_skip = p.mailbox_backoff;
            if (log_first_time("rma mailbox withdrawn"))
              WEFT_INFO(Subsys::rma,
                        "window rank %d did not take an accumulate from its mailbox within %.0f us (busy outside "
                        "MPI): it and the next %u to that rank read and write its memory from here (cross-memory "
                        "attach); shown once",
                        target, kWithdrawAfter * 1e6, p.mailbox_skip);
            return Status::ok;  // the caller goes on from *done
          }
        } else if (alive != Status::ok) {
          return alive;  // taken by a rank that died since
        }
      }
      t_.progress_engine().pass(&idle);
    }
    const Status s = Status(h.status);
    if (s == Status::ok && r.result) memcpy(r.result + off, data, n);
    state.store(mailbox::kFree, std::memory_order_relaxed);
    if (s != Status::ok) {
      char msg[160];
      snprintf(msg, sizeof msg, "window rank %d refused an accumulate of %zu bytes (%s)", target, n, status_name(s));
      WEFT_ERROR(Subsys::rma, "%s", msg);
      set_error_detail(msg);
      return s;
    }
    *done = off + n;
  }
  p.mailbox_backoff = 0;
  return Status::ok;
}

int Window::mailbox_poll(void* window) { return static_cast<Window*>(window)->serve_mailboxes(); }

int Window::serve_mailboxes() {
  auto posted = posted_count(mailbox_own_);
  if (posted.load(std::memory_order_acquire) == 0) [[likely]] return 0;
  // The accumulate mutex of this rank's window, taken as mutex_lock does (a holder elsewhere:
  // the slots wait for a later pass, or their origins withdraw them).
  std::atomic_ref<uint64_t> mutex(*ctrl_word(ctrl::kMutex));
  uint64_t free_word = 0;
  if (!mutex.compare_exchange_strong(free_word, uint64_t(rank_) + 1, std::memory_order_acquire)) return 0;
  int served = 0;
  for (int q = 0; q < size(); ++q) {
    if (q == rank_) continue;
    char* slot = slot_at(mailbox_own_, q);
    auto state = state_of(slot);
    uint32_t expected = mailbox::kPosted;
    if (state.load(std::memory_order_relaxed) != expected ||
        !state.compare_exchange_strong(expected, mailbox::kTaken, std::memory_order_acquire))
      continue;
    posted.fetch_sub(1);
    mailbox::SlotHeader h;
    memcpy(&h, slot, sizeof h);  // the origin may still write it: read once, then checked
    const Status s = apply_mail(q, h, slot + mailbox::kSlotHeader);
    reinterpret_cast<mailbox::SlotHeader*>(slot)->status = int32_t(s);
    state.store(mailbox::kDone, std::memory_order_release);
    ++served;
  }
  mutex.store(0, std::memory_order_release);
  return served;
}

// One request, checked as every byte from a peer is: a known kind, op and type, a size the slot
// holds in whole elements, and a range inside this rank's window memory.
Status Window::apply_mail(int origin, const mailbox::SlotHeader& h, char* data) {
  const auto op = ReduceOp(h.op);
  const auto type = BasicType(h.type);
  const size_t esz = h.type <= uint8_t(BasicType::long_double_int) ? basic_type_size(type) : 0;
  const size_t capacity = mailbox::capacity(job_ranks_.size());
  const bool cas = h.kind == mailbox::kCompareSwap;
  const char* why = nullptr;
  if (h.kind != mailbox::kAccumulate && !cas) why = "unknown request";
  else if (esz == 0 || h.bytes == 0 || h.bytes % esz != 0 || h.bytes > (cas ? capacity / 2 : capacity))
    why = "bad element type or size";
  else if (cas ? h.bytes != esz : (h.op > uint8_t(ReduceOp::no_op) || !reduce_op_supports(op, type)))
    why = "bad operation";
  else if (device_ || !request_in_window(h.addr, h.bytes))
    why = "not inside this rank's window memory";
  if (why) {
    char msg[200];
    snprintf(msg, sizeof msg, "refused an accumulate of %llu bytes at 0x%llx from window rank %d: %s",
             (unsigned long long)h.bytes, (unsigned long long)h.addr, origin, why);
    WEFT_ERROR(Subsys::rma, "%s", msg);
    return Status::invalid_arg;
  }
  char* at = reinterpret_cast<char*>(uintptr_t(h.addr));
  const size_t n = size_t(h.bytes);
  if (cas) {  // data: the new value, then the compare value; the old one goes back
    char old[64];
    memcpy(old, at, n);
    if (memcmp(old, data + n, n) == 0) memcpy(at, data, n);
    memcpy(data, old, n);
    return Status::ok;
  }
  if (!h.result) return op == ReduceOp::no_op ? Status::ok : reduce_local(op, type, data, at, n / esz);
  // Get-accumulate: the old contents replace the operand, a piece at a time.
  char old[1024];
  const size_t step = sizeof old - sizeof old % esz;
  for (size_t k = 0; k < n; k += step) {
    const size_t m = std::min(step, n - k);
    memcpy(old, at + k, m);
    if (op != ReduceOp::no_op) WEFT_TRY(reduce_local(op, type, data + k, at + k, m / esz));
    memcpy(data + k, old, m);
  }
  return Status::ok;
}

}  // namespace weft::rma
