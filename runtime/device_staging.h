// Pipelined staging of GPU device buffers sent to or received from ranks reached over UCX
// (other nodes). Each message takes a staging set from a small pool: two pinned host chunks of
// WEFT_CUDA_STAGING_CHUNK bytes, a CUDA stream and an event per chunk. The sender's copy of
// chunk k+1 from the device runs while chunk k goes out on the network; the receiver gathers
// fragments in one chunk while the other is copied up. The scheduling is device_pipeline.h;
// the transport drives it from a UCX generic datatype (pt2pt/device_datatype.h).
// The pool is device_staging.cpp; the sets come from device_staging_cuda.cpp in a CUDA build
// (device_staging_none.cpp without CUDA: never usable), or from a test's backend.
#pragma once
#include <cstddef>
#include <cstdint>

#include "status.h"

namespace weft {

// At init: the chunk size (WEFT_CUDA_STAGING_CHUNK; 0 turns pipelining off, and sizes below
// 4 KiB are raised to 4 KiB).
void device_staging_configure(size_t chunk_bytes);
size_t device_staging_chunk();
// Whether device buffers can be pipelined here (a CUDA build, CUDA usable, a chunk size set);
// *why says why not.
bool device_staging_usable(const char** why = nullptr);

struct DeviceStaging;

// Takes a staging set from the pool (made on first use on the calling thread's current device:
// cudaHostAlloc, a stream, events) to send `bytes` bytes of device memory at src, or to
// receive up to `capacity` bytes into device memory at dst. Fails (no_memory or internal, with
// the detail set) when CUDA cannot provide them.
Status device_staging_begin_send(const void* src, size_t bytes, DeviceStaging** out);
Status device_staging_begin_recv(void* dst, size_t capacity, DeviceStaging** out);

// The UCX generic datatype's callbacks. start: the first copies from the device begin (sender).
// size: the message size (sender) or the receive buffer's (receiver). finish: waits for every
// copy, so a receive is on the device once UCX completes the request. Errors are kept, never
// thrown or fatal: device_staging_end reports them.
void device_staging_start(DeviceStaging* s);
size_t device_staging_size(const DeviceStaging* s);
size_t device_staging_pack(DeviceStaging* s, size_t offset, void* dest, size_t max_length);
void device_staging_unpack(DeviceStaging* s, size_t offset, const void* src, size_t length);
void device_staging_finish(DeviceStaging* s);

// Finishes s if UCX did not, returns it to the pool, and returns the first error of the
// transfer (a failed CUDA copy: Status::internal, with the detail set again), or ok.
Status device_staging_end(DeviceStaging* s);

// Frees the pooled sets (at finalize, once no transfer is in flight).
void device_staging_release_all();

struct DeviceStagingStats {
  uint64_t sets_made = 0;  // staging sets made so far
  size_t in_use = 0;       // taken by transfers in flight
  size_t idle = 0;         // kept in the pool
};
DeviceStagingStats device_staging_stats();

}  // namespace weft
