// Device memory for KV agents in a build without CUDA: device buffers are recognised (when the
// CUDA driver is loaded) and refused.
#include "kv_device.h"

#include "runtime/memkind.h"
#include "weft/kv.h"

namespace weft::kv {

bool is_device_memory(const void* p) {
  return memkind_device_possible() && memkind_query(p).kind == MemKind::unsupported_device;
}

int device_describe(void*, std::vector<unsigned char>*) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "register: device memory is not supported in a build without CUDA");
}

int device_map(uint32_t, const std::vector<unsigned char>&, void**) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "device memory is not supported in a build without CUDA");
}

void device_unmap(void*) {}

int device_batch_create(const std::vector<DeviceCopy>&, void**) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "device memory is not supported in a build without CUDA");
}

int device_batch_start(void*) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "device memory is not supported in a build without CUDA");
}

void device_batch_free(void*) {}

int device_mark(void**) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "device memory is not supported in a build without CUDA");
}

bool device_test(void*, int* status) {
  *status = WEFT_KV_ERR_NOT_SUPPORTED;
  return true;
}

void device_release(void*) {}

int device_signal_add(void*) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "device signals are not supported in a build without CUDA");
}

int device_wait_enqueue(DeviceStop*, const void*, uint64_t, void*) {
  return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "device signals are not supported in a build without CUDA");
}

void device_stop_raise(DeviceStop*) {}
void device_stop_free(DeviceStop*) {}

}  // namespace weft::kv
