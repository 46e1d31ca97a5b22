// Build without CUDA: no IPC; device buffers cannot be told apart from host ones here.
#include "cuda_ipc.h"

namespace weft {

void cuda_ipc_configure(bool, size_t) {}

bool cuda_ipc_usable(const char** why) {
  if (why) *why = "weft was built without CUDA";
  return false;
}

Status cuda_ipc_describe(const void*, IpcDescriptor*) {
  set_error_detail("CUDA IPC is not supported: weft was built without CUDA");
  return Status::not_supported;
}

Status cuda_ipc_copy_start(int, const IpcDescriptor&, void*, size_t) {
  set_error_detail("CUDA IPC is not supported: weft was built without CUDA");
  return Status::not_supported;
}

Status cuda_ipc_map(int, const IpcDescriptor&, void**, bool, bool) {
  set_error_detail("CUDA IPC is not supported: weft was built without CUDA");
  return Status::not_supported;
}

Status cuda_ipc_pin(int, const IpcDescriptor&, void**, uint64_t*, bool) {
  set_error_detail("CUDA IPC is not supported: weft was built without CUDA");
  return Status::not_supported;
}

void cuda_ipc_unpin(int, uint64_t) {}
void cuda_ipc_set_release_hook(void (*)()) {}

void cuda_ipc_own_allocation(const void*, uint64_t* start, uint64_t* bytes) { *start = *bytes = 0; }

size_t cuda_ipc_close_freed(int, uint64_t, uint64_t) { return 0; }

Status cuda_ipc_own_range(const void*, uint64_t*, uint64_t*) {
  set_error_detail("CUDA IPC is not supported: weft was built without CUDA");
  return Status::not_supported;
}

Status cuda_ipc_mark(void**) {
  set_error_detail("CUDA IPC is not supported: weft was built without CUDA");
  return Status::not_supported;
}

bool cuda_ipc_copy_test(void*, Status* result) {
  *result = Status::not_supported;
  return true;
}

IpcCacheStats cuda_ipc_stats() { return {}; }
void cuda_ipc_release_all() {}

}  // namespace weft
