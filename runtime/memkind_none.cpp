// Build without CUDA: every buffer is host memory, unless the process has the CUDA driver
// (libcuda.so.1) loaded, by the application or another library. Then a buffer may be CUDA
// device memory, which this build can neither read nor copy: the driver that is already there
// is asked (cuPointerGetAttribute, found with dlsym; libcuda is never loaded from here), and
// device memory is reported as MemKind::unsupported_device, which the MPI bindings refuse with
// MPI_ERR_BUFFER instead of dereferencing it. No CUDA header is included.
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>

#include "log.h"
#include "memkind.h"

namespace weft {

namespace {
CudaState g_cuda{.compiled = false, .usable = false,
                 .reason = "built without CUDA support"};

// The CUDA driver API values used here, as cuda.h defines them.
constexpr int kCudaSuccess = 0;                 // CUresult CUDA_SUCCESS
constexpr int kAttributeMemoryType = 2;         // CUpointer_attribute CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;          // CUpointer_attribute CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;       // CUmemorytype CU_MEMORYTYPE_DEVICE
// CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr)
using PointerGetAttribute = int (*)(void* data, int attribute, unsigned long long ptr);

std::atomic<PointerGetAttribute> g_get_attribute{nullptr};
std::atomic<unsigned long long> g_loads_seen{0};  // the loader's count when libcuda was last looked for

int read_load_count(dl_phdr_info* info, size_t, void* out) {
  *static_cast<unsigned long long*>(out) = info->dlpi_adds;  // process-wide, in every entry
  return 1;
}

// The loaded driver's cuPointerGetAttribute, or null while libcuda.so.1 is not in the process.
// A dlopen of a library that is not loaded searches the file system (tens of microseconds), so
// it is asked again only once the loader's count of loaded objects has changed (dl_iterate_phdr,
// about 30 ns): a driver loaded after MPI_Init is found on the next call.
PointerGetAttribute driver() {
  PointerGetAttribute f = g_get_attribute.load(std::memory_order_acquire);
  if (f) return f;
  unsigned long long loads = 0;
  dl_iterate_phdr(read_load_count, &loads);
  if (loads == g_loads_seen.load(std::memory_order_relaxed)) return nullptr;
  g_loads_seen.store(loads, std::memory_order_relaxed);
  // RTLD_NOLOAD: a handle only if it is loaded already. Kept open, so it stays for the process.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return nullptr;
  f = reinterpret_cast<PointerGetAttribute>(dlsym(lib, "cuPointerGetAttribute"));
  if (!f) {
    dlclose(lib);
    return nullptr;
  }
  if (g_get_attribute.exchange(f, std::memory_order_acq_rel) == nullptr)
    WEFT_INFO(Subsys::gpu, "libcuda.so.1 is loaded in this process: buffers are checked for CUDA "
              "device memory, which this build (without CUDA support) refuses");
  return f;
}
}  // namespace

const CudaState& cuda_probe(bool) { return g_cuda; }
const CudaState& cuda_state() { return g_cuda; }
bool memkind_device_possible() { return driver() != nullptr; }
int cuda_device_count() { return 0; }

// Without CUDA support there is no device work to follow.
int cuda_current_device() { return -1; }
void cuda_use_device(int) {}

MemInfo memkind_query(const void* ptr) {
  MemInfo info;
  PointerGetAttribute get = ptr ? driver() : nullptr;
  if (!get) return info;
  // Memory the driver does not know (CUDA_ERROR_INVALID_VALUE), or a driver never initialised
  // (no device memory can exist then), is host memory.
  const auto addr = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(ptr));
  unsigned type = 0, managed = 0;
  if (get(&type, kAttributeMemoryType, addr) != kCudaSuccess || type != kMemoryTypeDevice) return info;
  // Managed memory reports device memory too; the host reaches it directly.
  if (get(&managed, kAttributeIsManaged, addr) == kCudaSuccess && managed != 0) return info;
  info.kind = MemKind::unsupported_device;
  return info;
}
Status memkind_copy(void*, const void*, size_t) { return Status::not_supported; }
Status memkind_device_alloc(size_t, void** out) {
  *out = nullptr;
  return Status::not_supported;
}
void memkind_device_free(void*) {}

}  // namespace weft
