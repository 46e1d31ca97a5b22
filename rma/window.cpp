// Windows over UCX RMA: registration, the exchange of keys, accesses and the lock protocol.
#include "window.h"

#include <cstring>
#include <thread>

#include "runtime/core/log.h"

namespace weft::rma {

namespace {
// The exclusive holder's mark in a lock word; shared holders add 1 each.
constexpr uint64_t kExclusive = uint64_t(1) << 62;
}  // namespace

Window::Window(Transport& t, std::vector<int> job_ranks, int rank)
    : t_(t), job_ranks_(std::move(job_ranks)), rank_(rank), peers_(job_ranks_.size()),
      locks_(job_ranks_.size(), LockType::none) {}

Window::~Window() {
  for (Peer& p : peers_) {
    Transport::rma_release(p.rkey);
    Transport::rma_release(p.lock_rkey);
  }
  t_.rma_deregister(&mem_);
  t_.rma_deregister(&lock_);
}

Status Window::register_memory(void* base, size_t size, int disp_unit) {
  base_ = base;
  size_ = size;
  disp_unit_ = disp_unit;
  // A window of 0 bytes still registers one byte: every rank then has a key to publish.
  static unsigned char empty;
  WEFT_TRY(t_.rma_register(size ? base : &empty, size ? size : 1, &mem_));
  return t_.rma_register(&lock_word_, sizeof lock_word_, &lock_);
}

size_t Window::key_space() const { return mem_.rkey.size() + lock_.rkey.size(); }

std::vector<unsigned char> Window::record(size_t key_space) const {
  std::vector<unsigned char> r(sizeof(PeerHeader) + key_space, 0);
  PeerHeader h;
  h.base = uint64_t(reinterpret_cast<uintptr_t>(base_));
  h.size = size_;
  h.lock_addr = uint64_t(reinterpret_cast<uintptr_t>(&lock_word_));
  h.disp_unit = uint32_t(disp_unit_);
  h.rkey_bytes = uint32_t(mem_.rkey.size());
  h.lock_rkey_bytes = uint32_t(lock_.rkey.size());
  memcpy(r.data(), &h, sizeof h);
  memcpy(r.data() + sizeof h, mem_.rkey.data(), mem_.rkey.size());
  memcpy(r.data() + sizeof h + mem_.rkey.size(), lock_.rkey.data(), lock_.rkey.size());
  return r;
}

Status Window::connect(const std::vector<unsigned char>& records, size_t record_bytes) {
  for (size_t q = 0; q < peers_.size(); ++q) {
    const unsigned char* r = records.data() + q * record_bytes;
    PeerHeader h;
    memcpy(&h, r, sizeof h);
    if (sizeof h + size_t(h.rkey_bytes) + h.lock_rkey_bytes > record_bytes) {
      set_error_detail("window rank " + std::to_string(q) + " published keys longer than its record");
      return Status::internal;
    }
    Peer& p = peers_[q];
    p.base = h.base;
    p.size = h.size;
    p.lock_addr = h.lock_addr;
    p.disp_unit = h.disp_unit;
    WEFT_TRY(t_.rma_unpack(job_ranks_[q], r + sizeof h, h.rkey_bytes, &p.rkey));
    WEFT_TRY(t_.rma_unpack(job_ranks_[q], r + sizeof h + h.rkey_bytes, h.lock_rkey_bytes, &p.lock_rkey));
  }
  return Status::ok;
}

bool Window::in_range(int target, uint64_t disp, size_t bytes) const {
  const Peer& p = peers_[size_t(target)];
  const unsigned __int128 start = (unsigned __int128)disp * p.disp_unit;
  return start + bytes <= p.size;
}

namespace {

// An atomic on this rank's own window memory, with the CPU's atomics (the same memory operations
// the shared-memory transports apply for the peers; UCX's loopback endpoint did not apply them).
template <class T>
void local_atomic(Transport::RmaAtomic op, T* at, const void* value, void* result) {
  T v, old{};
  memcpy(&v, value, sizeof v);
  switch (op) {
    case Transport::RmaAtomic::add: old = __atomic_fetch_add(at, v, __ATOMIC_SEQ_CST); break;
    case Transport::RmaAtomic::band: old = __atomic_fetch_and(at, v, __ATOMIC_SEQ_CST); break;
    case Transport::RmaAtomic::bor: old = __atomic_fetch_or(at, v, __ATOMIC_SEQ_CST); break;
    case Transport::RmaAtomic::bxor: old = __atomic_fetch_xor(at, v, __ATOMIC_SEQ_CST); break;
    case Transport::RmaAtomic::swap: old = __atomic_exchange_n(at, v, __ATOMIC_SEQ_CST); break;
    case Transport::RmaAtomic::cswap: {
      memcpy(&old, result, sizeof old);
      __atomic_compare_exchange_n(at, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      break;
    }
  }
  memcpy(result, &old, sizeof old);
}

}  // namespace

Status Window::put(int target, const void* buf, size_t bytes, uint64_t offset) {
  if (target == rank_) {
    memcpy(static_cast<char*>(base_) + offset, buf, bytes);
    return Status::ok;
  }
  const Peer& p = peers_[size_t(target)];
  return t_.rma_put(job_ranks_[size_t(target)], buf, bytes, p.base + offset, p.rkey);
}

Status Window::get(int target, void* buf, size_t bytes, uint64_t offset) {
  if (target == rank_) {
    memcpy(buf, static_cast<const char*>(base_) + offset, bytes);
    return Status::ok;
  }
  const Peer& p = peers_[size_t(target)];
  return t_.rma_get(job_ranks_[size_t(target)], buf, bytes, p.base + offset, p.rkey);
}

Status Window::atomic(int target, Transport::RmaAtomic op, const void* value, void* result, size_t size,
                      uint64_t offset) {
  if (target == rank_) return atomic_at(static_cast<char*>(base_) + offset, op, value, result, size);
  const Peer& p = peers_[size_t(target)];
  return t_.rma_atomic(job_ranks_[size_t(target)], op, value, result, size, p.base + offset, p.rkey);
}

Status Window::atomic_at(void* at, Transport::RmaAtomic op, const void* value, void* result, size_t size) {
  if (size == 8) local_atomic(op, static_cast<uint64_t*>(at), value, result);
  else if (size == 4) local_atomic(op, static_cast<uint32_t*>(at), value, result);
  else return Status::not_supported;
  return Status::ok;
}

Status Window::update_element(int target, uint64_t offset, size_t size,
                              const std::function<void(void* element)>& update, void* old) {
  const Peer& p = peers_[size_t(target)];
  const uint64_t base = target == rank_ ? uint64_t(reinterpret_cast<uintptr_t>(base_)) : p.base;
  const size_t word = size == 8 ? 8 : 4;
  const uint64_t shift = (base + offset) & (word - 1);
  if ((size != 1 && size != 2 && size != 4 && size != 8) || (base + offset) % size != 0 ||
      offset - shift + word > p.size) {
    set_error_detail("an atomic update of a " + std::to_string(size) +
                     "-byte element needs 1, 2, 4 or 8 bytes, aligned, in a whole 4- or 8-byte word of the window");
    return Status::not_supported;
  }
  const uint64_t at = offset - shift;
  const uint64_t zero = 0;
  uint64_t cur = 0;
  WEFT_TRY(atomic(target, Transport::RmaAtomic::add, &zero, &cur, word, at));  // an atomic read
  for (;;) {
    uint64_t next = cur;
    update(reinterpret_cast<char*>(&next) + shift);  // little-endian: byte `shift` of the word
    if (next == cur) break;
    uint64_t seen = cur;
    WEFT_TRY(atomic(target, Transport::RmaAtomic::cswap, &next, &seen, word, at));
    if (seen == cur) break;
    cur = seen;  // another update came in between: apply this one to its result
  }
  if (old) memcpy(old, reinterpret_cast<const char*>(&cur) + shift, size);
  return Status::ok;
}

Status Window::flush(int target) { return t_.rma_flush(target < 0 ? -1 : job_ranks_[size_t(target)]); }

Status Window::lock_atomic(int target, Transport::RmaAtomic op, const uint64_t* value, uint64_t* old) {
  if (target == rank_) return atomic_at(&lock_word_, op, value, old, 8);
  const Peer& p = peers_[size_t(target)];
  return t_.rma_atomic(job_ranks_[size_t(target)], op, value, old, 8, p.lock_addr, p.lock_rkey);
}

Status Window::lock(int target, LockType type) {
  for (unsigned spins = 0;; ++spins) {
    uint64_t old = 0;
    if (type == LockType::exclusive) {
      const uint64_t mark = kExclusive;
      old = 0;  // compare value in, old value out
      WEFT_TRY(lock_atomic(target, Transport::RmaAtomic::cswap, &mark, &old));
      if (old == 0) break;
    } else {
      const uint64_t one = 1;
      WEFT_TRY(lock_atomic(target, Transport::RmaAtomic::add, &one, &old));
      if (!(old & kExclusive)) break;
      const uint64_t minus_one = ~uint64_t(0);
      WEFT_TRY(lock_atomic(target, Transport::RmaAtomic::add, &minus_one, &old));
    }
    // Held by another rank: let it (and this rank's own progress) run before trying again.
    (void)t_.progress();
    if (spins > 64) std::this_thread::yield();
  }
  locks_[size_t(target)] = type;
  return Status::ok;
}

Status Window::unlock(int target) {
  const int job = job_ranks_[size_t(target)];
  if (target != rank_) WEFT_TRY(t_.rma_flush(job));  // every access of the epoch lands before the lock is released
  const LockType type = locks_[size_t(target)];
  locks_[size_t(target)] = LockType::none;
  const uint64_t delta = type == LockType::exclusive ? uint64_t(0) - kExclusive : ~uint64_t(0);
  uint64_t old = 0;
  WEFT_TRY(lock_atomic(target, Transport::RmaAtomic::add, &delta, &old));
  return target == rank_ ? Status::ok : t_.rma_flush(job);
}

}  // namespace weft::rma
