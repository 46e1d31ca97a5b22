// MPI windows over UCX RMA and atomics (rma/): each rank registers its window memory and one
// lock word with the transport, the ranks exchange (address, size, displacement unit, remote
// keys) once at creation, and every access goes straight to the target's memory: put, get,
// fetching atomics on 4- and 8-byte words, and flush. Locks are words at each target changed
// with remote atomics (exclusive: compare-and-swap from 0; shared: a reader count). The caller
// (runtime/mpi) checks epochs and argument ranges and maps errors to MPI error classes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pt2pt/transport.h"

namespace weft::rma {

enum class Flavor : int { create = 1, allocate = 2, dynamic = 3, shared = 4 };
enum class LockType : uint8_t { none, shared, exclusive };

// What one rank publishes about its window at creation (fixed size; the remote keys follow
// as `rkey_bytes` + `lock_rkey_bytes` bytes).
struct PeerHeader {
  uint64_t base = 0, size = 0, lock_addr = 0;
  uint32_t disp_unit = 1, rkey_bytes = 0, lock_rkey_bytes = 0, pad = 0;
};

class Window {
 public:
  // Registers base[0, size) and the lock word; `job_ranks` maps window ranks to job ranks.
  Window(Transport& t, std::vector<int> job_ranks, int rank);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  Status register_memory(void* base, size_t size, int disp_unit);
  // This rank's header and keys, to be gathered by every rank (a fixed-size record of
  // record_bytes(), the same on every rank after agreeing on the largest key size).
  std::vector<unsigned char> record(size_t key_space) const;
  size_t key_space() const;  // bytes this rank's keys need
  // Every rank's record (record_bytes each, in window rank order).
  Status connect(const std::vector<unsigned char>& records, size_t record_bytes);

  // Whether [disp * the target's disp_unit, + bytes) lies inside the target's window.
  bool in_range(int target, uint64_t disp, size_t bytes) const;
  // The byte offset of displacement disp in the target's window.
  uint64_t offset_of(int target, uint64_t disp) const { return disp * peers_[size_t(target)].disp_unit; }

  // Accesses at a byte offset into the target's window (checked by the caller).
  Status put(int target, const void* buf, size_t bytes, uint64_t offset);
  Status get(int target, void* buf, size_t bytes, uint64_t offset);
  // A fetching atomic on one 4- or 8-byte element; *result gets the old value (cswap: holds
  // the compare value on entry).
  Status atomic(int target, Transport::RmaAtomic op, const void* value, void* result, size_t size, uint64_t offset);
  // Applies `update` to one element of `size` bytes (1, 2, 4 or 8, aligned to its size) at a
  // byte offset into the target's window, atomically: the aligned 4- or 8-byte word holding it
  // is read, updated in a copy and put back with compare-and-swap, again until no other update
  // came in between. *old (may be null) gets the element's value before the update.
  Status update_element(int target, uint64_t offset, size_t size, const std::function<void(void* element)>& update,
                        void* old);
  Status flush(int target);  // -1: every target
  Status lock(int target, LockType type);
  Status unlock(int target);

  int rank() const { return rank_; }
  int size() const { return int(job_ranks_.size()); }
  LockType locked(int target) const { return locks_[size_t(target)]; }

 private:
  // Atomics on this rank's own memory (the target is this rank).
  static Status atomic_at(void* at, Transport::RmaAtomic op, const void* value, void* result, size_t size);
  Status lock_atomic(int target, Transport::RmaAtomic op, const uint64_t* value, uint64_t* old);
  struct Peer {
    uint64_t base = 0, size = 0, lock_addr = 0;
    uint32_t disp_unit = 1;
    void* rkey = nullptr;
    void* lock_rkey = nullptr;
  };
  Transport& t_;
  std::vector<int> job_ranks_;
  int rank_ = 0;
  void* base_ = nullptr;
  size_t size_ = 0;
  int disp_unit_ = 1;
  uint64_t lock_word_ = 0;  // this rank's lock: kExclusive, or the number of shared holders
  Transport::RmaRegistration mem_, lock_;
  std::vector<Peer> peers_;
  std::vector<LockType> locks_;
};

}  // namespace weft::rma
