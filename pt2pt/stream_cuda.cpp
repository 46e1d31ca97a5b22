// Calls on a user's CUDA stream (stream.h), CUDA builds.
#include <cuda_runtime_api.h>

#include "runtime/log.h"
#include "stream.h"

namespace weft {

namespace {

cudaStream_t as_cuda(void* s) { return static_cast<cudaStream_t>(s); }

Status fail(Status kind, const std::string& msg) {
  WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}

// A failed CUDA call on the user's stream (MPI_ERR_OTHER at the C boundary).
Status cuda_fail(const char* what, cudaError_t err) {
  (void)cudaGetLastError();
  return fail(Status::transport, std::string(what) + " on the communicator's stream: " + cudaGetErrorString(err));
}

}  // namespace

bool stream_valid(void* s, std::string* why) {
  const cudaError_t err = cudaStreamQuery(as_cuda(s));
  (void)cudaGetLastError();
  if (err == cudaSuccess || err == cudaErrorNotReady) return true;
  *why = std::string("cudaStreamQuery: ") + cudaGetErrorString(err);
  return false;
}

Status stream_host_fallback(void* s, const char* fn, const char* what, const std::string& why,
                            bool require_fast_path) {
  const std::string reason = why.empty() ? "" : " (" + why + ")";
  if (require_fast_path)
    return fail(Status::not_supported, "not stream-ordered yet" + reason + ": it would synchronise the stream and " +
                                           what + " from the host, and WEFT_REQUIRE_FAST_PATH forbids slower paths");
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = cudaStreamIsCapturing(as_cuda(s), &capture);
  if (err != cudaSuccess) return cuda_fail("cudaStreamIsCapturing", err);
  if (capture != cudaStreamCaptureStatusNone)
    return fail(Status::not_supported, "cannot be captured in a CUDA graph: it is not stream-ordered yet" + reason +
                                           " and would synchronise the stream");
  if (log_first_time(std::string("stream-fallback:") + fn + why))
    WEFT_WARN(Subsys::gpu, "%s is not stream-ordered yet%s: it synchronises the stream and %s from the host", fn,
              reason.c_str(), what);
  err = cudaStreamSynchronize(as_cuda(s));
  return err == cudaSuccess ? Status::ok : cuda_fail("cudaStreamSynchronize", err);
}

bool stream_capturing(void* s) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(as_cuda(s), &capture);
  if (err != cudaSuccess) {
    WEFT_WARN(Subsys::gpu, "cudaStreamIsCapturing: %s", cudaGetErrorString(err));
    (void)cudaGetLastError();
    return false;
  }
  return capture != cudaStreamCaptureStatusNone;
}

Status stream_copy(void* s, void* dst, const void* src, size_t bytes) {
  if (dst == src || bytes == 0) return Status::ok;
  const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_cuda(s));
  return err == cudaSuccess ? Status::ok : cuda_fail("cudaMemcpyAsync", err);
}

void stream_drain(const UserStream& s) {
  if (!s.enqueued) return;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(as_cuda(s.cuda), &capture) == cudaSuccess && capture == cudaStreamCaptureStatusNone) {
    const cudaError_t err = cudaStreamSynchronize(as_cuda(s.cuda));
    if (err != cudaSuccess)
      WEFT_WARN(Subsys::gpu, "freeing a stream communicator: cudaStreamSynchronize: %s", cudaGetErrorString(err));
  }
  (void)cudaGetLastError();
}

}  // namespace weft
