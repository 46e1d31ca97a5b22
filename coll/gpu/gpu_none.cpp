// Build without CUDA: no GPU workspace, and the GPU algorithms support no call. Their names
// stay registered, so WEFT_COLL_TUNE rules read alike in every build.
#include "gpu_coll.h"

namespace weft::coll {

namespace {
bool never(const CollArgs&, const CollContext&) { return false; }
double none(const CollArgs&, const CollContext&, const CostModel&) { return 0; }
std::shared_ptr<Schedule> nothing(const CollArgs&, const CollContext&) { return nullptr; }
}  // namespace

namespace gpu {

#define WEFT_DEFINE_GPU_ALGORITHM(var, name, coll) \
  extern const Algorithm var{name, Collective::coll, never, none, nothing};
WEFT_GPU_ALGORITHMS(WEFT_DEFINE_GPU_ALGORITHM)
#undef WEFT_DEFINE_GPU_ALGORITHM

bool compiled() { return false; }

GpuWorkspace* workspace(const CollContext&, std::string* why) {
  if (why) *why = "this build has no CUDA support";
  return nullptr;
}
GpuWorkspace* existing_workspace(const Comm&) { return nullptr; }
bool kernels_allowed(const GpuWorkspace&) { return false; }
const Settings& settings_of(const GpuWorkspace&) {
  static const Settings defaults;
  return defaults;
}
void* internal_stream(const GpuWorkspace&) { return nullptr; }
bool supports(ReduceOp, BasicType) { return false; }
bool block_form_supported(const CollArgs&, const Comm&) { return false; }

namespace {
Status no_cuda() {
  set_error_detail("GPU collectives need a build with CUDA");
  return Status::not_supported;
}
}  // namespace

Status register_buffer(const CollContext&, const void*, size_t, uint64_t* token) {
  *token = 0;
  return no_cuda();
}
Status deregister_buffer(const Comm&, uint64_t) {
  set_error_detail("not a buffer registration of this communicator (weft was built without CUDA)");
  return Status::invalid_arg;
}
int registrations(const Comm&) { return 0; }
RegistrationStats registration_stats() { return {}; }
bool allreduce_runs_fused(const GpuWorkspace&, AllreduceAlgo, size_t) { return false; }
bool scatter_runs_fused(const GpuWorkspace&, size_t) { return false; }
void register_call_buffers(const CollContext&, const void*, const void*, size_t, bool) {}
std::shared_ptr<const void> register_for_call(const CollContext&, std::initializer_list<const void*>, size_t) {
  return nullptr;
}
Status allreduce_enqueue(GpuWorkspace&, AllreduceAlgo, const void*, void*, size_t, BasicType, ReduceOp, void*) {
  return no_cuda();
}
Status bcast_enqueue(GpuWorkspace&, void*, size_t, int, void*) { return no_cuda(); }
Status p2p_ready_enqueue(GpuWorkspace&, int, uint64_t, void*) { return no_cuda(); }
Status p2p_wait_done_enqueue(GpuWorkspace&, int, uint64_t, void*) { return no_cuda(); }
Status p2p_recv_enqueue(GpuWorkspace&, int, uint64_t, const void*, void*, size_t, void*) { return no_cuda(); }
Status p2p_graph_ready_enqueue(GpuWorkspace&, int, void*) { return no_cuda(); }
Status p2p_graph_wait_done_enqueue(GpuWorkspace&, int, uint64_t, void*) { return no_cuda(); }
Status p2p_graph_recv_enqueue(GpuWorkspace&, int, const void*, void*, size_t, void*) { return no_cuda(); }
Status allgather_enqueue(GpuWorkspace&, const void*, void*, size_t, void*) { return no_cuda(); }
Status reduce_scatter_block_enqueue(GpuWorkspace&, const void*, void*, size_t, BasicType, ReduceOp, void*) {
  return no_cuda();
}
Status reduce_enqueue(GpuWorkspace&, const void*, void*, size_t, BasicType, ReduceOp, int, void*) { return no_cuda(); }

void release_all() {}
void stop_kernels(const Comm&, Status, const std::string&) {}

}  // namespace gpu

}  // namespace weft::coll
