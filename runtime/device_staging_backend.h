// Where the staging sets of device_staging.h come from: CUDA (device_staging_cuda.cpp: pinned
// chunks, a stream, events) or, in unit tests without a GPU, host memory and memcpy. Internal
// to runtime/ and its tests.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "device_pipeline.h"
#include "status.h"

namespace weft {

// Two chunks of chunk_bytes and the copies between them and device memory.
class StagingSet : public ChunkCopier {
 public:
  void* chunk[2] = {nullptr, nullptr};
  size_t chunk_bytes = 0;
  int device = 0;            // the device it was made for (sets are reused on the same one)
  std::string error_detail;  // the first failed copy, for the request's error string
};

struct StagingBackend {
  // Whether sets can be made here; *why says why not.
  bool (*usable)(const char** why);
  // The device the calling thread uses now (sets are kept per device).
  int (*current_device)();
  // A set for that device; no_memory or internal (detail set) when it cannot be made.
  Status (*make)(size_t chunk_bytes, int device, std::unique_ptr<StagingSet>* out);
};

// The CUDA backend, or nullptr in a build without CUDA.
const StagingBackend* cuda_staging_backend();

// Unit tests: staging sets from `b` instead (nullptr: CUDA's again). Frees the idle sets.
void device_staging_set_backend(const StagingBackend* b);

}  // namespace weft
