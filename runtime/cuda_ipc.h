// CUDA IPC for node-local transfers of device memory: a sender describes its buffer (handle of
// the allocation, offset, the allocation's buffer id), a receiver maps the allocation once and
// copies straight from it. Mappings are kept in a bounded LRU cache keyed by (peer, buffer id):
// a buffer freed and allocated again gets a new id, so a stale mapping is never read. Where
// the driver refuses a peer's allocation as already mapped, the cache closes that peer's
// mappings whose allocation range overlaps it (memory the peer freed) and maps again.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "status.h"

namespace weft {

// What a receiver needs to read a peer's device buffer. Fixed layout: it travels in a
// shared-memory cell.
struct IpcDescriptor {
  uint8_t handle[64];   // cudaIpcMemHandle_t of the allocation that holds the buffer
  uint64_t offset = 0;  // the buffer's offset in that allocation
  uint64_t buffer_id = 0;
  int32_t device = -1;
  uint32_t reserved = 0;
  // The allocation's range in the sender's address space. Two live allocations never overlap,
  // so a receiver's mapping of the same sender whose range overlaps this one under another
  // buffer id is of memory the sender freed.
  uint64_t alloc_start = 0, alloc_bytes = 0;
};
static_assert(sizeof(IpcDescriptor) == 104 && std::is_trivially_copyable_v<IpcDescriptor>,
              "the descriptor's fixed layout (shared-memory cells, KV blobs)");

struct IpcCacheStats {
  uint64_t opens = 0, hits = 0, evictions = 0;
  // Opens (the cache's, or a GPU workspace's) the driver refused as already mapped, retried
  // after closing the peer's mappings in the way.
  uint64_t remaps = 0;
  size_t live = 0, capacity = 0;
};

// Called once at init: enabled=false (WEFT_CUDA_IPC=off) keeps every device transfer staged.
// capacity: mappings kept open per process (least recently used closed first).
void cuda_ipc_configure(bool enabled, size_t capacity);
// Whether CUDA IPC can be used here (CUDA usable, driver entry points found, not turned off);
// *why says why not.
bool cuda_ipc_usable(const char** why = nullptr);

// Sender: describes the device buffer at ptr.
Status cuda_ipc_describe(const void* ptr, IpcDescriptor* out);

// Receiver: starts copying bytes from the peer's buffer to dst (device or host memory) on an
// internal stream, mapping the peer's allocation through the cache. Copies queue behind each
// other without waiting, so a window of messages keeps the copy engines busy.
Status cuda_ipc_copy_start(int peer, const IpcDescriptor& d, void* dst, size_t bytes);
// Maps the peer's buffer for kernels that read or write it in place (GPU collectives): *ptr is
// the buffer in this process, valid until the cache evicts the mapping. Evicting a mapping
// that kernels used first waits for the device to finish its queued work.
// capturing: the caller's stream is being captured into a CUDA graph, so nothing waits and
// nothing is closed but mappings of memory the peer freed (by their allocation range).
// lone: the caller holds no other mapping handed out for the same operation (one receive),
// so the release hook may run (cuda_ipc_set_release_hook).
Status cuda_ipc_map(int peer, const IpcDescriptor& d, void** ptr, bool capturing = false, bool lone = false);
// The same mapping, pinned for a registration (coll/gpu): never evicted until unpinned as often
// as pinned. *bytes_after: the mapped allocation's bytes from *ptr to its end, which bounds
// what the owner may declare. cuda_ipc_unpin of a mapping not pinned does nothing.
// may_close false (while a stream is being captured into a CUDA graph): nothing is evicted and
// nothing waits; only mappings of memory the peer freed are closed; another mapping in the
// driver's way fails the pin.
Status cuda_ipc_pin(int peer, const IpcDescriptor& d, void** ptr, uint64_t* bytes_after, bool may_close = true);
void cuda_ipc_unpin(int peer, uint64_t buffer_id);
// Where the driver refuses a peer's buffer as already mapped and no unpinned mapping of that
// peer could be closed to help, a pinned mapping may lie in the way: the hook (set by coll/gpu)
// drops registrations whose memory this rank freed, unpinning their mappings; the cache closes
// those it unpinned (after the device: work queued since may read them) and maps once more.
// Not during a capture, and not for a caller that holds other mappings of the same operation
// (gpu_direct), whose mappings that could close.
void cuda_ipc_set_release_hook(void (*hook)());
// The allocation that holds this process's device buffer at ptr: its start and bytes, as a
// descriptor carries them (0 and 0 where CUDA IPC is off, when no mapping here is in any way,
// or where ptr is no device allocation).
void cuda_ipc_own_allocation(const void* ptr, uint64_t* start, uint64_t* bytes);
// For a caller that maps a peer's memory outside the cache (the GPU collectives' workspaces)
// and was refused as already mapped: the peer's allocation [start, start + bytes) is live, so
// this process's mappings of that peer's memory overlapping it are of memory the peer freed,
// and nothing reads them any more. Closes them, pinned ones too, after the device; returns
// how many (counted as remaps).
size_t cuda_ipc_close_freed(int peer, uint64_t start, uint64_t bytes);
// This process's device buffer at ptr: its allocation's bytes from ptr on, and its buffer id
// (a new one for every allocation, so a buffer freed and allocated again is told apart).
Status cuda_ipc_own_range(const void* ptr, uint64_t* bytes_after, uint64_t* buffer_id);
// Marks the copies started so far: *token names them until cuda_ipc_copy_test reports them
// done (and recycles the token). One mark may cover many copies.
Status cuda_ipc_mark(void** token);
bool cuda_ipc_copy_test(void* token, Status* result);

// Closes every mapping (at finalize) and returns the counters.
IpcCacheStats cuda_ipc_stats();
void cuda_ipc_release_all();

}  // namespace weft
