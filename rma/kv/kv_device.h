// Device memory for KV agents (kv_agent.h): detection, CUDA IPC descriptors of registered
// device regions, mapping a peer's region on the same host, and asynchronous copies into or
// out of it. A build without CUDA refuses device regions with WEFT_KV_ERR_NOT_SUPPORTED.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kv_error.h"

namespace weft::kv {

bool is_device_memory(const void* p);
// The CUDA IPC descriptor of the device buffer at base (kIpcDescriptorBytes bytes).
int device_describe(void* base, std::vector<unsigned char>* ipc);
// Maps a peer's device region into this process; *ptr is its first byte.
int device_map(uint32_t peer, const std::vector<unsigned char>& ipc, void** ptr);
void device_unmap(void* ptr);
struct DeviceCopy {
  void* dst;
  const void* src;
  uint64_t bytes;
};
// The device copies of one request, prepared once: when every buffer is device memory (local,
// or a peer's mapped through IPC) they are cut into chunks kept on the device and one kernel
// moves them all; otherwise each is a cudaMemcpyAsync.
int device_batch_create(const std::vector<DeviceCopy>& copies, void** batch);
// Queues the batch's copies; device_mark names every copy queued so far, device_test reports
// them done (releasing the token) and device_release waits for them and releases the token.
int device_batch_start(void* batch);
void device_batch_free(void* batch);
int device_mark(void** token);
bool device_test(void* token, int* status);
// Queues on the copy stream, after every copy queued so far, an add of 1 to the 64-bit word
// (device memory, mapped here).
int device_signal_add(void* word);
// An agent's stop word for its device waits (host memory mapped for the device), made on first
// use; device_stop_raise ends the waits enqueued so far; device_stop_free raises it, waits for
// the device and frees it.
struct DeviceStop {
  unsigned int* host = nullptr;
  const unsigned int* device = nullptr;
};
int device_wait_enqueue(DeviceStop* stop, const void* word, uint64_t value, void* stream);
void device_stop_raise(DeviceStop* stop);
void device_stop_free(DeviceStop* stop);
void device_release(void* token);

}  // namespace weft::kv
