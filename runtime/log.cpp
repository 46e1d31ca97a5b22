#include <atomic>
#include "log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <strings.h>

namespace weft {

namespace {

constexpr const char* kSubsysNames[] = {"core", "init", "pt2pt", "coll", "topo", "gpu", "rma",
                                        "offload"};
static_assert(sizeof(kSubsysNames) / sizeof(kSubsysNames[0]) == size_t(Subsys::count_));

struct LogState {
  std::atomic<LogLevel> level{LogLevel::warn};  // MPI_T may change it while others log
  uint32_t mask = ~0u;
  FILE* out = stderr;
  bool owns_file = false;
  bool configured = false;
  char prefix[160] = "";
  std::mutex mutex;
  std::set<std::string, std::less<>> seen_keys;
};

LogState& state() {
  static LogState s;
  return s;
}

std::string expand_pattern(const std::string& pattern, const char* host, int rank) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'h') out += host;
      else if (c == 'p') out += std::to_string(getpid());
      else if (c == 'r') out += std::to_string(rank);
      else { out += '%'; out += c; }
    } else {
      out += pattern[i];
    }
  }
  return out;
}

void set_prefix(LogState& s, int rank) {
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  if (rank >= 0)
    snprintf(s.prefix, sizeof(s.prefix), "[%s:%d:%d] weft", host, int(getpid()), rank);
  else
    snprintf(s.prefix, sizeof(s.prefix), "[%s:%d] weft", host, int(getpid()));
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::error: return "ERROR";
    case LogLevel::warn: return "WARN";
    case LogLevel::info: return "INFO";
    case LogLevel::trace: return "TRACE";
  }
  return "?";
}

}  // namespace

const char* subsys_name(Subsys s) { return kSubsysNames[size_t(s)]; }

bool parse_log_level(std::string_view text, LogLevel* out) {
  struct { const char* name; LogLevel level; } table[] = {
      {"error", LogLevel::error}, {"warn", LogLevel::warn}, {"info", LogLevel::info},
      {"trace", LogLevel::trace}, {"debug", LogLevel::trace}};
  for (auto& e : table) {
    if (text.size() == strlen(e.name) && strncasecmp(text.data(), e.name, text.size()) == 0) {
      *out = e.level;
      return true;
    }
  }
  return false;
}

bool parse_subsys_list(std::string_view text, uint32_t* mask, std::string* bad) {
  bool exclude = !text.empty() && text[0] == '^';
  if (exclude) text.remove_prefix(1);
  uint32_t bits = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    bool found = false;
    for (size_t i = 0; i < size_t(Subsys::count_); ++i) {
      if (item.size() == strlen(kSubsysNames[i]) &&
          strncasecmp(item.data(), kSubsysNames[i], item.size()) == 0) {
        bits |= 1u << i;
        found = true;
      }
    }
    if (!found) {
      if (bad) *bad = std::string(item);
      return false;
    }
  }
  *mask = exclude ? ~bits : bits;
  return true;
}

void log_configure(const LogSettings& settings, int rank) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.configured = true;
  s.level.store(settings.level, std::memory_order_relaxed);
  s.mask = settings.subsys_mask;
  set_prefix(s, rank);
  if (!settings.file_pattern.empty()) {
    char host[64] = "?";
    gethostname(host, sizeof(host) - 1);
    std::string path = expand_pattern(settings.file_pattern, host, rank);
    FILE* f = fopen(path.c_str(), "a");
    if (f) {
      setvbuf(f, nullptr, _IOLBF, 0);
      s.out = f;
      s.owns_file = true;
    } else {
      fprintf(stderr, "%s WARN core: cannot open log file %s: %s\n", s.prefix, path.c_str(),
              strerror(errno));
    }
  }
}

bool log_configured() {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  return s.configured;
}

void log_shutdown() {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.owns_file) fclose(s.out);
  s.out = stderr;
  s.owns_file = false;
}

bool log_enabled(LogLevel level, Subsys subsys) {
  const LogState& s = state();
  if (level == LogLevel::error) return true;
  return level <= s.level.load(std::memory_order_relaxed) && (s.mask & (1u << unsigned(subsys)));
}

void log_set_level(LogLevel level) { state().level.store(level, std::memory_order_relaxed); }
LogLevel log_level() { return state().level.load(std::memory_order_relaxed); }

void log_write(LogLevel level, Subsys subsys, const char* fmt, ...) {
  LogState& s = state();
  if (s.prefix[0] == '\0') set_prefix(s, -1);
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  std::lock_guard lock(s.mutex);
  fprintf(s.out, "%s %s %s: %s\n", s.prefix, level_name(level), subsys_name(subsys), msg);
}

bool log_first_time(std::string_view key) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  return s.seen_keys.emplace(key).second;
}

std::string expand_file_pattern(const std::string& pattern, int rank) {
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  return expand_pattern(pattern, host, rank);
}

}  // namespace weft
