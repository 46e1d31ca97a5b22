// The single registry of WEFT_* variables: each is declared once in config.cpp with its type,
// default and doc. The environment is read once, at init; the result is immutable afterwards.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

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
// A boolean WEFT_* variable read straight from the environment by layers that have no Config
// (fallback when unset; a value that is not a boolean is warned about once and ignored).
bool env_switch(const char* name, bool fallback);

class Config {
 public:
  // Reads every registered variable from envp. Unknown WEFT_* names are reported once as a
  // warning (a typo must not silently mean "default"); malformed values are an error.
  static Status load(const char* const* envp, Config* out);

  std::string_view value(std::string_view name) const;  // the default when unset
  bool is_set(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  bool boolean(std::string_view name) const;
  uint64_t size(std::string_view name) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, bool, std::less<>> set_;
};

}  // namespace weft
