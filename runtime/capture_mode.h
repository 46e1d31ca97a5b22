// While `on` (the caller's stream is being captured into a CUDA graph), this thread's stream
// capture mode is relaxed for the scope: weft's own work beside the capture (IPC opens and
// closes, registration tables uploaded and waited for on its own streams) is refused under
// the global mode, the default of cudaStreamBeginCapture and of PyTorch's graphs, and that
// refusal invalidates the user's capture. weft never waits on the stream being captured.
// Without CUDA it does nothing.
#pragma once

namespace weft {

class RelaxedCaptureScope {
 public:
  explicit RelaxedCaptureScope(bool on);
  ~RelaxedCaptureScope();
  RelaxedCaptureScope(const RelaxedCaptureScope&) = delete;
  RelaxedCaptureScope& operator=(const RelaxedCaptureScope&) = delete;

 private:
  int saved_ = -1;  // the thread's mode before, once exchanged
};

}  // namespace weft
