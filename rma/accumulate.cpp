// Accumulates and compare-and-swap on an MPI window. Accumulate (no result), Get_accumulate,
// Fetch_and_op and Compare_and_swap all take the target's accumulate mutex (a control word taken
// with compare-and-swap), so that they exclude each other whatever their types, sizes and
// windows' memory; the user's locks are untouched (a shared lock_all would block the exclusive
// lock word). A contiguous range of a node peer's user memory (created and dynamic windows) is
// first posted to the target's mailbox, which the target applies under its mutex when it
// progresses (mailbox.cpp); what it does not take in time goes on as below. Under the mutex:
// - memory this process maps (its own window, a node peer's part of a segment): the range is
//   reduced in place;
// - one 4- or 8-byte integer element whose op UCX has (sum, band, bor, bxor, replace; cswap):
//   one remote atomic;
// - else (any predefined type, 1-byte elements of a 1-byte window included): the whole range
//   read with one access per run of the target datatype, reduced here and written back (a
//   replace without result is only written); GPU device windows copy it through host memory.
// The mutex is given back after a flush, so the next holder reads what this one wrote.
// Device origin, result and compare buffers are copied through host memory.
#include <cstring>

#include "access.h"
#include "mpi_window.h"
#include "runs.h"
#include "runtime/memkind.h"
#include "runtime/typemap.h"

namespace weft::rma {

namespace {

// The remote atomic for a predefined op, or false where none applies.
bool atomic_for(ReduceOp op, Transport::RmaAtomic* out) {
  switch (op) {
    case ReduceOp::sum: *out = Transport::RmaAtomic::add; return true;
    case ReduceOp::band: *out = Transport::RmaAtomic::band; return true;
    case ReduceOp::bor: *out = Transport::RmaAtomic::bor; return true;
    case ReduceOp::bxor: *out = Transport::RmaAtomic::bxor; return true;
    case ReduceOp::replace: *out = Transport::RmaAtomic::swap; return true;
    case ReduceOp::no_op: *out = Transport::RmaAtomic::add; return true;  // adds 0
    default: return false;
  }
}

bool integer_word(BasicType t) {
  return t == BasicType::i32 || t == BasicType::u32 || t == BasicType::i64 || t == BasicType::u64;
}

// Whether one element at `at` may be updated with one remote atomic: memory of another process
// reached through UCX (not mapped here, nor GPU device memory, nor through requests). Where the
// control block is mapped and the memory reached by cross-memory attach, the mutex is a CPU
// atomic and the copies single system calls, cheaper than UCX's atomics, which it emulates with
// active messages the target must progress: such memory is read, reduced and written back.
bool remote_atomics(const Location& at, bool control_mapped) {
  return !at.direct && !at.device && !at.via_mutex && !at.staged && !(control_mapped && at.pid != 0);
}

// Whether the target applies updates at `at` from its mailbox: host memory of a node peer
// that this process does not map (mailbox.cpp).
bool via_mailbox(const Window& w, const Location& at, int target) {
  return !at.direct && !at.device && !at.staged && w.has_mailbox(target);
}

// The one predefined type a datatype is made of (none if mixed).
BasicType element_type(const Datatype* d) { return d->predefined ? d->basic : d->elem_basic; }

// The result of a Get_accumulate read into `out`: unpacked where it was read into a copy.
Status finish_result(const Buffer& result, const char* out, const std::vector<char>& out_tmp, size_t bytes) {
  if (out && !out_tmp.empty())
    (void)type_unpack(result.type, out_tmp.data(), bytes, const_cast<void*>(result.buf), result.count, 0);
  return Status::ok;
}

}  // namespace

Outcome MpiWindow::accumulate(const Buffer& origin, const Buffer& result, const Target& t, ReduceOp rop,
                              Epochs epochs) {
  const Datatype* td = t.type;
  if (type_packed_size(td, t.count) == 0 && (!origin.type || type_packed_size(origin.type, origin.count) == 0) &&
      (!result.type || type_packed_size(result.type, result.count) == 0)) {
    Location at;  // nothing moves: only the epoch is checked, whatever the types
    return check_access(t.rank, t.disp, 0, 0, &at, epochs);
  }
  const BasicType b = element_type(td);
  if (b == BasicType::none)
    return refuse(Status::invalid_type, "accumulate needs a target datatype made of one predefined type");
  if (!reduce_op_supports(rop, b))
    return refuse(Status::invalid_op, "%s is not defined on %s", reduce_op_name(rop), basic_type_name(b));
  const size_t esz = basic_type_size(b), bytes = type_packed_size(td, t.count);
  // The origin (none for MPI_NO_OP) and result must hold the same elements as the target.
  const Buffer* args[2] = {&origin, &result};
  for (const Buffer* a : args) {
    if (!a->type) continue;
    const BasicType ab = element_type(a->type);
    const size_t a_bytes = type_packed_size(a->type, a->count);
    if (ab != b || a_bytes != bytes)
      return refuse(Status::invalid_type, "the %s holds %zu bytes of %s, the target %zu bytes of %s", a->arg, a_bytes,
                    ab == BasicType::none ? "mixed types" : basic_type_name(ab), bytes, basic_type_name(b));
  }
  ptrdiff_t lo = 0, hi = 0;
  std::vector<Run> runs = runs_of(td, t.count, &lo, &hi);
  for (const Run& r : runs)
    if (r.bytes % esz != 0)
      return refuse(Status::invalid_type, "the target datatype splits a %s element", basic_type_name(b));
  Location at;
  if (Outcome o = check_access(t.rank, t.disp, lo, hi, &at, epochs); !o.ok()) return o;
  if (t.rank == kNoRank || bytes == 0) return Status::ok;
  bool on_device[2] = {false, false};
  for (int i = 0; i < 2; ++i) {
    if (!args[i]->type) continue;
    if (!args[i]->buf && args[i]->type->true_lb == 0)
      return refuse(Status::invalid_buffer, "NULL buffer (argument '%s_addr')", args[i]->arg);
  }
  for (int i = 0; i < 2; ++i)
    if (args[i]->type)
      if (Outcome o = buffer_on_device(*args[i], &on_device[i]); !o.ok()) return o;
  std::vector<char> in_tmp, out_tmp;
  const char* in = origin.type ? packed_view(origin, true, &in_tmp) : nullptr;
  char* out = result.type ? packed_view(result, false, &out_tmp) : nullptr;
  char* out_device = nullptr;  // a device result buffer, while `out` is its host copy
  if (on_device[0]) {
    in_tmp.resize(bytes);
    WEFT_TRY(memkind_copy(in_tmp.data(), in, bytes));
    in = in_tmp.data();
  }
  if (on_device[1]) {
    out_device = out;
    out_tmp.resize(bytes);
    out = out_tmp.data();
  }
  const int target = t.rank;
  Transport::RmaAtomic aop;
  const bool remote_atomic = remote_atomics(at, window_->control_mapped());
  const bool one_atomic = bytes == esz && rop != ReduceOp::no_op && remote_atomic && integer_word(b) &&
                          atomic_for(rop, &aop);
  // A contiguous range of a node peer's user memory: the target applies it from its mailbox
  // where it takes it in time; the rest (none, usually) goes on below.
  size_t mailed = 0;
  const uint64_t first = at.addr + uint64_t(runs[0].disp - lo);
  if (runs.size() == 1 && via_mailbox(*window_, at, target) &&
      first + bytes <= at.hi) {  // in one region of a dynamic window
    const Window::MailboxRequest r{mailbox::kAccumulate, rop, b, first, bytes,
                                   rop == ReduceOp::no_op ? nullptr : in, nullptr, out};
    WEFT_TRY(window_->mailbox_call(target, r, &mailed));
    if (mailed == bytes) {
      if (out_device) return memkind_copy(out_device, out, bytes);
      return finish_result(result, out, out_tmp, bytes);
    }
    runs[0].disp += ptrdiff_t(mailed);
    runs[0].bytes -= mailed;
  }
  const size_t rest = bytes - mailed;
  const char* in_rest = in ? in + mailed : nullptr;
  char* out_rest = out ? out + mailed : nullptr;
  if (mailed == 0 && rop == ReduceOp::no_op && out && !out_device) {
    // A read of one element only: one byte cannot be seen half updated, nor can one aligned 4-
    // or 8-byte element read atomically, so the mutex is not needed. A read of several
    // elements takes it, so that it sees every other accumulate whole (programs rely on that,
    // e.g. for a pointer of rank and address written as bytes by MPI_REPLACE).
    const uint64_t addr = at.direct ? uint64_t(reinterpret_cast<uintptr_t>(at.direct)) : at.addr;
    if (bytes == 1 && !at.device) {
      WEFT_TRY(copy_runs(*window_, target, at, runs, lo, out, false));
      return finish_result(result, out, out_tmp, bytes);
    }
    if (bytes == esz && (esz == 4 || esz == 8) && addr % esz == 0 && !at.device && !at.via_mutex &&
        !at.staged && (at.direct || remote_atomic)) {
      const uint64_t zero = 0;
      WEFT_TRY(window_->atomic(target, at, 0, Transport::RmaAtomic::add, &zero, out, esz));
      return finish_result(result, out, out_tmp, bytes);
    }
  }
  Status s = window_->mutex_lock(target);
  if (s == Status::ok && at.direct && !at.device) {
    // Memory this process maps (its own, a node peer's in a segment): reduced in place.
    size_t k = 0;
    for (const Run& r : runs) {
      if (s != Status::ok) break;
      char* to = at.direct + (r.disp - lo);
      if (out) memcpy(out + k, to, r.bytes);
      if (rop != ReduceOp::no_op) s = reduce_local(rop, b, in + k, to, r.bytes / esz);
      k += r.bytes;
    }
  } else if (s == Status::ok && one_atomic) {  // one element: never split by the mailbox
    uint64_t old = 0;
    s = window_->atomic(target, at, 0, aop, in, &old, esz);
    if (s == Status::ok && out) memcpy(out, &old, esz);
  } else if (s == Status::ok && !out && rop == ReduceOp::replace) {
    s = copy_runs(*window_, target, at, runs, lo, const_cast<char*>(in_rest), true);
  } else if (s == Status::ok) {
    // One read of the whole range, the reduction here, one write back.
    std::vector<char> cur(rest);
    s = copy_runs(*window_, target, at, runs, lo, cur.data(), false);
    if (s == Status::ok && out) memcpy(out_rest, cur.data(), rest);
    if (s == Status::ok && rop != ReduceOp::no_op) {
      s = reduce_local(rop, b, in_rest, cur.data(), rest / esz);
      if (s == Status::ok) s = copy_runs(*window_, target, at, runs, lo, cur.data(), true);
    }
  }
  if (Status u = window_->mutex_unlock(target); s == Status::ok) s = u;
  if (s == Status::ok && out_device) s = memkind_copy(out_device, out, bytes);
  WEFT_TRY(s);
  return out_device ? Status::ok : finish_result(result, out, out_tmp, bytes);
}

// Under the target's accumulate mutex, as accumulates: one UCX compare-and-swap on 4- and 8-byte
// integers of memory reached through UCX, else a read and a conditional write.
Outcome MpiWindow::compare_and_swap(const void* origin, const void* compare, void* result, const Datatype* d,
                                    int target, int64_t disp) {
  const size_t elem = d->predefined ? basic_type_size(d->basic) : 0;
  if (!d->predefined || basic_type_is_pair(d->basic) || (elem != 1 && elem != 2 && elem != 4 && elem != 8))
    return refuse(Status::not_supported,
                  "compare-and-swap on %s is not supported (predefined types of 1, 2, 4 and 8 bytes are)",
                  d->predefined ? basic_type_name(d->basic) : "a derived datatype");
  Location at;
  if (Outcome o = check_access(target, disp, 0, ptrdiff_t(elem), &at); !o.ok()) return o;
  if (target == kNoRank) return Status::ok;
  if (!origin || !compare || !result)
    return refuse(Status::invalid_buffer, "NULL origin, compare or result buffer");
  const void* bufs[3] = {origin, compare, result};
  const char* names[3] = {"origin", "compare", "result"};
  bool on_device[3] = {false, false, false};
  uint64_t host[2] = {0, 0};
  for (int i = 0; i < 3; ++i)
    if (Outcome o = buffer_on_device(Buffer{bufs[i], 1, d, names[i]}, &on_device[i]); !o.ok()) return o;
  for (int i = 0; i < 2; ++i)
    if (on_device[i]) {
      WEFT_TRY(memkind_copy(&host[i], bufs[i], elem));
      bufs[i] = &host[i];
    }
  origin = bufs[0];
  compare = bufs[1];
  uint64_t io = 0;
  if (via_mailbox(*window_, at, target)) {
    size_t mailed = 0;
    const Window::MailboxRequest r{mailbox::kCompareSwap, ReduceOp::replace, d->basic, at.addr, elem,
                                   static_cast<const char*>(origin), static_cast<const char*>(compare),
                                   reinterpret_cast<char*>(&io)};
    WEFT_TRY(window_->mailbox_call(target, r, &mailed));
    if (mailed == elem) {
      if (on_device[2]) return memkind_copy(result, &io, elem);
      memcpy(result, &io, elem);
      return Status::ok;
    }
  }
  Status s = window_->mutex_lock(target);
  if (s == Status::ok && remote_atomics(at, window_->control_mapped()) && integer_word(d->basic)) {
    memcpy(&io, compare, elem);
    s = window_->atomic(target, at, 0, Transport::RmaAtomic::cswap, origin, &io, elem);
  } else if (s == Status::ok) {
    s = window_->get(target, at, 0, &io, elem);
    if (s == Status::ok && memcmp(&io, compare, elem) == 0) s = window_->put(target, at, 0, origin, elem);
  }
  if (Status u = window_->mutex_unlock(target); s == Status::ok) s = u;
  if (s == Status::ok && on_device[2]) s = memkind_copy(result, &io, elem);
  WEFT_TRY(s);
  if (!on_device[2]) memcpy(result, &io, elem);
  return Status::ok;
}

}  // namespace weft::rma
