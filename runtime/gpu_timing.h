// Timing of GPU work for the profiler's GPU events (include/weft/profiler.h): a span brackets
// the work weft enqueues on a stream with two CUDA events; once the device has run it, the span
// is reported as a WEFT_PROFILER_GPU event carrying the device's times on CLOCK_MONOTONIC.
// Costs nothing unless the loaded consumer wants GPU events.
#pragma once
#include <cstdint>

namespace weft::gpu_timing {

struct Span;

// Starts a span for work about to be enqueued on `stream` (a cudaStream_t; a capturing stream is
// not timed): nullptr when GPU events are not wanted or CUDA refuses. `name`: static storage.
Span* begin(void* stream, const char* name, uint64_t bytes, uint32_t comm);
// Ends it after the work was enqueued on the same stream; it is reported once it completes.
void end(Span* span, void* stream);
// Reports the spans whose work has completed; with `wait`, waits for every one first (before
// the consumer is finalized).
void report_completed(bool wait);

}  // namespace weft::gpu_timing
