// One MPI window as the bindings (mpi/) see it: made collectively over its own communicator,
// with its memory (the user's, allocated here, or one node segment every rank maps), the
// transport Window over that memory (window.h) and the epochs open on it. Each MPI call on a
// window is one call here; the bindings check their arguments, translate handles and map the
// outcome to an MPI error class.
// - window_create.cpp: creation, the node segment, freeing;
// - access.cpp: put and get, with datatypes and device buffers, and the epoch and range check
//   every access makes;
// - accumulate.cpp: accumulates and compare-and-swap, and which atomic each takes;
// - epochs.cpp: fence, general active target, locks and flushes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "runtime/datatype.h"
#include "runtime/op.h"
#include "shared.h"
#include "window.h"

namespace weft::rma {

// Errors of one-sided communication that MPI gives classes of their own and no Status names;
// mpi/ maps each to its class. The error detail says what was wrong.
enum class Breach : uint8_t {
  none,
  sync,    // outside the epoch the call needs (MPI_ERR_RMA_SYNC)
  range,   // outside the target's window or its attached regions (MPI_ERR_RMA_RANGE)
  attach,  // a region that cannot be attached or detached (MPI_ERR_RMA_ATTACH)
  win,     // another rank could not make its part of the window (MPI_ERR_WIN)
  shared,  // a shared window over ranks of several nodes (MPI_ERR_RMA_SHARED)
};

// A window call's outcome: ok, a Status from below, or a breach of MPI's one-sided rules.
struct [[nodiscard]] Outcome {
  Status status = Status::ok;
  Breach breach = Breach::none;
  Outcome(Status s = Status::ok) : status(s) {}
  Outcome(Breach b) : status(Status::invalid_arg), breach(b) {}
  bool ok() const { return status == Status::ok; }
};

// A refused call: `fmt` (printf-style) becomes the error detail.
Outcome refuse(Outcome kind, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// GPU device memory that a build without CUDA cannot use (invalid_buffer, as elsewhere).
Outcome unusable_device_memory(const void* buf);

// The rank of no target (MPI_PROC_NULL): accesses to it and locks of it do nothing.
constexpr int kNoRank = -1;

// An origin-side argument of an access: `count` elements of `type` at `buf`. A null type: the
// call has no such argument. `arg` names it in messages ("origin" for origin_addr, ...).
struct Buffer {
  const void* buf = nullptr;
  size_t count = 0;
  const Datatype* type = nullptr;
  const char* arg = nullptr;
};

// Where an access lands: `count` elements of `type` from displacement `disp` (in the target's
// displacement units; an address in a dynamic window) of window rank `rank`.
struct Target {
  int rank = kNoRank;
  int64_t disp = 0;
  size_t count = 0;
  const Datatype* type = nullptr;
};

// Which epochs an access may take place in: any (fence, general active or passive target),
// or passive target only (the request-based forms).
enum class Epochs { any, passive };

class MpiWindow {
 public:
  // Collective over ctx.comm, the window's own communicator (nothing else uses it). base is
  // the user's memory (create), else null: allocated and shared windows get their memory
  // here, dynamic ones have none until attached.
  static Outcome create(const coll::CollContext& ctx, Flavor flavor, void* base, size_t size, int disp_unit,
                        std::unique_ptr<MpiWindow>* out);
  ~MpiWindow();
  MpiWindow(const MpiWindow&) = delete;
  MpiWindow& operator=(const MpiWindow&) = delete;

  // Collective: fails while an epoch is open or a rank has failed (the window then stays, for
  // release); else every rank's accesses have completed, and the window may be destroyed.
  Outcome close();
  // At finalize, for windows never closed: drops the registrations now; memory the window
  // allocated goes to *memory, to be freed once the transport is gone.
  void release(std::vector<void*>* memory);

  void* base() const { return base_; }
  Flavor flavor() const { return flavor_; }
  int size() const { return window_->size(); }  // ranks
  // rank's part (kNoRank: the lowest rank with memory), as mapped here: every part of a shared
  // window; of others, the own part and those of node peers in one segment (else size 0, null).
  Outcome shared_query(int rank, size_t* size, int* disp_unit, void** base) const;
  // Dynamic windows.
  Outcome attach(void* base, size_t size);
  Outcome detach(const void* base);

  Outcome put(const Buffer& origin, const Target& target, Epochs epochs);
  Outcome get(const Buffer& origin, const Target& target, Epochs epochs);
  // Accumulate (no result type), Get_accumulate and Fetch_and_op: origin's elements combined
  // into the target's with op (no origin type for no_op), result (if any) getting the old ones.
  Outcome accumulate(const Buffer& origin, const Buffer& result, const Target& target, ReduceOp op,
                     Epochs epochs);
  // One element of the predefined type d.
  Outcome compare_and_swap(const void* origin, const void* compare, void* result, const Datatype* d, int target,
                           int64_t disp);

  // next_epoch false: MPI_MODE_NOSUCCEED.
  Outcome fence(bool next_epoch);
  // General active target with the group of `members` (job ranks, each in the window).
  // notify / wait false: MPI_MODE_NOCHECK.
  Outcome post(const std::vector<int>& members, bool notify);
  Outcome start(const std::vector<int>& members, bool wait);
  Outcome complete();
  // block false: looks once; *done says whether the exposure epoch ended.
  Outcome wait(bool block, bool* done);
  Outcome lock(int target, LockType type);
  Outcome unlock(int target);
  Outcome lock_all();
  Outcome unlock_all();
  // remote false (the _local forms): puts and atomics return once the origin buffer may be
  // reused, so only the epoch is checked.
  Outcome flush(int target, bool remote);
  Outcome flush_all(bool remote);
  // MPI_Win_sync: one memory copy (MPI_WIN_UNIFIED), so a barrier is all, plus one pass of
  // progress for the peers a rank polling its own window may keep waiting.
  void sync() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    window_->progress();
  }

 private:
  MpiWindow(const coll::CollContext& ctx, Flavor flavor) : ctx_(ctx), flavor_(flavor) {}
  Outcome build(void* base, size_t size, int disp_unit);
  Outcome map_node_segment(size_t bytes, size_t align, std::vector<size_t>* offsets);
  Status barrier();
  Outcome transfer(bool is_put, const Buffer& origin, const Target& target, Epochs epochs);
  // The checks every access makes: an open access epoch to the target, and the range [lo, hi)
  // from its displacement inside its window (or, dynamic, in a region attached there); *at is
  // where it lands.
  Outcome check_access(int target, int64_t disp, ptrdiff_t lo, ptrdiff_t hi, Location* at,
                       Epochs epochs = Epochs::any) const;
  Outcome check_rank(int target) const;
  Outcome window_ranks(const std::vector<int>& members, std::vector<int>* out) const;
  Outcome flush_epoch(bool all, int target, bool remote);
  bool pscw_open() const { return access_open_ || exposed_; }

  coll::CollContext ctx_;
  Flavor flavor_;
  void* base_ = nullptr;
  bool owns_memory_ = false;  // allocated here with calloc (not in a segment): freed with the window
  std::unique_ptr<SharedSegment> segment_;  // every node rank's memory, where in one segment
  std::unique_ptr<Window> window_;
  std::shared_ptr<coll::Schedule> barrier_;  // planned on the first fence or close
  bool fence_epoch_ = false;  // between fences (not after MPI_MODE_NOSUCCEED)
  // An access since the last fence: only then has its epoch begun, so a lock may follow a
  // fence that no access followed (and closes that fence epoch).
  mutable bool fence_used_ = false;
  bool lock_all_ = false;
  // General active target: the targets of the open access epoch (start), and the number of
  // origins of the open exposure epoch (post).
  bool access_open_ = false;
  std::vector<int> access_group_;
  std::vector<char> access_to_;  // by window rank
  bool exposed_ = false;
  int exposure_origins_ = 0;
};

}  // namespace weft::rma
