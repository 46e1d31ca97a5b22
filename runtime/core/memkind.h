// The one memory-kind detection point. Every layer asks here whether a buffer is host or
// device memory. Without a CUDA driver or device everything is host and no CUDA call is made.
#pragma once
#include <cstdint>
#include <cstddef>
#include <string>

#include "status.h"

namespace weft {

enum class MemKind : uint8_t { host, host_pinned, cuda_device, cuda_managed };

const char* memkind_name(MemKind k);

struct MemInfo {
  MemKind kind = MemKind::host;
  int device = -1;
};

struct CudaState {
  bool compiled = false;  // this build has CUDA support
  bool usable = false;    // a driver and at least one device were found
  int devices = 0;
  std::string reason;     // why CUDA is not usable, for the INFO log and weft_info
};

// Probes the CUDA runtime once (at init). enabled=false skips every CUDA call.
const CudaState& cuda_probe(bool enabled);
const CudaState& cuda_state();

MemInfo memkind_query(const void* ptr);

// Whether the host can read and write the buffer directly (host, pinned and managed memory);
// device memory needs a copy (memkind_copy).
inline bool host_accessible(const MemInfo& m) { return m.kind != MemKind::cuda_device; }

// Copies bytes between any two kinds of memory, waiting until the copy is done (device memory
// staged through host buffers). Status::not_supported in a build without CUDA.
Status memkind_copy(void* dst, const void* src, size_t bytes);

}  // namespace weft
