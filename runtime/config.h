// The single registry of WEFT_* variables: each is declared once in config_vars.def with its
// type, default and doc, and read nowhere but config.cpp (scripts/check_layers.sh checks it). The
// environment's values are read once per process, on first use, into an immutable snapshot
// (process_config): MPI_Init validates it, and code that runs without MPI_Init (KV agents,
// weft_info) or that configures itself on first use reads the same snapshot through the typed
// setting_* accessors.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"

namespace weft {

enum class ConfigType : uint8_t { string, integer, boolean, size, choice };

struct ConfigVar {
  const char* name;
  ConfigType type;
  const char* default_value;
  const char* doc;
  const char* choices;  // '|'-separated, for ConfigType::choice
};

std::span<const ConfigVar> config_vars();
const char* config_type_name(ConfigType t);

// Parses sizes such as "4096", "64k", "4M", "1g" (binary units).
bool parse_size(std::string_view text, uint64_t* out);
bool parse_bool(std::string_view text, bool* out);

class Config {
 public:
  // Reads every registered variable from envp and checks it (check()).
  static Status load(const char* const* envp, Config* out);
  // Reads every registered variable from envp as given, unchecked.
  static Config capture(const char* const* envp);
  // Unknown WEFT_* names are reported as a warning (a typo must not silently mean "default");
  // a malformed value is an error, logged and kept as the error detail.
  Status check() const;

  std::string_view value(std::string_view name) const;  // the default when unset
  bool is_set(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  bool boolean(std::string_view name) const;
  uint64_t size(std::string_view name) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, bool, std::less<>> set_;
  std::vector<std::string> seen_;  // the WEFT_* names of the environment, in its order
};

// The environment's WEFT_* values, captured on the first call (thread-safe) and unchanged for the
// life of the process: later setenv calls are not seen.
const Config& process_config();

// Typed reads of process_config() for code that has no Config checked by MPI_Init. An empty value
// means the registered default; a malformed one is warned about (naming the variable) and the
// default is used instead.
std::string_view setting_string(std::string_view name);
bool setting_bool(std::string_view name);
// A value below min is malformed too.
int64_t setting_integer(std::string_view name, int64_t min = INT64_MIN);
uint64_t setting_size(std::string_view name);

}  // namespace weft
