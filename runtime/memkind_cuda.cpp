// CUDA build: cudart is linked statically (never libcuda directly), so a machine without a
// driver still loads the library; the probe then reports "no driver" and CUDA stays off.
#include <cuda.h>  // types of the driver entry point looked up through cudart (no libcuda link)
#include <cuda_runtime_api.h>

#include "log.h"
#include "memkind.h"

namespace weft {

namespace {
CudaState g_cuda{.compiled = true, .usable = false, .devices = 0, .reason = {}};
bool g_probed = false;

// The driver's cuPointerGetAttributes, which every point-to-point call asks about its buffer:
// it answers for ordinary host memory in about half the time of cudaPointerGetAttributes (164
// against 320 ns on the H200 machine's host). Null where the lookup failed: cudart is used.
using PointerAttributesFn = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);
PointerAttributesFn g_pointer_attributes = nullptr;

void find_driver_pointer_query() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess && fn) {
    g_pointer_attributes = reinterpret_cast<PointerAttributesFn>(fn);
  } else {
    (void)cudaGetLastError();
    WEFT_INFO(Subsys::gpu, "the driver's cuPointerGetAttributes was not found; buffers are classified with "
              "cudaPointerGetAttributes");
  }
}
}  // namespace

const CudaState& cuda_probe(bool enabled) {
  if (g_probed) return g_cuda;
  g_probed = true;
  if (!enabled) {
    g_cuda.reason = "disabled by WEFT_CUDA";
  } else {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      g_cuda.reason = cudaGetErrorString(err);
      (void)cudaGetLastError();
    } else if (n == 0) {
      g_cuda.reason = "no CUDA device";
    } else {
      g_cuda.usable = true;
      g_cuda.devices = n;
      find_driver_pointer_query();
    }
  }
  if (g_cuda.usable)
    WEFT_INFO(Subsys::gpu, "cuda enabled with %d device(s)", g_cuda.devices);
  else
    WEFT_INFO(Subsys::gpu, "cuda off: %s; running host-only", g_cuda.reason.c_str());
  return g_cuda;
}

const CudaState& cuda_state() { return g_cuda; }
bool memkind_device_possible() { return g_cuda.usable; }

int cuda_current_device() {
  int device = -1;
  if (!g_cuda.usable || cudaGetDevice(&device) != cudaSuccess) return -1;
  return device;
}

void cuda_use_device(int device) {
  if (g_cuda.usable && device >= 0) (void)cudaSetDevice(device);
}

MemInfo memkind_query(const void* ptr) {
  MemInfo info;
  if (!g_cuda.usable || ptr == nullptr) return info;
  if (g_pointer_attributes) {
    // Memory CUDA does not know reads as type 0 with CUDA_SUCCESS (no error to clear).
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    CUpointer_attribute what[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* into[3] = {&type, &managed, &ordinal};
    if (g_pointer_attributes(3, what, into, reinterpret_cast<CUdeviceptr>(ptr)) == CUDA_SUCCESS) {
      if (managed) {
        info.kind = MemKind::cuda_managed;
        info.device = ordinal;
      } else if (type == CU_MEMORYTYPE_DEVICE) {
        info.kind = MemKind::cuda_device;
        info.device = ordinal;
      } else if (type == CU_MEMORYTYPE_HOST) {
        info.kind = MemKind::host_pinned;
      }
      return info;
    }
  }
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return info;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: info.kind = MemKind::cuda_device; info.device = attr.device; break;
    case cudaMemoryTypeManaged: info.kind = MemKind::cuda_managed; info.device = attr.device; break;
    case cudaMemoryTypeHost: info.kind = MemKind::host_pinned; break;
    default: break;
  }
  return info;
}

Status memkind_device_alloc(size_t bytes, void** out) {
  *out = nullptr;
  const cudaError_t err = cudaMalloc(out, bytes ? bytes : 1);
  if (err != cudaSuccess) {
    WEFT_ERROR(Subsys::gpu, "cudaMalloc of %zu bytes failed: %s", bytes, cudaGetErrorString(err));
    (void)cudaGetLastError();
    return Status::no_memory;
  }
  return Status::ok;
}

void memkind_device_free(void* p) {
  if (p && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

Status memkind_copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::ok;
  cudaError_t err = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  // From pageable host memory cudaMemcpy may return before the DMA to the device has landed;
  // another process reading the buffer through IPC right after would see the old data.
  if (err == cudaSuccess) err = cudaStreamSynchronize(cudaStreamLegacy);
  if (err != cudaSuccess) {
    WEFT_ERROR(Subsys::gpu, "cudaMemcpy of %zu bytes failed: %s", bytes, cudaGetErrorString(err));
    (void)cudaGetLastError();
    return Status::internal;
  }
  return Status::ok;
}

}  // namespace weft
