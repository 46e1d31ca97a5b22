// CUDA build. The driver's pointer attributes (allocation range, buffer id) come through the
// runtime's driver entry point, so libcuda is still never linked directly.
#include "cuda_ipc.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <list>
#include <map>
#include <string>
#include <vector>

#include "capture_mode.h"
#include "gpu_timing.h"
#include "log.h"
#include "memkind.h"

namespace weft {

namespace {

using PointerGetAttributesFn = CUresult (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);
using PointerSetAttributeFn = CUresult (*)(const void*, CUpointer_attribute, CUdeviceptr);

struct Mapping {
  int peer;
  uint64_t buffer_id;
  char* base;
  bool kernels = false;  // kernels on any stream may use it (cuda_ipc_map)
  int pins = 0;          // registrations holding it (cuda_ipc_pin): never evicted while > 0
  uint64_t peer_start = 0, peer_bytes = 0;  // the allocation's range in the peer
};

// A sender's recent allocations and their handles: getting a handle costs a driver call.
struct Exported {
  uint64_t base = 0, buffer_id = 0;
  cudaIpcMemHandle_t handle{};
};

struct IpcState {
  bool enabled = true, resolved = false, usable = false;
  std::string why;
  PointerGetAttributesFn get_attributes = nullptr;
  PointerSetAttributeFn set_attribute = nullptr;
  size_t capacity = 64;
  void (*release_hook)() = nullptr;  // cuda_ipc_set_release_hook
  std::list<Mapping> lru;  // most recently used first
  std::map<std::pair<int, uint64_t>, std::list<Mapping>::iterator> index;
  IpcCacheStats stats;
  Exported exported[16];
  size_t next_export = 0;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> spare_events;
};

IpcState& state() {
  static IpcState* s = new IpcState();  // never destroyed: mappings are closed at finalize
  return *s;
}

Status cuda_fail(const char* what, cudaError_t err) {
  std::string msg = std::string(what) + ": " + cudaGetErrorString(err);
  (void)cudaGetLastError();
  WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::internal;
}

// The driver function `name` (CUDA 12 ABI), or null with why set.
void* driver_entry(const char* name, std::string* why) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn) {
    (void)cudaGetLastError();
    *why = std::string("the driver does not offer ") + name;
    return nullptr;
  }
  return fn;
}

void resolve(IpcState& s) {
  if (s.resolved) return;
  s.resolved = true;
  if (!s.enabled) {
    s.why = "turned off by WEFT_CUDA_IPC";
    return;
  }
  if (!cuda_state().usable) {
    s.why = cuda_state().reason.empty() ? "CUDA is not usable" : cuda_state().reason;
    return;
  }
  s.get_attributes = reinterpret_cast<PointerGetAttributesFn>(driver_entry("cuPointerGetAttributes", &s.why));
  if (!s.get_attributes) return;
  s.set_attribute = reinterpret_cast<PointerSetAttributeFn>(driver_entry("cuPointerSetAttribute", &s.why));
  if (!s.set_attribute) return;
  // A blocking stream (not cudaStreamNonBlocking): its copies run after what the program issued
  // on the legacy default stream, such as a cudaMemset of the receive buffer; a persistent
  // receive into a buffer just cleared that way was overwritten by the late memset on one H200
  // without MPS.
  if (cudaStreamCreateWithFlags(&s.stream, cudaStreamDefault) != cudaSuccess) {
    (void)cudaGetLastError();
    s.why = "could not create a copy stream";
    return;
  }
  s.usable = true;
}

bool close_mapping(const Mapping& m) {
  const cudaError_t err = cudaIpcCloseMemHandle(m.base);
  if (err == cudaSuccess) return true;
  (void)cudaGetLastError();
  WEFT_WARN(Subsys::gpu, "closing the CUDA IPC mapping of rank %d's buffer %llu failed: %s", m.peer,
            static_cast<unsigned long long>(m.buffer_id), cudaGetErrorString(err));
  return false;
}

// Closes mappings: with peer < 0 the least recently used ones until fewer than `limit` remain,
// else every mapping of rank `peer`. A copy still queued may read through a mapping about to be
// closed; so may a kernel on any stream, if kernels used it: wait for them first.
// wait false: the caller knows nothing still reads them.
void close_listed(IpcState& s, const std::vector<std::list<Mapping>::iterator>& doomed, bool wait = true);

void close_mappings(IpcState& s, size_t limit, int peer) {
  std::vector<std::list<Mapping>::iterator> doomed;
  if (peer < 0) {
    for (auto it = s.lru.end(); it != s.lru.begin() && s.lru.size() - doomed.size() >= limit;)
      if ((--it)->pins == 0) doomed.push_back(it);
  } else {
    for (auto it = s.lru.begin(); it != s.lru.end(); ++it)
      if (it->peer == peer && it->pins == 0) doomed.push_back(it);
  }
  close_listed(s, doomed);
}

void close_listed(IpcState& s, const std::vector<std::list<Mapping>::iterator>& doomed, bool wait) {
  if (doomed.empty()) return;
  const bool kernels = std::any_of(doomed.begin(), doomed.end(), [](const auto& it) { return it->kernels; });
  if (wait && kernels) (void)cudaDeviceSynchronize();
  else if (wait) (void)cudaStreamSynchronize(s.stream);
  for (const auto& it : doomed) {
    // One still open stays in the cache: forgotten, it would block that memory for good.
    if (!close_mapping(*it)) continue;
    s.index.erase(std::make_pair(it->peer, it->buffer_id));
    s.lru.erase(it);
    ++s.stats.evictions;
  }
}

// This process's mappings of `peer`'s memory that overlap the peer's allocation [start, start +
// bytes), pinned or not.
std::vector<std::list<Mapping>::iterator> overlapping(IpcState& s, int peer, uint64_t start, uint64_t bytes) {
  std::vector<std::list<Mapping>::iterator> found;
  for (auto it = s.lru.begin(); it != s.lru.end(); ++it)
    if (it->peer == peer && it->peer_start < start + bytes && start < it->peer_start + it->peer_bytes)
      found.push_back(it);
  return found;
}

// remap_stale: the caller holds no unpinned mapping of this peer that it still needs (every
// mapping it needs is pinned), so stale ones may be closed even for kernels. may_close false
// (during a stream capture, which a device synchronisation invalidates): nothing is evicted
// and nothing waits; only mappings of memory the peer freed and those the release hook unpins
// are closed. lone: the caller
// holds no other mapping handed out for the same operation, so mappings the release hook
// unpins may be closed.
Status map_peer_buffer(IpcState& s, int peer, const IpcDescriptor& d, char** base, bool for_kernels,
                       bool remap_stale = false, bool may_close = true, bool lone = false) {
  const auto key = std::make_pair(peer, d.buffer_id);
  if (auto it = s.index.find(key); it != s.index.end()) {
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    ++s.stats.hits;
    it->second->kernels = it->second->kernels || for_kernels;
    *base = it->second->base;
    return Status::ok;
  }
  // The range comes from the peer: it must hold the buffer and not wrap (it only ever selects
  // that peer's own mappings, below).
  if (d.alloc_bytes == 0 || d.offset >= d.alloc_bytes || d.alloc_start > UINT64_MAX - d.alloc_bytes) {
    const std::string msg = "rank " + std::to_string(peer) + " described a device buffer at offset " +
                            std::to_string(d.offset) + " of an allocation of " + std::to_string(d.alloc_bytes) +
                            " bytes: an invalid CUDA IPC descriptor";
    WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::invalid_arg;
  }
  if (may_close) close_mappings(s, s.capacity, -1);
  cudaIpcMemHandle_t handle;
  static_assert(sizeof(handle) == sizeof(d.handle));
  memcpy(&handle, d.handle, sizeof(handle));
  void* p = nullptr;
  cudaError_t err = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
  bool remapped = false;
  if (err == cudaErrorAlreadyMapped) {
    // The driver maps an allocation into a process once. Mappings of this peer whose range
    // overlaps the new allocation's are of memory the peer freed: nothing reads them any more
    // (the peer freed that memory after its calls completed, which waited for this rank's
    // reads), pinned or not. Close them and retry: during a capture too, with no wait (which
    // would invalidate it) and the capture mode relaxed for the while.
    (void)cudaGetLastError();
    const std::vector<std::list<Mapping>::iterator> freed = overlapping(s, peer, d.alloc_start, d.alloc_bytes);
    if (!freed.empty()) {
      WEFT_INFO(Subsys::gpu, "closing %zu CUDA IPC mappings of rank %d's memory that it freed (its buffer %llu "
                "reuses that memory)", freed.size(), peer, static_cast<unsigned long long>(d.buffer_id));
      const RelaxedCaptureScope relaxed(!may_close);
      ++s.stats.remaps;
      remapped = true;
      close_listed(s, freed, may_close);
      err = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
    } else {
      err = cudaErrorAlreadyMapped;
    }
  }
  if (err == cudaErrorAlreadyMapped && may_close && (!for_kernels || remap_stale)) {
    // The driver maps an allocation into a process once: a mapping still open here covers the
    // same memory, under an older buffer id (the peer freed a buffer and its memory came back
    // in this one, or small allocations share memory). Close the peer's mappings and retry.
    // Not for kernels' mappings unless remap_stale: a caller mapping several buffers for one
    // kernel (gpu_direct) holds the earlier ones unpinned; it falls back instead. A
    // registration pins each mapping as it goes, so it may remap.
    (void)cudaGetLastError();
    if (!remapped) ++s.stats.remaps;
    close_mappings(s, 0, peer);
    err = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
  }
  if (err == cudaErrorAlreadyMapped && may_close && (!for_kernels || remap_stale || lone) && s.release_hook) {
    // Perhaps pinned by a registration whose memory was freed: let its owner drop it, then
    // close only the mappings that it unpinned (after the device: work queued since may read
    // them) and retry. Not during a capture, which that wait would invalidate.
    (void)cudaGetLastError();
    std::vector<std::list<Mapping>::iterator> pinned, released;
    for (auto it = s.lru.begin(); it != s.lru.end(); ++it)
      if (it->peer == peer && it->pins > 0) pinned.push_back(it);
    s.release_hook();
    for (const auto& it : pinned)
      if (it->pins == 0) released.push_back(it);
    if (!released.empty()) {
      close_listed(s, released);
      err = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
    }
  }
  if (err == cudaErrorAlreadyMapped && !may_close) {
    (void)cudaGetLastError();
    const std::string msg = "rank " + std::to_string(peer) + "'s device buffer lies under a mapping that is not "
                            "of memory it freed, which is not closed while a stream is being captured";
    WEFT_INFO(Subsys::gpu, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::transport;
  }
  if (err != cudaSuccess) {
    std::string msg = "cudaIpcOpenMemHandle of rank " + std::to_string(peer) + "'s device buffer failed: " +
                      cudaGetErrorString(err) + " (WEFT_CUDA_IPC=off stages device buffers through host memory instead)";
    (void)cudaGetLastError();
    WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::transport;
  }
  ++s.stats.opens;
  s.lru.push_front(Mapping{peer, d.buffer_id, static_cast<char*>(p), for_kernels, 0, d.alloc_start, d.alloc_bytes});
  s.index[key] = s.lru.begin();
  *base = static_cast<char*>(p);
  return Status::ok;
}

}  // namespace

void cuda_ipc_configure(bool enabled, size_t capacity) {
  IpcState& s = state();
  s.enabled = enabled;
  s.capacity = capacity ? capacity : 1;
}

bool cuda_ipc_usable(const char** why) {
  IpcState& s = state();
  resolve(s);
  if (why) *why = s.why.c_str();
  return s.usable;
}

Status cuda_ipc_describe(const void* ptr, IpcDescriptor* out) {
  IpcState& s = state();
  resolve(s);
  if (!s.usable) {
    set_error_detail("CUDA IPC is not usable: " + s.why);
    return Status::not_supported;
  }
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUdeviceptr start = 0;
  unsigned long long buffer_id = 0;
  int device = -1;
  size_t size = 0;
  void* values[] = {&start, &buffer_id, &device, &size};
  const CUresult r = s.get_attributes(4, attrs, values, reinterpret_cast<CUdeviceptr>(ptr));
  if (r != CUDA_SUCCESS || start == 0) {
    set_error_detail("cuPointerGetAttributes failed on a device buffer (error " + std::to_string(int(r)) + ")");
    return Status::internal;
  }
  *out = IpcDescriptor{};
  out->offset = reinterpret_cast<uint64_t>(ptr) - uint64_t(start);
  out->buffer_id = buffer_id;
  out->device = device;
  out->alloc_start = uint64_t(start);
  out->alloc_bytes = uint64_t(size);
  for (const Exported& e : s.exported) {
    if (e.base == uint64_t(start) && e.buffer_id == buffer_id) {
      memcpy(out->handle, &e.handle, sizeof(out->handle));
      return Status::ok;
    }
  }
  // A cudaMemcpy from pageable memory may return before its DMA lands; a peer reading the
  // buffer right after the send would see old data. Synchronous memory operations on an
  // exported allocation must complete before they return.
  const unsigned sync_memops = 1;
  if (const CUresult set = s.set_attribute(&sync_memops, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, start); set != CUDA_SUCCESS) {
    set_error_detail("setting CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on a device buffer failed (error " +
                     std::to_string(int(set)) + ")");
    return Status::internal;
  }
  Exported& e = s.exported[s.next_export++ % std::size(s.exported)];
  const cudaError_t err = cudaIpcGetMemHandle(&e.handle, reinterpret_cast<void*>(start));
  if (err != cudaSuccess) {
    e = Exported{};
    // Memory from stream-ordered pools or the virtual memory API has no legacy IPC handle.
    std::string msg = std::string("cudaIpcGetMemHandle failed: ") + cudaGetErrorString(err);
    (void)cudaGetLastError();
    set_error_detail(msg);
    return Status::not_supported;
  }
  e.base = uint64_t(start);
  e.buffer_id = buffer_id;
  memcpy(out->handle, &e.handle, sizeof(out->handle));
  return Status::ok;
}

// The state, once CUDA IPC is known to be usable (else Status::not_supported, with the reason).
static Status usable_state(IpcState** out) {
  IpcState& s = state();
  resolve(s);
  if (!s.usable) {
    set_error_detail("CUDA IPC is not usable: " + s.why);
    return Status::not_supported;
  }
  *out = &s;
  return Status::ok;
}

Status cuda_ipc_copy_start(int peer, const IpcDescriptor& d, void* dst, size_t bytes) {
  IpcState* sp = nullptr;
  WEFT_TRY(usable_state(&sp));
  IpcState& s = *sp;
  char* base = nullptr;
  WEFT_TRY(map_peer_buffer(s, peer, d, &base, false));
  gpu_timing::Span* span = bytes ? gpu_timing::begin(s.stream, "ipc_copy", bytes, 0) : nullptr;
  const cudaError_t err = bytes ? cudaMemcpyAsync(dst, base + d.offset, bytes, cudaMemcpyDefault, s.stream) : cudaSuccess;
  gpu_timing::end(span, s.stream);
  if (err != cudaSuccess) return cuda_fail("copy from a peer's device buffer (CUDA IPC)", err);
  return Status::ok;
}

Status cuda_ipc_map(int peer, const IpcDescriptor& d, void** ptr, bool capturing, bool lone) {
  IpcState* s = nullptr;
  WEFT_TRY(usable_state(&s));
  char* base = nullptr;
  WEFT_TRY(map_peer_buffer(*s, peer, d, &base, true, false, !capturing, lone));
  *ptr = base + d.offset;
  return Status::ok;
}

// The allocation's bytes from ptr to its end, and its buffer id.
static Status allocation_after(IpcState& s, const void* ptr, uint64_t* bytes_after, uint64_t* buffer_id) {
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 CU_POINTER_ATTRIBUTE_BUFFER_ID};
  CUdeviceptr start = 0;
  size_t size = 0;
  unsigned long long id = 0;
  void* values[] = {&start, &size, &id};
  const CUresult r = s.get_attributes(3, attrs, values, reinterpret_cast<CUdeviceptr>(ptr));
  const auto at = reinterpret_cast<uint64_t>(ptr);
  if (r != CUDA_SUCCESS || start == 0 || at < uint64_t(start) || at - uint64_t(start) > size) {
    set_error_detail("not a CUDA device allocation (cuPointerGetAttributes: error " + std::to_string(int(r)) + ")");
    return Status::invalid_arg;
  }
  *bytes_after = uint64_t(size) - (at - uint64_t(start));
  if (buffer_id) *buffer_id = id;
  return Status::ok;
}

Status cuda_ipc_own_range(const void* ptr, uint64_t* bytes_after, uint64_t* buffer_id) {
  IpcState* s = nullptr;
  WEFT_TRY(usable_state(&s));
  return allocation_after(*s, ptr, bytes_after, buffer_id);
}

void cuda_ipc_own_allocation(const void* ptr, uint64_t* start, uint64_t* bytes) {
  *start = *bytes = 0;
  IpcState& s = state();
  resolve(s);
  if (!s.usable) return;  // no mappings here to be in the way
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUdeviceptr at = 0;
  size_t size = 0;
  void* values[] = {&at, &size};
  if (s.get_attributes(2, attrs, values, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS || at == 0) return;
  *start = uint64_t(at);
  *bytes = uint64_t(size);
}

size_t cuda_ipc_close_freed(int peer, uint64_t start, uint64_t bytes) {
  IpcState& s = state();
  if (bytes == 0 || start > UINT64_MAX - bytes) return 0;
  const std::vector<std::list<Mapping>::iterator> freed = overlapping(s, peer, start, bytes);
  if (freed.empty()) return 0;
  WEFT_INFO(Subsys::gpu, "closing %zu CUDA IPC mappings of rank %d's memory that it freed (its GPU workspace reuses "
            "that memory)", freed.size(), peer);
  ++s.stats.remaps;
  const size_t before = s.lru.size();
  close_listed(s, freed);
  return before - s.lru.size();
}

Status cuda_ipc_pin(int peer, const IpcDescriptor& d, void** ptr, uint64_t* bytes_after, bool may_close) {
  IpcState* s = nullptr;
  WEFT_TRY(usable_state(&s));
  char* base = nullptr;
  WEFT_TRY(map_peer_buffer(*s, peer, d, &base, true, true, may_close));
  WEFT_TRY(allocation_after(*s, base + d.offset, bytes_after, nullptr));
  ++s->index[std::make_pair(peer, d.buffer_id)]->pins;
  *ptr = base + d.offset;
  return Status::ok;
}

void cuda_ipc_set_release_hook(void (*hook)()) { state().release_hook = hook; }

void cuda_ipc_unpin(int peer, uint64_t buffer_id) {
  IpcState& s = state();
  if (auto it = s.index.find(std::make_pair(peer, buffer_id)); it != s.index.end() && it->second->pins > 0)
    --it->second->pins;
}

Status cuda_ipc_mark(void** token) {
  IpcState& s = state();
  cudaEvent_t done = nullptr;
  if (!s.spare_events.empty()) {
    done = s.spare_events.back();
    s.spare_events.pop_back();
  } else if (cudaError_t err = cudaEventCreateWithFlags(&done, cudaEventDisableTiming); err != cudaSuccess) {
    (void)cudaStreamSynchronize(s.stream);  // the caller then treats the copies as done
    return cuda_fail("creating a copy event", err);
  }
  if (cudaError_t err = cudaEventRecord(done, s.stream); err != cudaSuccess) {
    s.spare_events.push_back(done);
    (void)cudaStreamSynchronize(s.stream);
    return cuda_fail("recording a copy event", err);
  }
  *token = done;
  return Status::ok;
}

bool cuda_ipc_copy_test(void* token, Status* result) {
  IpcState& s = state();
  auto done = static_cast<cudaEvent_t>(token);
  const cudaError_t err = cudaEventQuery(done);
  if (err == cudaErrorNotReady) return false;
  *result = err == cudaSuccess ? Status::ok : cuda_fail("copy from a peer's device buffer (CUDA IPC)", err);
  s.spare_events.push_back(done);
  return true;
}

IpcCacheStats cuda_ipc_stats() {
  IpcState& s = state();
  IpcCacheStats out = s.stats;
  out.live = s.lru.size();
  out.capacity = s.capacity;
  return out;
}

void cuda_ipc_release_all() {
  IpcState& s = state();
  if (s.stream) (void)cudaStreamSynchronize(s.stream);
  for (const Mapping& m : s.lru) close_mapping(m);
  s.lru.clear();
  s.index.clear();
  for (cudaEvent_t e : s.spare_events) (void)cudaEventDestroy(e);
  s.spare_events.clear();
  if (s.stream) {
    (void)cudaStreamDestroy(s.stream);
    s.stream = nullptr;
  }
  s.resolved = false;
  s.usable = false;
}

}  // namespace weft
