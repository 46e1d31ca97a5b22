// CUDA build: the staging sets of device_staging.h. A set is two pinned chunks (cudaHostAlloc),
// a stream and one event per chunk; the pipeline's copies are cudaMemcpyAsync on that stream,
// each followed by its chunk's event.
#include <cuda_runtime_api.h>

#include <string>

#include "device_staging_backend.h"
#include "log.h"
#include "memkind.h"

namespace weft {

namespace {

class CudaStagingSet final : public StagingSet {
 public:
  ~CudaStagingSet() override {
    for (cudaEvent_t e : events_)
      if (e) (void)cudaEventDestroy(e);
    if (stream_) (void)cudaStreamDestroy(stream_);
    for (void* c : chunk)
      if (c) (void)cudaFreeHost(c);
    (void)cudaGetLastError();
  }

  Status init(size_t chunk_bytes) {
    cudaError_t e = cudaSuccess;
    for (void*& c : chunk) {
      void* p = nullptr;
      if (e == cudaSuccess) e = cudaHostAlloc(&p, chunk_bytes, cudaHostAllocPortable);
      if (e == cudaSuccess) c = p;
    }
    if (e != cudaSuccess) {
      return refuse("cannot allocate two pinned staging chunks of " + std::to_string(chunk_bytes) +
                        " bytes (WEFT_CUDA_STAGING_CHUNK): " + cudaGetErrorString(e),
                    Status::no_memory);
    }
    // A blocking stream: its copies wait for work the program queued on the legacy default
    // stream, as the cudaMemcpy of whole-message staging does.
    e = cudaStreamCreate(&stream_);
    for (cudaEvent_t& ev : events_)
      if (e == cudaSuccess) e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess)
      return refuse(std::string("cannot create the stream and events of pipelined device staging: ") +
                        cudaGetErrorString(e),
                    Status::internal);
    return Status::ok;
  }

  Status start_to_host(int slot, void* host, const void* dev, size_t n) override {
    WEFT_TRY(cuda(cudaMemcpyAsync(host, dev, n, cudaMemcpyDefault, stream_), "cudaMemcpyAsync to a pinned chunk", n));
    return cuda(cudaEventRecord(events_[slot], stream_), "cudaEventRecord", n);
  }
  Status start_to_device(int slot, void* dev, const void* host, size_t n) override {
    WEFT_TRY(cuda(cudaMemcpyAsync(dev, host, n, cudaMemcpyDefault, stream_), "cudaMemcpyAsync from a pinned chunk", n));
    return cuda(cudaEventRecord(events_[slot], stream_), "cudaEventRecord", n);
  }
  Status wait(int slot) override {
    return cuda(cudaEventSynchronize(events_[slot]), "cudaEventSynchronize", chunk_bytes);
  }
  Status copy_now(void* dst, const void* from, size_t n) override {
    WEFT_TRY(cuda(cudaMemcpyAsync(dst, from, n, cudaMemcpyDefault, stream_), "cudaMemcpyAsync (out of sequence)", n));
    return cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", n);
  }

 private:
  Status refuse(const std::string& msg, Status s) {
    (void)cudaGetLastError();
    WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
    set_error_detail(msg);
    return s;
  }
  // A failed call inside a UCX callback: logged once per set, kept for the request's error.
  Status cuda(cudaError_t e, const char* what, size_t n) {
    if (e == cudaSuccess) [[likely]] return Status::ok;
    (void)cudaGetLastError();
    if (error_detail.empty()) {
      error_detail = std::string("pipelined device staging: ") + what + " (" + std::to_string(n) +
                     " bytes) failed: " + cudaGetErrorString(e);
      WEFT_ERROR(Subsys::gpu, "%s", error_detail.c_str());
    }
    return Status::internal;
  }

  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[2] = {nullptr, nullptr};
};

bool cuda_usable(const char** why) {
  if (cuda_state().usable) return true;
  if (why) *why = "CUDA is not usable";
  return false;
}

int cuda_current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = 0;
  }
  return device;
}

Status cuda_make(size_t chunk_bytes, int, std::unique_ptr<StagingSet>* out) {
  auto set = std::make_unique<CudaStagingSet>();
  WEFT_TRY(set->init(chunk_bytes));
  *out = std::move(set);
  return Status::ok;
}

const StagingBackend kCuda{cuda_usable, cuda_current_device, cuda_make};

}  // namespace

const StagingBackend* cuda_staging_backend() { return &kCuda; }

}  // namespace weft
