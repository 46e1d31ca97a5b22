// Device memory for KV agents with CUDA: regions are described with the runtime's CUDA IPC
// descriptors (runtime/cuda_ipc.h); a peer's region is opened with cudaIpcOpenMemHandle
// (each allocation once per process, shared by the regions in it) and copies run on one
// stream of their own, marked with events: between device buffers as one kernel per post
// (kv_copy_kernel.h), otherwise one cudaMemcpyAsync per block.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kv_blob.h"
#include "kv_copy_kernel.h"
#include "kv_device.h"
#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "weft/kv.h"

namespace weft::kv {

namespace {

static_assert(sizeof(IpcDescriptor) == kIpcDescriptorBytes, "the blob's descriptor size");

struct Opened {
  void* base = nullptr;
  int refs = 0;
};

struct DeviceState {
  std::mutex mu;
  std::map<std::string, Opened> opened;      // by the allocation's IPC handle
  std::multimap<void*, std::string> mapped;  // region pointer -> its allocation's handle
  cudaStream_t stream = nullptr;
};

DeviceState& state() {
  static DeviceState s;
  return s;
}

int cuda_error(const char* what, cudaError_t err) {
  (void)cudaGetLastError();
  return kv_error(WEFT_KV_ERR_TRANSPORT, std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace

bool is_device_memory(const void* p) {
  (void)cuda_probe(true);
  const MemKind k = memkind_query(p).kind;
  return k == MemKind::cuda_device || k == MemKind::unsupported_device;
}

int device_describe(void* base, std::vector<unsigned char>* ipc) {
  IpcDescriptor d;
  if (cuda_ipc_describe(base, &d) != Status::ok)
    return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "register: device memory cannot be shared: " + error_detail());
  const auto* b = reinterpret_cast<const unsigned char*>(&d);
  ipc->assign(b, b + sizeof d);
  return WEFT_KV_SUCCESS;
}

int device_map(uint32_t /*peer*/, const std::vector<unsigned char>& ipc, void** ptr) {
  if (ipc.size() != sizeof(IpcDescriptor)) return kv_error(WEFT_KV_ERR_BLOB, "a device region's descriptor is invalid");
  IpcDescriptor d;
  std::memcpy(&d, ipc.data(), sizeof d);
  const std::string key(reinterpret_cast<const char*>(d.handle), sizeof d.handle);
  DeviceState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Opened& o = s.opened[key];
  if (o.refs == 0) {
    cudaIpcMemHandle_t h;
    std::memcpy(&h, d.handle, sizeof h);
    const cudaError_t err = cudaIpcOpenMemHandle(&o.base, h, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      s.opened.erase(key);
      return cuda_error("mapping a peer's device region (cudaIpcOpenMemHandle)", err);
    }
  }
  ++o.refs;
  *ptr = static_cast<char*>(o.base) + d.offset;
  s.mapped.emplace(*ptr, key);
  return WEFT_KV_SUCCESS;
}

void device_unmap(void* ptr) {
  if (!ptr) return;
  DeviceState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto m = s.mapped.find(ptr);
  if (m == s.mapped.end()) return;
  auto o = s.opened.find(m->second);
  s.mapped.erase(m);
  if (o == s.opened.end() || --o->second.refs > 0) return;
  if (s.stream) (void)cudaStreamSynchronize(s.stream);
  (void)cudaIpcCloseMemHandle(o->second.base);
  s.opened.erase(o);
}

namespace {

constexpr uint64_t kChunkBytes = 1 << 20;  // a thread block's share of a large copy

struct Batch {
  std::vector<DeviceCopy> copies;  // when some buffer is not device memory
  CopyChunk* chunks = nullptr;     // on the device, for the kernel
  uint64_t chunk_count = 0;
};

bool device_accessible(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

int copy_stream(cudaStream_t* out) {
  DeviceState& s = state();
  if (!s.stream) {
    const cudaError_t err = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) return cuda_error("creating the copy stream", err);
  }
  *out = s.stream;
  return WEFT_KV_SUCCESS;
}

}  // namespace

int device_batch_create(const std::vector<DeviceCopy>& copies, void** out) {
  auto b = std::make_unique<Batch>();
  const bool kernel = std::all_of(copies.begin(), copies.end(), [](const DeviceCopy& c) {
    return device_accessible(c.dst) && device_accessible(c.src);
  });
  if (!kernel) {
    b->copies = copies;
    *out = b.release();
    return WEFT_KV_SUCCESS;
  }
  std::vector<CopyChunk> chunks;
  for (const DeviceCopy& c : copies)
    for (uint64_t at = 0; at < c.bytes; at += kChunkBytes)
      chunks.push_back({static_cast<const char*>(c.src) + at, static_cast<char*>(c.dst) + at,
                        std::min(kChunkBytes, c.bytes - at)});
  cudaError_t err = cudaMalloc(&b->chunks, chunks.size() * sizeof(CopyChunk));
  if (err != cudaSuccess) return cuda_error("allocating a request's copy list", err);
  err = cudaMemcpy(b->chunks, chunks.data(), chunks.size() * sizeof(CopyChunk), cudaMemcpyHostToDevice);
  if (err != cudaSuccess) {
    (void)cudaFree(b->chunks);
    return cuda_error("uploading a request's copy list", err);
  }
  b->chunk_count = chunks.size();
  *out = b.release();
  return WEFT_KV_SUCCESS;
}

int device_batch_start(void* batch) {
  auto* b = static_cast<Batch*>(batch);
  cudaStream_t stream = nullptr;
  if (int rc = copy_stream(&stream); rc != WEFT_KV_SUCCESS) return rc;
  if (b->chunks) {
    const cudaError_t err = launch_copy_chunks(b->chunks, b->chunk_count, stream);
    return err == cudaSuccess ? WEFT_KV_SUCCESS : cuda_error("the copy kernel", err);
  }
  for (const DeviceCopy& c : b->copies) {
    const cudaError_t err = cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDefault, stream);
    if (err != cudaSuccess) return cuda_error("cudaMemcpyAsync", err);
  }
  return WEFT_KV_SUCCESS;
}

void device_batch_free(void* batch) {
  auto* b = static_cast<Batch*>(batch);
  if (!b) return;
  if (b->chunks) (void)cudaFree(b->chunks);
  delete b;
}

int device_mark(void** token) {
  DeviceState& s = state();
  cudaEvent_t ev = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (err != cudaSuccess) return cuda_error("cudaEventCreate", err);
  err = cudaEventRecord(ev, s.stream);
  if (err != cudaSuccess) {
    (void)cudaEventDestroy(ev);
    return cuda_error("cudaEventRecord", err);
  }
  *token = ev;
  return WEFT_KV_SUCCESS;
}

bool device_test(void* token, int* status) {
  auto ev = static_cast<cudaEvent_t>(token);
  const cudaError_t err = cudaEventQuery(ev);
  if (err == cudaErrorNotReady) return false;
  *status = err == cudaSuccess ? WEFT_KV_SUCCESS : cuda_error("a device copy", err);
  (void)cudaEventDestroy(ev);
  return true;
}

void device_release(void* token) {
  auto ev = static_cast<cudaEvent_t>(token);
  (void)cudaEventSynchronize(ev);
  (void)cudaEventDestroy(ev);
}

int device_signal_add(void* word) {
  cudaStream_t stream = nullptr;
  if (int rc = copy_stream(&stream); rc != WEFT_KV_SUCCESS) return rc;
  const cudaError_t err = launch_signal_add(static_cast<unsigned long long*>(word), stream);
  return err == cudaSuccess ? WEFT_KV_SUCCESS : cuda_error("the device signal", err);
}

int device_wait_enqueue(DeviceStop* stop, const void* word, uint64_t value, void* stream) {
  if (!stop->host) {
    void* h = nullptr;
    cudaError_t err = cudaHostAlloc(&h, sizeof(unsigned int), cudaHostAllocMapped);
    if (err != cudaSuccess) return cuda_error("allocating the agent's stop word", err);
    *static_cast<unsigned int*>(h) = 0;
    void* d = nullptr;
    err = cudaHostGetDevicePointer(&d, h, 0);
    if (err != cudaSuccess) {
      (void)cudaFreeHost(h);
      return cuda_error("mapping the agent's stop word", err);
    }
    stop->host = static_cast<unsigned int*>(h);
    stop->device = static_cast<const unsigned int*>(d);
  }
  const unsigned int generation = __atomic_load_n(stop->host, __ATOMIC_ACQUIRE);
  const cudaError_t err = launch_signal_wait(static_cast<const unsigned long long*>(word), value, stop->device,
                                             generation, static_cast<cudaStream_t>(stream));
  return err == cudaSuccess ? WEFT_KV_SUCCESS : cuda_error("the device signal wait", err);
}

void device_stop_raise(DeviceStop* stop) {
  if (stop->host) __atomic_add_fetch(stop->host, 1u, __ATOMIC_RELEASE);
}

void device_stop_free(DeviceStop* stop) {
  if (!stop->host) return;
  device_stop_raise(stop);
  (void)cudaDeviceSynchronize();  // the waits have read it for the last time
  (void)cudaFreeHost(stop->host);
  *stop = DeviceStop{};
}

}  // namespace weft::kv
