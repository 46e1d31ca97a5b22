// Logging by level and subsystem (WEFT_DEBUG, WEFT_DEBUG_SUBSYS, WEFT_DEBUG_FILE).
// Messages are lowercase, name the object they are about, and carry no '='.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace weft {

enum class LogLevel : uint8_t { error = 0, warn = 1, info = 2, trace = 3 };

enum class Subsys : uint8_t { core, init, pt2pt, coll, topo, gpu, rma, offload, count_ };

const char* subsys_name(Subsys s);

struct LogSettings {
  LogLevel level = LogLevel::warn;
  uint32_t subsys_mask = ~0u;  // bit per Subsys
  std::string file_pattern;    // empty: stderr; %h host, %p pid, %r rank
};

// Parses "WARN|INFO|TRACE|ERROR" (case-insensitive). Returns false on an unknown level.
bool parse_log_level(std::string_view text, LogLevel* out);
// Parses "init,pt2pt" or "^coll,gpu". Returns false and names the bad entry in *bad.
bool parse_subsys_list(std::string_view text, uint32_t* mask, std::string* bad);

// Applies settings; called once at init after the rank is known.
void log_configure(const LogSettings& settings, int rank);
void log_shutdown();
// Whether log_configure ran (MPI_Init did, or a KV agent without MPI).
bool log_configured();

bool log_enabled(LogLevel level, Subsys subsys);
// The level of a running process (the MPI_T control variable WEFT_DEBUG writes it).
void log_set_level(LogLevel level);
LogLevel log_level();
// A file name pattern with %h (host), %p (pid) and %r (rank) replaced.
std::string expand_file_pattern(const std::string& pattern, int rank);
void log_write(LogLevel level, Subsys subsys, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Logs once per distinct key (a fallback cause, say): later calls with the same key are dropped.
bool log_first_time(std::string_view key);

}  // namespace weft

#define WEFT_LOG(level, subsys, ...)                                       \
  do {                                                                     \
    if (::weft::log_enabled((level), (subsys))) [[unlikely]]               \
      ::weft::log_write((level), (subsys), __VA_ARGS__);                   \
  } while (0)
#define WEFT_WARN(subsys, ...) WEFT_LOG(::weft::LogLevel::warn, subsys, __VA_ARGS__)
#define WEFT_INFO(subsys, ...) WEFT_LOG(::weft::LogLevel::info, subsys, __VA_ARGS__)
#define WEFT_TRACE(subsys, ...) WEFT_LOG(::weft::LogLevel::trace, subsys, __VA_ARGS__)
#define WEFT_ERROR(subsys, ...) WEFT_LOG(::weft::LogLevel::error, subsys, __VA_ARGS__)
