// The built-in consumer of profiler events behind WEFT_TRACE: one Chrome trace (Trace Event
// Format, JSON; Perfetto and chrome://tracing read it) per rank, at the path WEFT_TRACE names
// with %r (rank), %h (host), %p (pid) replaced, or with ".<rank>.json" appended when it has no
// %r. API calls and blocking point-to-point operations are complete events on the calling
// thread's track; collectives, rounds, transfers and RMA epochs (which outlive the calls that
// start them) are async slices. Each line holds one event, so `weft_trace merge` reads the
// files line by line and a rank that died leaves a file readable up to its last line.
#pragma once
#include <string>

#include "include/weft/profiler.h"

namespace weft::trace {

// The consumer's table, writing to the file made from `path` (opened by its init).
const weft_profiler_plugin_t* consumer(const std::string& path);

// This rank's monotonic clock minus rank 0's, in microseconds, measured at init; written into
// the file (the "weft_clock" metadata event) for `weft_trace merge`.
void set_clock_offset_us(double offset);

}  // namespace weft::trace
