#include "trace.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <mutex>
#include <string>

#include "clock.h"
#include "log.h"

namespace weft::trace {

namespace {

uint64_t now_ns() { return monotonic_ns(); }

// Integers by std::to_chars, and nanoseconds as microseconds with three decimals: printf's
// floating-point formatting was most of the cost of an event.
void append_uint(std::string* out, uint64_t v) {
  char text[24];
  const auto r = std::to_chars(text, text + sizeof text, v);
  out->append(text, size_t(r.ptr - text));
}
void append_int(std::string* out, int64_t v) {
  if (v < 0) {
    *out += '-';
    append_uint(out, uint64_t(-(v + 1)) + 1);
  } else {
    append_uint(out, uint64_t(v));
  }
}
void append_us(std::string* out, uint64_t ns) {
  append_uint(out, ns / 1000);
  const unsigned frac = unsigned(ns % 1000);
  char text[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
  out->append(text, 4);
}

struct Open {
  uint64_t start_ns;
  uint64_t id;
  uint32_t type;
  const char* name;
  int tid;
  std::string args;  // a complete event's arguments, written at its stop
};

struct Writer {
  std::mutex lock;
  std::string pattern, path, error;
  FILE* file = nullptr;
  std::string buffer;  // flushed from 1 MiB and at finalize
  int rank = 0, size = 1;
  double clock_offset_us = 0;
  uint64_t next_id = 1;
  std::atomic<int> next_tid{1};
};
Writer w;

thread_local int t_tid = 0;
// The track of GPU events, apart from the threads' (numbered from 1).
constexpr int kGpuTrack = 1000000;

int thread_track() {
  if (!t_tid) t_tid = w.next_tid.fetch_add(1);
  return t_tid;
}

const char* category(uint32_t type) {
  switch (type) {
    case WEFT_PROFILER_API: return "api";
    case WEFT_PROFILER_COLL: return "coll";
    case WEFT_PROFILER_P2P: return "p2p";
    case WEFT_PROFILER_ROUND: return "round";
    case WEFT_PROFILER_TRANSFER: return "transfer";
    case WEFT_PROFILER_RMA_EPOCH: return "rma_epoch";
    case WEFT_PROFILER_GPU: return "gpu";
    case WEFT_PROFILER_KV: return "kv";
    default: return "other";
  }
}

bool synchronous(uint32_t type) { return type == WEFT_PROFILER_API || type == WEFT_PROFILER_P2P; }

// Names are weft's own static strings (function, schedule and transport names): printable,
// without quotes or backslashes; anything else is replaced rather than escaped.
void append_name(std::string* out, const char* s) {
  for (; s && *s; ++s) *out += (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\') ? *s : '?';
}

void flush_locked() {
  if (w.file && !w.buffer.empty()) {
    if (fwrite(w.buffer.data(), 1, w.buffer.size(), w.file) != w.buffer.size() && w.error.empty())
      w.error = "a write to " + w.path + " failed";
    fflush(w.file);
  }
  w.buffer.clear();
}

void append_line(const std::string& line) {
  w.buffer += line;
  w.buffer += ",\n";
  if (w.buffer.size() >= (size_t(1) << 20)) flush_locked();
}

void append_args(std::string* s, const weft_profiler_event_t& e) {
  char text[256];
  int n = 0;
  switch (e.type) {
    case WEFT_PROFILER_COLL:
      n = snprintf(text, sizeof text, ",\"args\":{\"comm\":%u,\"comm_size\":%d,\"seq\":%u,\"bytes\":%llu,\"algorithm\":\"",
                   e.comm, e.comm_size, e.seq, (unsigned long long)e.bytes);
      s->append(text, size_t(n));
      append_name(s, e.algorithm);
      *s += "\"}";
      return;
    case WEFT_PROFILER_P2P:
      n = snprintf(text, sizeof text, ",\"args\":{\"peer\":%d,\"tag\":%d,\"bytes\":%llu,\"comm\":%u}", e.peer, e.tag,
                   (unsigned long long)e.bytes, e.comm);
      break;
    case WEFT_PROFILER_ROUND: n = snprintf(text, sizeof text, ",\"args\":{\"round\":%d}", e.round); break;
    case WEFT_PROFILER_TRANSFER:
      n = snprintf(text, sizeof text, ",\"args\":{\"peer\":%d,\"bytes\":%llu,\"transport\":\"%s\"}", e.peer,
                   (unsigned long long)e.bytes, e.transport ? e.transport : "");
      break;
    case WEFT_PROFILER_RMA_EPOCH: n = snprintf(text, sizeof text, ",\"args\":{\"peer\":%d}", e.peer); break;
    case WEFT_PROFILER_GPU:
      n = snprintf(text, sizeof text, ",\"args\":{\"bytes\":%llu,\"comm\":%u}", (unsigned long long)e.bytes, e.comm);
      break;
    case WEFT_PROFILER_KV: n = snprintf(text, sizeof text, ",\"args\":{\"bytes\":%llu}", (unsigned long long)e.bytes); break;
    default: return;
  }
  if (n > 0) s->append(text, size_t(std::min(n, int(sizeof text) - 1)));
}

int trace_init(void** context, const weft_profiler_job_info_t* job, uint32_t* event_mask, weft_profiler_log_fn) {
  w.rank = job->rank;
  w.size = job->size;
  std::string pattern = w.pattern;
  if (pattern.find("%r") == std::string::npos) pattern += ".%r.json";
  w.path = expand_file_pattern(pattern, job->rank);
  w.file = fopen(w.path.c_str(), "w");
  if (!w.file) {
    w.error = "cannot open " + w.path + " for writing";
    return WEFT_PROFILER_ERR_ARG;
  }
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  char line[256];
  snprintf(line, sizeof line, "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d (",
           w.rank, w.rank);
  w.buffer = line;
  append_name(&w.buffer, host);
  w.buffer += ")\"}},\n";
  snprintf(line, sizeof line, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"GPU\"}},\n",
           w.rank, kGpuTrack);
  w.buffer += line;
  *event_mask &= WEFT_PROFILER_API | WEFT_PROFILER_COLL | WEFT_PROFILER_P2P | WEFT_PROFILER_ROUND |
                 WEFT_PROFILER_TRANSFER | WEFT_PROFILER_RMA_EPOCH | WEFT_PROFILER_GPU | WEFT_PROFILER_KV;
  *context = &w;
  return WEFT_PROFILER_OK;
}

// GPU work, reported after it ran: one complete event at the device's times, on the GPU track.
void write_gpu_event(const weft_profiler_event_t& e) {
  std::string s = "{\"ph\":\"X\",\"cat\":\"gpu\",\"ts\":";
  append_us(&s, e.start_ns);
  s += ",\"dur\":";
  append_us(&s, e.end_ns > e.start_ns ? e.end_ns - e.start_ns : 0);
  s += ",\"pid\":";
  append_int(&s, w.rank);
  s += ",\"tid\":";
  append_int(&s, kGpuTrack);
  s += ",\"name\":\"";
  append_name(&s, e.name);
  s += "\"";
  append_args(&s, e);
  s += "}";
  std::lock_guard<std::mutex> hold(w.lock);
  append_line(s);
}

int trace_start(void*, void** handle, const weft_profiler_event_t* e) {
  if (e->type == WEFT_PROFILER_GPU) {
    write_gpu_event(*e);
    *handle = nullptr;  // complete already: no stop follows
    return WEFT_PROFILER_OK;
  }
  auto* o = new Open{now_ns(), 0, e->type, e->name, thread_track(), {}};
  std::lock_guard<std::mutex> hold(w.lock);
  o->id = w.next_id++;
  if (!synchronous(e->type)) {
    std::string s = "{\"ph\":\"b\",\"cat\":\"";
    s += category(e->type);
    s += "\",\"id\":";
    append_uint(&s, o->id);
    s += ",\"ts\":";
    append_us(&s, o->start_ns);
    s += ",\"pid\":";
    append_int(&s, w.rank);
    s += ",\"tid\":";
    append_int(&s, o->tid);
    s += ",\"name\":\"";
    append_name(&s, e->name);
    s += "\"";
    append_args(&s, *e);
    s += "}";
    append_line(s);
  } else {
    append_args(&o->args, *e);
  }
  *handle = o;
  return WEFT_PROFILER_OK;
}

int trace_stop(void* handle) {
  auto* o = static_cast<Open*>(handle);
  const uint64_t end = now_ns();
  std::string s = synchronous(o->type) ? "{\"ph\":\"X\",\"cat\":\"" : "{\"ph\":\"e\",\"cat\":\"";
  s += category(o->type);
  if (synchronous(o->type)) {
    s += "\",\"ts\":";
    append_us(&s, o->start_ns);
    s += ",\"dur\":";
    append_us(&s, end - o->start_ns);
  } else {
    s += "\",\"id\":";
    append_uint(&s, o->id);
    s += ",\"ts\":";
    append_us(&s, end);
  }
  s += ",\"pid\":";
  append_int(&s, w.rank);
  s += ",\"tid\":";
  append_int(&s, o->tid);
  s += ",\"name\":\"";
  append_name(&s, o->name);
  s += "\"";
  s += o->args;
  s += "}";
  delete o;
  std::lock_guard<std::mutex> hold(w.lock);
  append_line(s);
  return WEFT_PROFILER_OK;
}

int trace_state(void* handle, int state, int64_t value) {
  if (state != WEFT_PROFILER_STATE_FAILED) return WEFT_PROFILER_OK;
  auto* o = static_cast<Open*>(handle);
  char line[256];
  const int n = snprintf(line, sizeof line,
                         "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"failed\",\"ts\":%.3f,\"pid\":%d,\"tid\":%d,\"name\":\"failed\","
                         "\"args\":{\"status\":%lld}}",
                         double(now_ns()) * 1e-3, w.rank, o->tid, (long long)value);
  std::lock_guard<std::mutex> hold(w.lock);
  append_line(std::string(line, size_t(n)));
  return WEFT_PROFILER_OK;
}

int trace_finalize(void*) {
  std::lock_guard<std::mutex> hold(w.lock);
  char line[256];
  snprintf(line, sizeof line,
           "{\"ph\":\"M\",\"name\":\"weft_clock\",\"pid\":%d,\"args\":{\"rank\":%d,\"size\":%d,\"offset_us\":%.3f}}\n],"
           "\"displayTimeUnit\":\"ns\"}\n",
           w.rank, w.rank, w.size, w.clock_offset_us);
  w.buffer += line;
  flush_locked();
  int rc = WEFT_PROFILER_OK;
  if (w.file && fclose(w.file) != 0) rc = WEFT_PROFILER_ERR_INTERNAL;
  w.file = nullptr;
  if (!w.error.empty()) {
    WEFT_ERROR(Subsys::core, "WEFT_TRACE: %s", w.error.c_str());
    rc = WEFT_PROFILER_ERR_INTERNAL;
  } else {
    WEFT_INFO(Subsys::core, "WEFT_TRACE: wrote %s", w.path.c_str());
  }
  return rc;
}

const char* trace_last_error(void*) { return w.error.c_str(); }

const weft_profiler_plugin_t kTable = {WEFT_PROFILER_ABI_VERSION, sizeof(weft_profiler_plugin_t), "weft trace",
                                       trace_init, trace_start, trace_stop, trace_state, trace_finalize,
                                       trace_last_error};

}  // namespace

const weft_profiler_plugin_t* consumer(const std::string& path) {
  w.pattern = path;
  return &kTable;
}

void set_clock_offset_us(double offset) {
  std::lock_guard<std::mutex> hold(w.lock);
  w.clock_offset_us = offset;
}

}  // namespace weft::trace
