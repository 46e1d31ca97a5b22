// The synchronisation calls of an MPI window and the epochs they open and close: fence,
// general active target (post / start / complete / wait, on the control block's counters:
// pscw.cpp), passive target (lock, lock_all, flushes). A call in the wrong epoch breaches the
// synchronisation rule before anything moves.
#include "mpi_window.h"

namespace weft::rma {

Outcome MpiWindow::fence(bool next_epoch) {
  if (lock_all_) return refuse(Breach::sync, "inside a lock_all epoch");
  if (pscw_open()) return refuse(Breach::sync, "inside a general active target (post/start) epoch");
  WEFT_TRY(window_->flush(-1));
  // The barrier ends every rank's accesses of the closing epoch before any rank starts the
  // next one (and before local stores to the window are read remotely).
  WEFT_TRY(barrier());
  fence_epoch_ = next_epoch;
  fence_used_ = false;
  return Status::ok;
}

Outcome MpiWindow::window_ranks(const std::vector<int>& members, std::vector<int>* out) const {
  const Comm& c = ctx_.comm;
  out->clear();
  for (int job : members) {
    int q = 0;
    while (q < c.size && c.world_rank(q) != job) ++q;
    if (q == c.size)
      return refuse(Status::invalid_group, "rank %zu of the group (job rank %d) is not in the window", out->size(),
                    job);
    out->push_back(q);
  }
  return Status::ok;
}

Outcome MpiWindow::post(const std::vector<int>& members, bool notify) {
  if (exposed_) return refuse(Breach::sync, "an exposure epoch is already open (MPI_Win_wait first)");
  std::vector<int> origins;
  if (Outcome o = window_ranks(members, &origins); !o.ok()) return o;
  WEFT_TRY(window_->post(origins, notify));
  exposed_ = true;
  exposure_origins_ = int(origins.size());
  return Status::ok;
}

Outcome MpiWindow::start(const std::vector<int>& members, bool wait) {
  if (access_open_) return refuse(Breach::sync, "an access epoch is already open (MPI_Win_complete first)");
  if (lock_all_) return refuse(Breach::sync, "inside a lock_all epoch");
  std::vector<int> targets;
  if (Outcome o = window_ranks(members, &targets); !o.ok()) return o;
  for (int q : targets)
    if (window_->locked(q) != LockType::none) return refuse(Breach::sync, "rank %d is locked by this rank", q);
  // With MPI_MODE_NOCHECK the matching posts have been made already (with it too).
  WEFT_TRY(window_->start(targets, wait));
  access_open_ = true;
  access_group_ = std::move(targets);
  for (int q : access_group_) access_to_[size_t(q)] = 1;
  return Status::ok;
}

Outcome MpiWindow::complete() {
  if (!access_open_) return refuse(Breach::sync, "no access epoch is open (MPI_Win_start first)");
  const Status s = window_->complete(access_group_);
  for (int q : access_group_) access_to_[size_t(q)] = 0;
  access_group_.clear();
  access_open_ = false;
  return s;
}

Outcome MpiWindow::wait(bool block, bool* done) {
  if (!exposed_) return refuse(Breach::sync, "no exposure epoch is open (MPI_Win_post first)");
  *done = false;
  WEFT_TRY(window_->wait_complete(exposure_origins_, block, done));
  if (*done) exposed_ = false;
  return Status::ok;
}

Outcome MpiWindow::check_rank(int target) const {
  if (target < 0 || target >= size())
    return refuse(Status::invalid_rank, "invalid target rank %d (argument 'rank')", target);
  return Status::ok;
}

Outcome MpiWindow::lock(int target, LockType type) {
  if (target == kNoRank) return Status::ok;
  if (Outcome o = check_rank(target); !o.ok()) return o;
  if (lock_all_ || window_->locked(target) != LockType::none)
    return refuse(Breach::sync, "rank %d is already locked by this rank", target);
  if (fence_epoch_ && fence_used_) return refuse(Breach::sync, "inside a fence epoch (an access followed the fence)");
  if (access_open_ && access_to_[size_t(target)])
    return refuse(Breach::sync, "rank %d is in this rank's MPI_Win_start group", target);
  WEFT_TRY(window_->lock(target, type));
  fence_epoch_ = false;  // the fence's epoch never began
  return Status::ok;
}

Outcome MpiWindow::unlock(int target) {
  if (target == kNoRank) return Status::ok;
  if (Outcome o = check_rank(target); !o.ok()) return o;
  if (window_->locked(target) == LockType::none)
    return refuse(Breach::sync, "rank %d is not locked by this rank", target);
  return window_->unlock(target);
}

Outcome MpiWindow::lock_all() {
  if (lock_all_ || (fence_epoch_ && fence_used_) || access_open_) return refuse(Breach::sync, "an epoch is open");
  for (int q = 0; q < size(); ++q)
    if (window_->locked(q) != LockType::none) return refuse(Breach::sync, "rank %d is locked by this rank", q);
  for (int q = 0; q < size(); ++q)
    if (Status s = window_->lock(q, LockType::shared); s != Status::ok) {
      // No epoch opens: the locks taken so far are given back (the error stays this one's).
      const std::string detail = error_detail();
      for (int p = 0; p < q; ++p) (void)window_->unlock(p);
      set_error_detail(detail);
      return s;
    }
  lock_all_ = true;
  fence_epoch_ = false;  // the fence's epoch never began
  return Status::ok;
}

Outcome MpiWindow::unlock_all() {
  if (!lock_all_) return refuse(Breach::sync, "no lock_all epoch is open");
  // The epoch ends whatever happens: every lock is given back, the first error reported.
  Status first = Status::ok;
  std::string detail;
  for (int q = 0; q < size(); ++q)
    if (Status s = window_->unlock(q); s != Status::ok && first == Status::ok) {
      first = s;
      detail = error_detail();
    }
  lock_all_ = false;
  if (first != Status::ok) set_error_detail(detail);
  return first;
}

Outcome MpiWindow::flush(int target, bool remote) { return flush_epoch(false, target, remote); }

Outcome MpiWindow::flush_all(bool remote) { return flush_epoch(true, -1, remote); }

// all: every rank of the window (target is then ignored).
Outcome MpiWindow::flush_epoch(bool all, int target, bool remote) {
  bool open = lock_all_;
  if (!all) {
    if (Outcome o = check_rank(target); !o.ok()) return o;
    open = open || window_->locked(target) != LockType::none;
  } else {
    for (int q = 0; q < size() && !open; ++q) open = window_->locked(q) != LockType::none;
  }
  if (!open) return refuse(Breach::sync, "no passive-target epoch is open");
  if (remote) return window_->flush(all ? -1 : target);
  window_->progress();  // locally complete already; peers may wait for this rank
  return Status::ok;
}

}  // namespace weft::rma
