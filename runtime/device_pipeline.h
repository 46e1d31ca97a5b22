// Scheduling of pipelined, double-buffered staging of one device buffer through two pinned host
// chunks: which chunk a byte range lives in, when a copy to or from the device starts, and the
// fallback for ranges asked for out of sequence. The copies themselves are injected
// (ChunkCopier): CUDA copies on a stream in a CUDA build (device_staging_cuda.cpp), memcpy in
// the unit tests, so this file needs no GPU and no CUDA.
//
// The transport's UCX datatype drives it (device_staging.h): PackPipeline serves the sender's
// "pack bytes at offset o" requests, UnpackPipeline takes the receiver's fragments.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>

#include "status.h"

namespace weft {

// Copies between device memory and the two pinned chunks (slot 0 or 1), started without waiting
// and completed in the order they were started (one stream).
class ChunkCopier {
 public:
  virtual ~ChunkCopier() = default;
  // Starts copying n bytes of device memory into pinned chunk `slot` (at host).
  virtual Status start_to_host(int slot, void* host, const void* device, size_t n) = 0;
  // Starts copying n bytes of pinned chunk `slot` (at host) into device memory.
  virtual Status start_to_device(int slot, void* device, const void* host, size_t n) = 0;
  // Returns once the last copy started for `slot` (and every copy started before it) is done.
  virtual Status wait(int slot) = 0;
  // Copies n bytes between device memory and pageable host memory (either direction) and
  // returns when they are there, after every copy started before: the out-of-sequence fallback.
  virtual Status copy_now(void* dst, const void* src, size_t n) = 0;
};

struct PipelineCounters {
  uint64_t chunk_copies = 0;  // copies of a whole (or the last, partial) chunk through a pinned chunk
  uint64_t direct_copies = 0;  // out-of-sequence ranges copied at once (copy_now)
  uint64_t waits = 0;          // waits for a chunk's copy
};

// Sender: the device buffer is read chunk by chunk (chunk k = bytes [k*chunk, (k+1)*chunk)).
// start() begins copying chunks 0 and 1 into the two pinned chunks; when pack() first reads
// from chunk k, the pinned chunk that held k-1 is free and the copy of chunk k+1 into it
// starts, so it overlaps the network send of chunk k. A range whose chunk is in neither pinned
// chunk (asked for out of sequence, or again) is copied from the device at once.
class PackPipeline {
 public:
  PackPipeline() = default;
  // chunks: two pinned host buffers of chunk_bytes each.
  void reset(ChunkCopier* copier, void* chunk0, void* chunk1, size_t chunk_bytes);
  void start(const void* device_src, size_t bytes);
  // Writes min(max_length, bytes - offset) bytes of the message at `offset` to dest and returns
  // that count. After an error the count is still returned (the bytes are undefined) and the
  // error is kept (error()): UCX's protocol goes on and the request fails when it completes.
  size_t pack(size_t offset, void* dest, size_t max_length);
  // Waits for every copy still running (so the chunks may be reused); idempotent.
  Status finish();
  size_t size() const { return bytes_; }
  Status error() const { return error_; }
  const PipelineCounters& counters() const { return counters_; }

 private:
  void prefetch(int slot, int64_t chunk);
  void advance(int64_t chunk);
  size_t chunk_size(int64_t chunk) const;
  void fail(Status s);

  ChunkCopier* copier_ = nullptr;
  char* chunk_[2] = {nullptr, nullptr};
  size_t chunk_bytes_ = 0;
  const char* src_ = nullptr;
  size_t bytes_ = 0;
  int64_t chunks_ = 0;
  int64_t held_[2] = {-1, -1};  // the chunk each pinned chunk holds (or is being filled with)
  bool ready_[2] = {false, false};  // ... and whether its copy is known to be done
  Status error_ = Status::ok;
  PipelineCounters counters_;
};

// Receiver: fragments that arrive in sequence are gathered in the current pinned chunk; a full
// chunk starts its copy to the device and the next fragments go into the other pinned chunk
// (after its previous copy to the device is done). A fragment out of sequence is copied to the
// device at once (its bytes are disjoint from the gathered ones, so order does not matter);
// when the gathered run reaches bytes that arrived that way, it sends what it has on its way
// and resumes after them. finish() copies up what is gathered and waits for every copy.
class UnpackPipeline {
 public:
  UnpackPipeline() = default;
  void reset(ChunkCopier* copier, void* chunk0, void* chunk1, size_t chunk_bytes);
  // capacity: the receive buffer's size (a fragment beyond it is an error).
  void start(void* device_dst, size_t capacity);
  // Takes `length` bytes of the message at `offset`. Errors are kept, as in PackPipeline.
  void unpack(size_t offset, const void* src, size_t length);
  Status finish();  // idempotent
  size_t size() const { return capacity_; }
  Status error() const { return error_; }
  const PipelineCounters& counters() const { return counters_; }

 private:
  void flush();
  void note_ahead(size_t begin, size_t end);
  void skip_ahead();
  void fail(Status s);

  ChunkCopier* copier_ = nullptr;
  char* chunk_[2] = {nullptr, nullptr};
  size_t chunk_bytes_ = 0;
  char* dst_ = nullptr;
  size_t capacity_ = 0;
  int cur_ = 0;            // the pinned chunk being gathered into
  size_t run_start_ = 0;   // message offset of its first byte
  size_t run_len_ = 0;     // bytes gathered so far
  bool busy_[2] = {false, false};  // a copy from this pinned chunk to the device may be running
  std::map<size_t, size_t> ahead_;  // ranges copied out of sequence beyond the run: begin -> end
  bool finished_ = false;
  Status error_ = Status::ok;
  PipelineCounters counters_;
};

}  // namespace weft
