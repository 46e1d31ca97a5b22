// Windows over UCX RMA: registration, the exchange of keys, accesses and the accumulate mutex
// (the lock protocol is in locks.cpp).
#include "window.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "control.h"
#include "runtime/bulk_copy.h"
#include "runtime/cma.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/wait_deadline.h"

namespace weft::rma {

Window::Window(Transport& t, std::vector<int> job_ranks, int rank, Flavor flavor)
    : t_(t), job_ranks_(std::move(job_ranks)), rank_(rank), flavor_(flavor), peers_(job_ranks_.size()),
      locks_(job_ranks_.size(), LockType::none), reported_dead_(job_ranks_.size(), 0) {
  const size_t bytes = flavor_ == Flavor::dynamic ? dir_offset() + ctrl::kDirHeader + ctrl::kDirBytes : dir_offset();
  control_.assign(bytes / 8, 0);
}

Window::~Window() {
  if (serves_) t_.progress_engine().remove_poller(serve_poll, this);
  if (mailbox_own_) t_.progress_engine().remove_poller(mailbox_poll, this);
  for (Peer& p : peers_) {
    Transport::rma_release(p.rkey);
    Transport::rma_release(p.ctrl_rkey);
    for (Region& r : p.regions) Transport::rma_release(r.rkey);
  }
  for (Local& l : attached_) t_.rma_deregister(&l.reg);
  t_.rma_deregister(&mem_);
  t_.rma_deregister(&ctrl_reg_);
}

size_t Window::dir_offset() const { return (ctrl::slots_end(job_ranks_.size()) + 63) & ~size_t(63); }

// Shared locks of windows above kReaderBits ranks cannot have a bit each in the lock word.
// WEFT_RMA_LOCK_READER_SLOTS=1 counts them on smaller windows too (to test that encoding).
namespace {
bool reader_slots_forced() {
  static const bool forced = setting_bool("WEFT_RMA_LOCK_READER_SLOTS");
  return forced;
}
}  // namespace

Status Window::register_memory(void* base, size_t size, int disp_unit, bool device) {
  base_ = base;
  size_ = size;
  disp_unit_ = disp_unit;
  device_ = device && size > 0;
  if (device_) WEFT_TRY(describe_device());
  serves_ = decide_serving();
  // A window of 0 bytes (and a dynamic one, and one in device memory, which UCX is not asked
  // to register) still registers one byte: every rank then has a key to publish.
  static unsigned char empty;
  const bool own = size > 0 && !device_;
  WEFT_TRY(t_.rma_register(own ? base : &empty, own ? size : 1, &mem_));
  return t_.rma_register(ctrl(), control_bytes(), &ctrl_reg_);
}

Status Window::describe_device() {
  IpcDescriptor first, last;
  Status s = cuda_ipc_describe(base_, &first);
  if (s == Status::not_supported) {
    // CUDA IPC turned off or unusable, or memory without a legacy IPC handle (stream-ordered
    // pools): the window still works for this rank; the others get an error on access.
    if (size() > 1)
      WEFT_WARN(Subsys::rma, "window memory %p is GPU device memory that other ranks cannot map (%s); only this "
                "rank can access it", base_, error_detail().c_str());
    return Status::ok;
  }
  if (s == Status::ok) s = cuda_ipc_describe(static_cast<char*>(base_) + size_ - 1, &last);
  if (s != Status::ok) {
    const std::string msg = "describing device window memory for CUDA IPC: " + error_detail();
    WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
    set_error_detail(msg);
    return s;
  }
  // Origins map one allocation: the window must not run past it into another one.
  if (last.buffer_id != first.buffer_id || last.offset != first.offset + size_ - 1) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "window memory %p + %zu bytes spans more than one GPU device allocation; a device window must lie in "
             "one allocation",
             base_, size_);
    WEFT_ERROR(Subsys::rma, "%s", msg);
    set_error_detail(msg);
    return Status::not_supported;
  }
  ipc_ = first;
  has_ipc_ = true;
  if (log_first_time("rma-device-window"))
    WEFT_INFO(Subsys::rma, "window in GPU device memory: ranks of its node reach it through CUDA IPC; every "
              "accumulate on it takes the target's mutex");
  return Status::ok;
}

size_t Window::key_space() const { return mem_.rkey.size() + ctrl_reg_.rkey.size(); }

std::vector<unsigned char> Window::record(size_t key_space) const {
  std::vector<unsigned char> r(sizeof(PeerHeader) + key_space, 0);
  PeerHeader h;
  h.base = uint64_t(reinterpret_cast<uintptr_t>(base_));
  h.size = size_;
  h.ctrl_addr = uint64_t(reinterpret_cast<uintptr_t>(ctrl()));
  h.disp_unit = uint32_t(disp_unit_);
  h.rkey_bytes = uint32_t(mem_.rkey.size());
  h.ctrl_rkey_bytes = uint32_t(ctrl_reg_.rkey.size());
  h.device = device_;
  h.has_ipc = has_ipc_;
  h.serves = serves_;
  h.reader_slots = peers_.size() > size_t(ctrl::kReaderBits) || reader_slots_forced();
  h.pid = uint32_t(getpid());
  h.ipc = ipc_;
  memcpy(r.data(), &h, sizeof h);
  memcpy(r.data() + sizeof h, mem_.rkey.data(), mem_.rkey.size());
  memcpy(r.data() + sizeof h + mem_.rkey.size(), ctrl_reg_.rkey.data(), ctrl_reg_.rkey.size());
  return r;
}

Status Window::connect(const std::vector<unsigned char>& records, size_t record_bytes) {
  for (size_t q = 0; q < peers_.size(); ++q) {
    const unsigned char* r = records.data() + q * record_bytes;
    PeerHeader h;
    memcpy(&h, r, sizeof h);
    if (sizeof h + size_t(h.rkey_bytes) + h.ctrl_rkey_bytes > record_bytes) {
      set_error_detail("window rank " + std::to_string(q) + " published keys longer than its record");
      return Status::internal;
    }
    Peer& p = peers_[q];
    p.base = h.base;
    p.size = h.size;
    p.ctrl_addr = h.ctrl_addr;
    p.disp_unit = h.disp_unit;
    p.device = h.device != 0;
    p.ipc = h.ipc;
    p.serves = h.serves != 0;
    if (h.reader_slots) reader_slots_ = true;  // one rank asking is enough: every rank agrees
    const bool local = t_.boot().is_local(job_ranks_[q]);
    p.staged = p.serves && !local && int(q) != rank_;
    const char* no_ipc = nullptr;
    if (!p.device || int(q) == rank_ || p.staged)
      p.unreachable.clear();
    else if (!local)
      p.unreachable = "it runs on another node and does not apply the requests of other nodes";
    else if (!h.has_ipc)
      p.unreachable = "it could not describe the memory for CUDA IPC (its log says why)";
    else if (!cuda_ipc_usable(&no_ipc))
      p.unreachable = std::string("CUDA IPC is not usable here: ") + no_ipc;
    WEFT_TRY(t_.rma_unpack(job_ranks_[q], r + sizeof h, h.rkey_bytes, &p.rkey));
    WEFT_TRY(t_.rma_unpack(job_ranks_[q], r + sizeof h + h.rkey_bytes, h.ctrl_rkey_bytes, &p.ctrl_rkey));
    if (int(q) != rank_ && !p.device && h.pid != 0 && t_.boot().is_local(job_ranks_[q]) && cma_allowed())
      p.cma_pid = cma_reaches(int(h.pid), h.ctrl_addr) ? int(h.pid) : 0;
  }
  peers_[size_t(rank_)].direct = static_cast<char*>(base_);
  return start_serving();
}

// Cross-memory attach (process_vm_readv/writev) reaches a node peer's user memory with one
// kernel copy; UCX 1.13 emulates RMA there with active messages that need the target's
// progress. WEFT_RMA_CMA=0 keeps UCX.
bool Window::cma_allowed() {
  static const bool allowed = setting_bool("WEFT_RMA_CMA");
  return allowed;
}

bool Window::cma_reaches(int pid, uint64_t address) {
  uint64_t word = 0;
  iovec local{&word, sizeof word};
  iovec remote{reinterpret_cast<void*>(address), sizeof word};
  if (process_vm_readv(pid_t(pid), &local, 1, &remote, 1, 0) == ssize_t(sizeof word)) return true;
  if (log_first_time("rma cma refused"))
    WEFT_INFO(Subsys::rma, "cross-memory attach to node peers refused (%s): windows of user memory go through UCX",
              strerror(errno));
  return false;
}

// Moves bytes between this process and a node peer's memory (cma_transfer resumes where the
// kernel stops short). A process that is gone (ESRCH, zombies too) is a failed rank, for this
// window and every other user of the bootstrap's flags.
Status Window::cma_copy(int target, int pid, bool write, void* local, uint64_t remote, size_t bytes) {
  WEFT_TRY(peer_alive(target));  // a dead rank's pid could be reused: never touch it
  if (cma_transfer(pid, write, local, remote, bytes) == bytes) return Status::ok;
  const int err = errno;
  if (err == ESRCH) {
    t_.boot().mark_failed(job_ranks_[size_t(target)]);
    return rank_gone(target);
  }
  const std::string msg = std::string(write ? "process_vm_writev" : "process_vm_readv") + " to pid " +
                          std::to_string(pid) + ": " + strerror(err);
  WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::transport;
}

Status Window::locate(int target, uint64_t disp, size_t bytes, Location* out, bool* found) {
  Peer& p = peers_[size_t(target)];
  if (flavor_ != Flavor::dynamic) {
    *found = bytes <= p.size && disp <= p.size - bytes;
    if (*found && !p.unreachable.empty()) {
      const std::string msg = "window rank " + std::to_string(target) + " (job rank " +
                              std::to_string(job_ranks_[size_t(target)]) +
                              ") has its window in GPU device memory, which this rank cannot reach: " + p.unreachable;
      WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
      set_error_detail(msg);
      return Status::not_supported;
    }
    if (*found)
      *out = Location{p.base + disp, p.rkey, p.direct ? p.direct + disp : nullptr, p.base, p.base + p.size, p.device,
                      p.cma_pid, p.staged, p.device || p.serves};
    return Status::ok;
  }
  // Dynamic: disp is an address of the target's; a region attached there must hold the range,
  // or run on into regions attached right after it (Window::copy splits the access there).
  auto lookup = [&]() -> bool {
    const uint64_t end = disp + bytes;
    bool first = true;
    for (uint64_t at = disp; first || at < end; first = false) {
      bool hit = false;
      if (target == rank_) {
        for (const Local& l : attached_) {
          const uint64_t b = uint64_t(reinterpret_cast<uintptr_t>(l.base));
          if (at >= b && (at - b < l.size || (bytes == 0 && at - b == l.size))) {
            if (first) {
              *out = Location{disp, nullptr, reinterpret_cast<char*>(uintptr_t(disp)), b, b + l.size};
              out->via_mutex = serves_;
            }
            at = b + l.size;
            hit = true;
            break;
          }
        }
      } else {
        for (const Region& r : p.regions)
          if (at >= r.base && (at - r.base < r.size || (bytes == 0 && at - r.base == r.size))) {
            if (first) *out = Location{disp, r.rkey, nullptr, r.base, r.base + r.size, false, p.cma_pid, p.staged, p.serves};
            at = r.base + r.size;
            hit = true;
            break;
          }
      }
      if (!hit) return false;
    }
    return true;
  };
  *found = lookup();
  if (*found || target == rank_) return Status::ok;
  WEFT_TRY(fetch_directory(target));  // attached since the last look, or never attached
  *found = lookup();
  return Status::ok;
}

namespace {

// An atomic on memory this process maps (its own window, or a node peer's shared window),
// with the CPU's atomics (the same memory operations the shared-memory transports apply for
// the peers; UCX's loopback endpoint did not apply them).
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

Status Window::device_at(int target, const Location& at, uint64_t off, char** out) {
  if (at.direct) {  // the own window
    *out = at.direct + off;
    return Status::ok;
  }
  const Peer& p = peers_[size_t(target)];
  const int job = job_ranks_[size_t(target)];
  // Through the CUDA IPC mapping cache at every access rather than a mapping kept per window:
  // the cache may close any mapping (evicting, or remapping memory the driver says is mapped
  // already), and a mapping opened outside it would make the cache's own opens of the same
  // allocation fail. A copy of no bytes maps the allocation as point-to-point does, remapping
  // if need be; cuda_ipc_map then finds it. The pointer is used at once by a copy that is
  // waited for, before anything can evict it.
  WEFT_TRY(cuda_ipc_copy_start(job, p.ipc, nullptr, 0));
  void* base = nullptr;
  WEFT_TRY(cuda_ipc_map(job, p.ipc, &base));
  *out = static_cast<char*>(base) + (at.addr - p.base) + off;
  return Status::ok;
}

// Put (write) and get: one copy between `local` and byte `off` from a located place.
Status Window::copy(int target, const Location& at, uint64_t off, void* local, size_t bytes, bool write) {
  if (flavor_ == Flavor::dynamic && bytes > 0 && at.addr + off + bytes > at.hi) {
    // Past the end of its region, into the ones attached after it (locate found them): each
    // region's part on its own.
    char* buf = static_cast<char*>(local);
    for (uint64_t a = at.addr + off, end = a + bytes; a < end;) {
      Location piece;
      bool found = false;
      WEFT_TRY(locate(target, a, 1, &piece, &found));
      if (!found || piece.hi <= a) return Status::internal;
      const size_t n = size_t(std::min(end, piece.hi) - a);
      WEFT_TRY(copy(target, piece, 0, buf, n, write));
      buf += n;
      a += n;
    }
    return Status::ok;
  }
  if (at.staged)
    return write ? staged_put(target, at.addr + off, local, bytes, at.device)
                 : staged_get(target, at.addr + off, local, bytes, at.device);
  char* mapped = at.direct ? at.direct + off : nullptr;
  if (at.device) WEFT_TRY(device_at(target, at, off, &mapped));
  if (mapped && at.device) return write ? memkind_copy(mapped, local, bytes) : memkind_copy(local, mapped, bytes);
  if (mapped) {
    if (write) bulk_copy(mapped, local, bytes);
    else bulk_copy(local, mapped, bytes);
    return Status::ok;
  }
  if (at.pid) return cma_copy(target, at.pid, write, local, at.addr + off, bytes);
  const int job = job_ranks_[size_t(target)];
  return on_target(target, write ? t_.rma_put(job, local, bytes, at.addr + off, at.rkey)
                                 : t_.rma_get(job, local, bytes, at.addr + off, at.rkey));
}

Status Window::atomic(int target, const Location& at, uint64_t off, Transport::RmaAtomic op, const void* value,
                      void* result, size_t size) {
  if (at.device || at.via_mutex) {
    set_error_detail("no atomics on this window (GPU device memory, or reached through requests its rank applies): "
                     "accumulates take the target's mutex");
    WEFT_ERROR(Subsys::rma, "%s", error_detail().c_str());
    return Status::internal;
  }
  if (at.direct) return atomic_at(at.direct + off, op, value, result, size);
  return on_target(target, t_.rma_atomic(job_ranks_[size_t(target)], op, value, result, size, at.addr + off, at.rkey));
}

Status Window::atomic_at(void* at, Transport::RmaAtomic op, const void* value, void* result, size_t size) {
  if (size == 8) local_atomic(op, static_cast<uint64_t*>(at), value, result);
  else if (size == 4) local_atomic(op, static_cast<uint32_t*>(at), value, result);
  else return Status::not_supported;
  return Status::ok;
}


// Failure checks (peer_alive, inline): the bootstrap's flags, set by the launcher's termination
// events and by its poll of this host's processes, which reads the clock once every 256 calls
// and /proc every 20 ms at most. Mapped accesses never fail, so synchronisation asks.
Status Window::find_dead(int target) {
  if (target >= 0) return target != rank_ && rank_failed(target) ? rank_gone(target) : Status::ok;
  for (int q = 0; q < size(); ++q)
    if (q != rank_ && rank_failed(q)) return rank_gone(q);
  return Status::ok;
}

Status Window::waited_too_long(int target, const char* what) {
  const std::string msg = std::string(what) + " at window rank " + std::to_string(target) + " (job rank " +
                          std::to_string(job_ranks_[size_t(target)]) + ") did not complete within " + wait_timeout_text();
  WEFT_WARN(Subsys::rma, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::timed_out;
}

Status Window::rank_gone(int q) {
  const std::string msg = "window rank " + std::to_string(q) + " (job rank " + std::to_string(job_ranks_[size_t(q)]) +
                          ") has failed";
  if (!reported_dead_[size_t(q)]) {
    reported_dead_[size_t(q)] = 1;
    WEFT_WARN(Subsys::rma, "%s: one-sided operations that depend on it fail", msg.c_str());
  }
  set_error_detail(msg);
  return Status::peer_failed;
}

Status Window::holder_gone(int target, int holder, const char* what) {
  const std::string msg = "window rank " + std::to_string(holder) + " (job rank " +
                          std::to_string(job_ranks_[size_t(holder)]) + ") failed while holding " + what +
                          " at window rank " + std::to_string(target) + ", which can never be taken again";
  WEFT_WARN(Subsys::rma, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::peer_failed;
}

// Accesses to a mapped target are complete when they return; a release fence orders their
// stores before whatever this rank stores next (a flag, a message, an unlock), which is all
// the target's loads need. Control-block atomics are complete on return too. A flush to a
// dead target fails on every path, even where nothing is left to complete.
Status Window::flush(int target, bool serve) {
  WEFT_TRY(peer_alive(target));
  // Staged puts are complete once their target has answered a flush request.
  if (target >= 0 && peers_[size_t(target)].unflushed > 0) WEFT_TRY(on_target(target, staged_flush(target)));
  if (target < 0)
    for (size_t q = 0; q < peers_.size(); ++q)
      if (peers_[q].unflushed > 0) WEFT_TRY(on_target(int(q), staged_flush(int(q))));
  // Puts by cross-memory attach are complete on return as well (atomics are fetching), and so
  // are all accesses to the own window (made here directly, in every flavor).
  auto complete_on_return = [&](const Peer& p) {
    return p.direct != nullptr || p.cma_pid != 0 || p.staged || &p == &peers_[size_t(rank_)];
  };
  if (target >= 0 ? complete_on_return(peers_[size_t(target)])
                  : std::all_of(peers_.begin(), peers_.end(), complete_on_return)) {
    std::atomic_thread_fence(std::memory_order_release);
    if (serve) progress();  // nothing to wait for here, but peers may wait for this rank
    return Status::ok;
  }
  if (target >= 0) return on_target(target, t_.rma_flush(job_ranks_[size_t(target)]));
  if (Status s = t_.rma_flush(-1); s != Status::ok) {
    WEFT_TRY(peer_alive(-1));  // name the rank that failed, where the flags know it
    return s;
  }
  return Status::ok;
}

Status Window::ctrl_atomic(int target, size_t off, Transport::RmaAtomic op, const uint64_t* value, uint64_t* old,
                           bool checked) {
  if (target == rank_) return atomic_at(ctrl_word(off), op, value, old, 8);
  const Peer& p = peers_[size_t(target)];
  if (p.ctrl_direct) {
    if (!checked) WEFT_TRY(peer_alive(target));  // the mapped word of a dead rank would take the atomic
    return atomic_at(p.ctrl_direct + off / 8, op, value, old, 8);
  }
  return on_target(target,
                   t_.rma_atomic(job_ranks_[size_t(target)], op, value, old, 8, p.ctrl_addr + off, p.ctrl_rkey));
}

Status Window::await_ctrl(size_t off, uint64_t value, std::span<const int> from) {
  // The peers' atomics may need this rank's progress (UCX over tcp).
  Bootstrap& b = t_.boot();
  int dead = -1;
  bool timed_out = false;
  WaitBound bound;
  t_.progress_engine().wait([&] {
    if (__atomic_load_n(ctrl_word(off), __ATOMIC_ACQUIRE) >= value) return true;
    if (wait_timed_out()) [[unlikely]] return timed_out = true;
    b.poll_local_liveness();
    if (b.failures_seen() == 0) return false;
    for (int q : from)
      if (q != rank_ && rank_failed(q)) {
        dead = q;
        return true;
      }
    return false;
  });
  if (timed_out) return waited_too_long(rank_, "a synchronisation with the other ranks");
  return dead >= 0 ? rank_gone(dead) : Status::ok;
}

Status Window::mutex_lock(int target) {
  const uint64_t mark = uint64_t(rank_) + 1;
  WaitBound bound;
  for (uint32_t idle = 0;;) {
    if (wait_timed_out()) [[unlikely]] return waited_too_long(target, "taking the accumulate mutex");
    uint64_t old = 0;  // compare value in, old value out
    WEFT_TRY(ctrl_atomic(target, ctrl::kMutex, Transport::RmaAtomic::cswap, &mark, &old));
    if (old == 0) return Status::ok;
    // The word names its holder: a dead one never gives it back.
    t_.boot().poll_local_liveness();
    if (t_.boot().failures_seen() != 0) {
      WEFT_TRY(peer_alive(target));
      if (old <= uint64_t(size()) && int(old - 1) != rank_ && rank_failed(int(old - 1)))
        return holder_gone(target, int(old - 1), "the accumulate mutex");
    }
    t_.progress_engine().pass(&idle);
  }
}

Status Window::mutex_unlock(int target) {
  if (target != rank_) WEFT_TRY(flush(target, false));  // the update lands before the next holder reads
  const uint64_t zero = 0;
  uint64_t old = 0;
  return ctrl_atomic(target, ctrl::kMutex, Transport::RmaAtomic::swap, &zero, &old);  // fetching: applied on return
}

}  // namespace weft::rma
