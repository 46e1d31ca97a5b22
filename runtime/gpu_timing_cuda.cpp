// gpu_timing.h with the CUDA runtime. Each device's clock is placed on CLOCK_MONOTONIC by an
// anchor: an event recorded on an empty stream of weft's own and waited for, its host time the
// middle of the record and the wait; spans' events are read relative to it and it is renewed
// every second (the two clocks drift apart slowly).
#include "gpu_timing.h"

#include <cuda_runtime_api.h>
#include <time.h>

#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "clock.h"
#include "log.h"
#include "profiler.h"

namespace weft::gpu_timing {

struct Span {
  cudaEvent_t start = nullptr, stop = nullptr;
  int device = 0;
  const char* name = nullptr;
  uint64_t bytes = 0;
  uint32_t comm = 0;
};

namespace {

uint64_t now_ns() { return monotonic_ns(); }

struct Anchor {
  cudaEvent_t event = nullptr;
  cudaStream_t stream = nullptr;
  uint64_t host_ns = 0;
};

// Spans waiting for their work beyond this many are not timed (a warning says so once): a
// consumer that never sees completions must not grow memory without bound.
constexpr size_t kMaxPending = 4096;
constexpr uint64_t kAnchorRenewNs = 1'000'000'000;

struct Timing {
  std::mutex lock;
  std::deque<Span*> pending;  // in the order ended
  std::vector<cudaEvent_t> spare;
  std::map<int, Anchor> anchors;  // by device
  bool warned = false;
};

Timing& timing() {
  static Timing t;
  return t;
}

void warn_once(Timing& t, const char* what, cudaError_t e) {
  if (t.warned) return;
  t.warned = true;
  WEFT_WARN(Subsys::gpu, "GPU events: %s failed (%s); some GPU work is not timed", what, cudaGetErrorString(e));
}

cudaEvent_t take_event(Timing& t) {
  if (!t.spare.empty()) {
    cudaEvent_t e = t.spare.back();
    t.spare.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  if (cudaError_t rc = cudaEventCreate(&e); rc != cudaSuccess) {
    warn_once(t, "cudaEventCreate", rc);
    return nullptr;
  }
  return e;
}

void recycle(Timing& t, Span* s) {
  if (s->start) t.spare.push_back(s->start);
  if (s->stop) t.spare.push_back(s->stop);
  delete s;
}

// The device's anchor, renewed when older than kAnchorRenewNs (or made); false if CUDA refused.
bool anchor_for(Timing& t, int device, Anchor** out) {
  Anchor& a = t.anchors[device];
  const uint64_t now = now_ns();
  if (a.event && now - a.host_ns < kAnchorRenewNs) return *out = &a, true;
  if (!a.stream) {
    if (cudaError_t rc = cudaStreamCreateWithFlags(&a.stream, cudaStreamNonBlocking); rc != cudaSuccess)
      return warn_once(t, "cudaStreamCreate", rc), false;
  }
  if (!a.event) {
    if (cudaError_t rc = cudaEventCreate(&a.event); rc != cudaSuccess) return warn_once(t, "cudaEventCreate", rc), false;
  }
  const uint64_t before = now_ns();
  cudaError_t rc = cudaEventRecord(a.event, a.stream);
  if (rc == cudaSuccess) rc = cudaEventSynchronize(a.event);
  if (rc != cudaSuccess) return warn_once(t, "the anchor event", rc), false;
  a.host_ns = before + (now_ns() - before) / 2;
  *out = &a;
  return true;
}

// Reports s (its work done): the device times through the anchor of its device.
void report(Timing& t, Span* s) {
  int current = 0;
  cudaGetDevice(&current);
  if (current != s->device) cudaSetDevice(s->device);
  Anchor* a = nullptr;
  float from_anchor_ms = 0, length_ms = 0;
  bool ok = anchor_for(t, s->device, &a);
  // An anchor renewed after the span ran gives a negative offset: fine, the event times allow it.
  if (ok && cudaEventElapsedTime(&from_anchor_ms, a->event, s->start) != cudaSuccess) ok = false;
  if (ok && cudaEventElapsedTime(&length_ms, s->start, s->stop) != cudaSuccess) ok = false;
  if (current != s->device) cudaSetDevice(current);
  if (!ok) return;
  weft_profiler_event_t e = profiler::event(WEFT_PROFILER_GPU, s->name);
  e.bytes = s->bytes;
  e.comm = s->comm;
  e.start_ns = uint64_t(int64_t(a->host_ns) + int64_t(double(from_anchor_ms) * 1e6));
  e.end_ns = e.start_ns + uint64_t(double(length_ms) * 1e6);
  profiler::stop(profiler::start_top_level(e));
}

}  // namespace

Span* begin(void* stream, const char* name, uint64_t bytes, uint32_t comm) {
  if (!profiler::wants(WEFT_PROFILER_GPU)) [[likely]]
    return nullptr;
  auto s = static_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(s, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) return nullptr;
  Timing& t = timing();
  std::lock_guard hold(t.lock);
  if (t.pending.size() >= kMaxPending) {
    if (!t.warned) WEFT_WARN(Subsys::gpu, "GPU events: %zu spans wait for their work; later ones are not timed", kMaxPending);
    t.warned = true;
    return nullptr;
  }
  auto* span = new Span;
  span->name = name;
  span->bytes = bytes;
  span->comm = comm;
  cudaGetDevice(&span->device);
  span->start = take_event(t);
  span->stop = take_event(t);
  if (!span->start || !span->stop) return recycle(t, span), nullptr;
  if (cudaError_t rc = cudaEventRecord(span->start, s); rc != cudaSuccess) {
    warn_once(t, "cudaEventRecord", rc);
    return recycle(t, span), nullptr;
  }
  return span;
}

void end(Span* span, void* stream) {
  if (!span) return;
  Timing& t = timing();
  {
    std::lock_guard hold(t.lock);
    if (cudaError_t rc = cudaEventRecord(span->stop, static_cast<cudaStream_t>(stream)); rc != cudaSuccess) {
      warn_once(t, "cudaEventRecord", rc);
      recycle(t, span);
      return;
    }
    t.pending.push_back(span);
  }
  report_completed(false);
}

void report_completed(bool wait) {
  Timing& t = timing();
  std::lock_guard hold(t.lock);
  while (!t.pending.empty()) {
    Span* s = t.pending.front();
    cudaError_t rc = wait ? cudaEventSynchronize(s->stop) : cudaEventQuery(s->stop);
    if (rc == cudaErrorNotReady) break;  // later spans may be done, but are reported in order
    t.pending.pop_front();
    if (rc == cudaSuccess && profiler::wants(WEFT_PROFILER_GPU)) report(t, s);
    recycle(t, s);
  }
}

}  // namespace weft::gpu_timing
