// CUDA build: cudart is linked statically (never libcuda directly), so a machine without a
// driver still loads the library; the probe then reports "no driver" and CUDA stays off.
//
// MPI_Init does not initialise CUDA. cuInit took 30-90 ms per process on an H200 host, and more
// when the ranks of a node start it together; a program that uses the GPU initialises it with
// its own first CUDA call, and a host-only one never pays it. The probe only finds the driver
// (libcuda.so.1) and its version. Until some call initialises the driver, no CUDA memory can
// exist, and the driver's pointer query answers CUDA_ERROR_NOT_INITIALIZED: host memory.
#include <cuda.h>  // the driver's types and values; its functions are found with dlsym (no libcuda link)
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <ucm/api/ucm.h>

#include <atomic>

#include "log.h"
#include "memkind.h"
#include "memkind_cache.h"

namespace weft {

namespace {
CudaState g_cuda{.compiled = true, .usable = false, .reason = {}};
bool g_probed = false;

// The driver functions asked without cudart (which would initialise CUDA on its first call).
// cuPointerGetAttributes answers every point-to-point call's buffer: 164 ns for ordinary host
// memory on the H200 host once CUDA is initialised, against 320 ns for cudaPointerGetAttributes.
using PointerAttributesFn = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);
using DeviceCountFn = CUresult (*)(int*);
using DriverVersionFn = CUresult (*)(int*);
PointerAttributesFn g_pointer_attributes = nullptr;
DeviceCountFn g_device_count = nullptr;

// Finds the driver; empty when it is usable, else why not.
std::string find_driver() {
  // Kept open for the life of the process, as cudart keeps it.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "no CUDA driver (libcuda.so.1 not found)";
  auto version = reinterpret_cast<DriverVersionFn>(dlsym(lib, "cuDriverGetVersion"));
  g_pointer_attributes = reinterpret_cast<PointerAttributesFn>(dlsym(lib, "cuPointerGetAttributes"));
  g_device_count = reinterpret_cast<DeviceCountFn>(dlsym(lib, "cuDeviceGetCount"));
  if (!version || !g_pointer_attributes || !g_device_count) return "libcuda.so.1 lacks the functions weft asks";
  int driver = 0, runtime = 0;
  if (version(&driver) != CUDA_SUCCESS) return "the CUDA driver does not report its version";
  (void)cudaRuntimeGetVersion(&runtime);  // compiled in: initialises nothing
  // CUDA's minor version compatibility: a driver of the same major version runs this runtime.
  if (driver / 1000 < runtime / 1000) {
    return "the CUDA driver (" + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
           ") is older than this build's runtime (" + std::to_string(runtime / 1000) + "." +
           std::to_string(runtime % 1000 / 10) + ")";
  }
  return {};
}

// Host pages, kept once CUDA is initialised and UCX's memory hooks report every unmapping.
HostPageCache g_host_pages;
// 0: not tried yet, 1: the hooks report unmappings (the cache is on), 2: they could not.
std::atomic<int> g_host_cache_state{0};

void on_unmapped(ucm_event_type_t, ucm_event_t* event, void*) {
  g_host_pages.unmapped(event->vm_unmapped.address, event->vm_unmapped.size);
}

// Turns the cache on, once, at the first host answer from an initialised driver.
bool host_cache_on() {
  int state = g_host_cache_state.load(std::memory_order_acquire);
  if (state != 0) [[likely]] return state == 1;
  static std::atomic_flag trying = ATOMIC_FLAG_INIT;
  if (trying.test_and_set()) return false;  // another thread is installing the hooks
  const ucs_status_t st = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 1000, on_unmapped, nullptr);
  state = st == UCS_OK ? 1 : 2;
  if (state == 1)
    WEFT_INFO(Subsys::gpu, "memory kinds: host pages are remembered (UCX memory hooks report unmappings)");
  else
    WEFT_INFO(Subsys::gpu, "memory kinds: UCX memory hooks unavailable (%s): the driver is asked about every buffer",
              ucs_status_string(st));
  g_host_cache_state.store(state, std::memory_order_release);
  return state == 1;
}

// Whether some call in the process (the program's, or a device-buffer path's) has initialised
// the driver: before that, asking cudart would initialise it.
bool driver_initialised() {
  int n = 0;
  return g_device_count && g_device_count(&n) == CUDA_SUCCESS;
}
}  // namespace

const CudaState& cuda_probe(bool enabled) {
  if (g_probed) return g_cuda;
  g_probed = true;
  if (!enabled) {
    g_cuda.reason = "disabled by WEFT_CUDA";
  } else {
    g_cuda.reason = find_driver();
    g_cuda.usable = g_cuda.reason.empty();
  }
  if (g_cuda.usable)
    WEFT_INFO(Subsys::gpu, "cuda enabled: driver found; CUDA is initialised by the program's first CUDA call%s",
              driver_initialised() ? " (already made)" : "");
  else
    WEFT_INFO(Subsys::gpu, "cuda off: %s; running host-only", g_cuda.reason.c_str());
  return g_cuda;
}

const CudaState& cuda_state() { return g_cuda; }
bool memkind_device_possible() { return g_cuda.usable; }

int cuda_device_count() {
  if (!g_cuda.usable) return 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {  // initialises CUDA
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

int cuda_current_device() {
  int device = -1;
  if (!g_cuda.usable || !driver_initialised() || cudaGetDevice(&device) != cudaSuccess) return -1;
  return device;
}

void cuda_use_device(int device) {
  if (g_cuda.usable && device >= 0) (void)cudaSetDevice(device);
}

MemInfo memkind_query(const void* ptr) {
  MemInfo info;
  if (!g_cuda.usable || ptr == nullptr) return info;
  if (g_host_pages.known_host(ptr)) return info;
  const uint64_t generation = g_host_pages.generation();
  // Memory CUDA does not know reads as type 0 with CUDA_SUCCESS; before the driver is
  // initialised the query fails with CUDA_ERROR_NOT_INITIALIZED, and no CUDA memory exists.
  unsigned int type = 0, managed = 0;
  int ordinal = -1;
  CUpointer_attribute what[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* into[3] = {&type, &managed, &ordinal};
  if (g_pointer_attributes(3, what, into, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return info;
  if (type == 0 && !managed) {  // unknown to CUDA: ordinary host memory, until it is unmapped
    if (host_cache_on()) g_host_pages.remember(ptr, generation);
    return info;
  }
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
