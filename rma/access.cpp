// Put and Get on an MPI window, and the checks every access makes before any byte moves: an
// access outside the target's window (or, in a dynamic window, outside every region attached
// there) breaches the range rule, one outside an access epoch the synchronisation rule.
#include "access.h"
#include "mpi_window.h"
#include "runtime/memkind.h"
#include "runtime/typemap.h"

namespace weft::rma {

char* packed_view(const Buffer& b, bool pack_now, std::vector<char>* tmp) {
  void* buf = const_cast<void*>(b.buf);
  ptrdiff_t off = 0;
  if (type_is_contiguous(b.type, b.count, &off)) return static_cast<char*>(buf) + off;
  tmp->resize(type_packed_size(b.type, b.count));
  if (pack_now) (void)type_pack(b.type, buf, b.count, tmp->data(), 0, tmp->size());
  return tmp->data();
}

Status copy_runs(Window& w, int target, const Location& at, const std::vector<Run>& runs, ptrdiff_t lo, char* buf,
                 bool write) {
  size_t k = 0;
  for (const Run& r : runs) {
    const uint64_t off = uint64_t(r.disp - lo);
    WEFT_TRY(write ? w.put(target, at, off, buf + k, r.bytes) : w.get(target, at, off, buf + k, r.bytes));
    k += r.bytes;
  }
  return Status::ok;
}

Outcome buffer_on_device(const Buffer& b, bool* device) {
  *device = false;
  if (!b.buf || !memkind_device_possible() || type_packed_size(b.type, b.count) == 0) return Status::ok;
  const MemKind k = memkind_query(b.buf).kind;
  if (k == MemKind::unsupported_device) return unusable_device_memory(b.buf);
  if (k != MemKind::cuda_device) return Status::ok;
  ptrdiff_t off = 0;
  if (!type_is_contiguous(b.type, b.count, &off))
    return refuse(Status::invalid_type,
                  "non-contiguous datatypes on GPU device buffers are not supported yet (argument '%s_addr')", b.arg);
  *device = true;
  return Status::ok;
}

Outcome MpiWindow::check_access(int target, int64_t disp, ptrdiff_t lo, ptrdiff_t hi, Location* at,
                                Epochs epochs) const {
  if (target == kNoRank) return Status::ok;
  if (target < 0 || target >= size())
    return refuse(Status::invalid_rank, "invalid target rank %d (argument 'target_rank'; the window has %d ranks)",
                  target, size());
  const bool passive = lock_all_ || window_->locked(target) != LockType::none;
  if (epochs == Epochs::passive && !passive)
    return refuse(Breach::sync,
                  "request-based accesses need a passive-target epoch to rank %d (MPI_Win_lock or MPI_Win_lock_all "
                  "first)",
                  target);
  if (!passive && !fence_epoch_ && !(access_open_ && access_to_[size_t(target)]))
    return refuse(Breach::sync,
                  "no access epoch to rank %d is open (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all "
                  "first)",
                  target);
  if (!passive && fence_epoch_) fence_used_ = true;
  const bool dynamic = flavor_ == Flavor::dynamic;
  // The first byte touched: an offset into the window, or (dynamic) an address.
  const __int128 first = (dynamic ? __int128(disp) : __int128(disp) * window_->peer_disp_unit(target)) + lo;
  bool found = disp >= 0 && first >= 0 && first <= __int128(UINT64_MAX);
  if (found && hi > lo) WEFT_TRY(window_->locate(target, uint64_t(first), size_t(hi - lo), at, &found));
  if (!found && dynamic)
    return refuse(Breach::range,
                  "no region attached at rank %d holds the %lld bytes at address 0x%llx (argument 'target_disp')",
                  target, (long long)(hi - lo), (unsigned long long)(disp + lo));
  if (!found)
    return refuse(Breach::range,
                  "access of %lld bytes at displacement %lld (argument 'target_disp') is outside rank %d's window",
                  (long long)(hi - lo), (long long)disp, target);
  return Status::ok;
}

Outcome MpiWindow::put(const Buffer& origin, const Target& target, Epochs epochs) {
  return transfer(true, origin, target, epochs);
}

Outcome MpiWindow::get(const Buffer& origin, const Target& target, Epochs epochs) {
  return transfer(false, origin, target, epochs);
}

// The origin in packed form (packed or unpacked here when not contiguous), one access per
// contiguous run of the target datatype. A device origin buffer is copied straight to or from
// a device window, and through host memory for other targets.
Outcome MpiWindow::transfer(bool is_put, const Buffer& origin, const Target& t, Epochs epochs) {
  const Datatype *od = origin.type, *td = t.type;
  const size_t ob = type_packed_size(od, origin.count), tb = type_packed_size(td, t.count);
  if (ob != tb) return refuse(Status::invalid_type, "the origin has %zu bytes of data and the target %zu", ob, tb);
  auto ready = [&](bool* device) -> Outcome {  // whether the origin buffer is usable, and where it lives
    if (!origin.buf && od->true_lb == 0) return refuse(Status::invalid_buffer, "NULL buffer (argument 'origin_addr')");
    return buffer_on_device(origin, device);
  };
  Location at;
  bool origin_device = false;
  // A predefined target type and a contiguous origin (the common case): one run, no copies.
  if (ptrdiff_t span = 0; !td->loop && type_is_contiguous(od, origin.count, &span)) {
    if (Outcome o = check_access(t.rank, t.disp, 0, ptrdiff_t(tb), &at, epochs); !o.ok()) return o;
    if (t.rank == kNoRank || ob == 0) return Status::ok;
    if (Outcome o = ready(&origin_device); !o.ok()) return o;
    if (!origin_device || at.device) {
      char* data = static_cast<char*>(const_cast<void*>(origin.buf)) + span;
      return is_put ? window_->put(t.rank, at, 0, data, ob) : window_->get(t.rank, at, 0, data, ob);
    }
  }
  ptrdiff_t lo = 0, hi = 0;
  const std::vector<Run> runs = runs_of(td, t.count, &lo, &hi);
  if (Outcome o = check_access(t.rank, t.disp, lo, hi, &at, epochs); !o.ok()) return o;
  if (t.rank == kNoRank || ob == 0) return Status::ok;
  if (Outcome o = ready(&origin_device); !o.ok()) return o;
  std::vector<char> tmp;
  char* data = packed_view(origin, is_put, &tmp);
  char* staged = nullptr;  // the device origin data, while `data` is its host copy
  if (origin_device && !at.device) {
    staged = data;
    tmp.resize(ob);
    data = tmp.data();
    if (is_put) WEFT_TRY(memkind_copy(data, staged, ob));
  }
  WEFT_TRY(copy_runs(*window_, t.rank, at, runs, lo, data, is_put));
  if (!is_put && staged) WEFT_TRY(memkind_copy(staged, data, ob));
  else if (!is_put && !tmp.empty())
    (void)type_unpack(od, tmp.data(), tmp.size(), const_cast<void*>(origin.buf), origin.count, 0);
  return Status::ok;
}

}  // namespace weft::rma
