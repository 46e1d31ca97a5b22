// The one memory-kind detection point. Every layer asks here whether a buffer is host or
// device memory. Without a CUDA driver or device everything is host and no CUDA call is made.
// A build without CUDA still recognises CUDA device memory when the process has the CUDA
// driver loaded (memkind_none.cpp), as MemKind::unsupported_device, so callers refuse it.
#pragma once
#include <cstdint>
#include <cstddef>
#include <string>

#include "status.h"

namespace weft {

// unsupported_device: CUDA device memory in a build without CUDA support, which can neither
// read it nor copy it; only that build reports it, and the MPI bindings refuse such buffers
// with MPI_ERR_BUFFER.
enum class MemKind : uint8_t { host, host_pinned, cuda_device, cuda_managed, unsupported_device };

const char* memkind_name(MemKind k);

struct MemInfo {
  MemKind kind = MemKind::host;
  int device = -1;
};

struct CudaState {
  bool compiled = false;  // this build has CUDA support
  bool usable = false;    // a CUDA driver recent enough for this build was found
  std::string reason;     // why CUDA is not usable, for the INFO log and weft_info
};

// Finds the CUDA driver once (at init) without initialising CUDA: that is left to the program's
// first CUDA call. enabled=false skips every CUDA call.
const CudaState& cuda_probe(bool enabled);
const CudaState& cuda_state();
// The devices CUDA sees; initialises CUDA (for tools, not for MPI_Init). 0 where not usable.
int cuda_device_count();

// The calling thread's current CUDA device (-1: none, no CUDA, or CUDA not initialised yet),
// and making `device` another thread's current one (a helper thread works on the device of the
// thread that started it).
int cuda_current_device();
void cuda_use_device(int device);

MemInfo memkind_query(const void* ptr);

// Whether any buffer may be device memory, i.e. whether memkind_query is worth asking: in a
// CUDA build, whether CUDA is usable (cuda_state().usable); in a build without CUDA, whether
// the CUDA driver is loaded in the process (checked again only after a library was loaded, so
// a driver loaded after MPI_Init is seen; about 30 ns while it is absent).
bool memkind_device_possible();

// Whether the host can read and write the buffer directly (host, pinned and managed memory);
// device memory needs a copy (memkind_copy), and unsupported_device cannot be used at all.
inline bool host_accessible(const MemInfo& m) {
  return m.kind != MemKind::cuda_device && m.kind != MemKind::unsupported_device;
}

// Copies bytes between any two kinds of memory, waiting until the copy is done (device memory
// staged through host buffers). Status::not_supported in a build without CUDA.
Status memkind_copy(void* dst, const void* src, size_t bytes);

// Device memory on the current GPU (cudaMalloc), for runtime stages that need a device buffer
// the program did not pass. Status::not_supported in a build without CUDA.
Status memkind_device_alloc(size_t bytes, void** out);
void memkind_device_free(void* p);

}  // namespace weft
