#include "config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "log.h"

extern char** environ;

namespace weft {

namespace {

// The table of runtime/config_vars.def, in its order.
constexpr ConfigVar kVars[] = {
#define WEFT_SETTING(name, type, default_value, doc) {name, ConfigType::type, default_value, doc, nullptr},
#define WEFT_CHOICE(name, default_value, choices, doc) {name, ConfigType::choice, default_value, doc, choices},
#include "config_vars.def"
#undef WEFT_CHOICE
#undef WEFT_SETTING
};

bool matches_choice(const char* choices, std::string_view v) {
  std::string_view rest(choices);
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    std::string_view item = rest.substr(0, bar);
    if (item.size() == v.size() && strncasecmp(item.data(), v.data(), v.size()) == 0) return true;
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  return false;
}

const ConfigVar* find_var(std::string_view name) {
  for (const auto& v : kVars)
    if (name == v.name) return &v;
  return nullptr;
}

Status validate(const ConfigVar& var, std::string_view v) {
  bool good = true;
  switch (var.type) {
    case ConfigType::string: break;
    case ConfigType::integer: {
      std::string s(v);
      char* end = nullptr;
      errno = 0;
      (void)strtoll(s.c_str(), &end, 10);
      good = !s.empty() && end && *end == '\0' && errno == 0;
      break;
    }
    case ConfigType::boolean: { bool b; good = parse_bool(v, &b); break; }
    case ConfigType::size: { uint64_t n; good = parse_size(v, &n); break; }
    case ConfigType::choice: good = matches_choice(var.choices, v); break;
  }
  if (good) return Status::ok;
  std::string msg = std::string("invalid value '") + std::string(v) + "' for " + var.name +
                    " (expected " + config_type_name(var.type) +
                    (var.choices ? std::string(": ") + var.choices : std::string()) + ")";
  WEFT_ERROR(Subsys::core, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::invalid_arg;
}

}  // namespace

std::span<const ConfigVar> config_vars() { return kVars; }

const char* config_type_name(ConfigType t) {
  switch (t) {
    case ConfigType::string: return "string";
    case ConfigType::integer: return "integer";
    case ConfigType::boolean: return "boolean";
    case ConfigType::size: return "size";
    case ConfigType::choice: return "one of";
  }
  return "?";
}

bool parse_bool(std::string_view t, bool* out) {
  for (const char* s : {"1", "y", "yes", "on", "true"})
    if (t.size() == strlen(s) && strncasecmp(t.data(), s, t.size()) == 0) return *out = true, true;
  for (const char* s : {"0", "n", "no", "off", "false"})
    if (t.size() == strlen(s) && strncasecmp(t.data(), s, t.size()) == 0) return *out = false, true;
  return false;
}

bool parse_size(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t n = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + uint64_t(text[i] - '0');
  }
  if (i == 0) return false;
  uint64_t mult = 1;
  if (i < text.size()) {
    switch (text[i] | 0x20) {
      case 'k': mult = 1ull << 10; break;
      case 'm': mult = 1ull << 20; break;
      case 'g': mult = 1ull << 30; break;
      default: return false;
    }
    ++i;
    if (i < text.size() && (text[i] | 0x20) == 'b') ++i;
    if (i != text.size()) return false;
  }
  if (n > UINT64_MAX / mult) return false;
  *out = n * mult;
  return true;
}

Config Config::capture(const char* const* envp) {
  Config cfg;
  for (const auto& v : kVars) cfg.values_[v.name] = v.default_value;
  for (const char* const* e = envp; e && *e; ++e) {
    std::string_view entry(*e);
    if (entry.substr(0, 5) != "WEFT_") continue;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    cfg.seen_.emplace_back(name);
    if (const ConfigVar* var = find_var(name)) {
      cfg.values_[var->name] = std::string(value);
      cfg.set_[var->name] = true;
    }
  }
  return cfg;
}

Status Config::check() const {
  for (const std::string& name : seen_) {
    const ConfigVar* var = find_var(name);
    if (!var) {
      // Variables read by tools and tests rather than the library itself.
      if (name.substr(0, 10) != "WEFT_TEST_" && name != "WEFT_DEPS_PREFIX")
        WEFT_WARN(Subsys::core, "unknown variable %s ignored (weft_info --config lists them)", name.c_str());
      continue;
    }
    WEFT_TRY(validate(*var, value(name)));
  }
  return Status::ok;
}

Status Config::load(const char* const* envp, Config* out) {
  Config cfg = capture(envp);
  WEFT_TRY(cfg.check());
  *out = std::move(cfg);
  return Status::ok;
}

const Config& process_config() {
  static const Config snapshot = Config::capture(environ);
  return snapshot;
}

namespace {

// The registered variable name, or nullptr (logged: a name missing from kVars is a bug).
const ConfigVar* registered(std::string_view name) {
  const ConfigVar* var = find_var(name);
  if (!var) WEFT_ERROR(Subsys::core, "%.*s is not a registered setting", int(name.size()), name.data());
  return var;
}

void warn_malformed(const ConfigVar& var, std::string_view value, const char* expected) {
  WEFT_WARN(Subsys::core, "%s=%.*s is not %s; %s (the default) is used", var.name, int(value.size()),
            value.data(), expected, var.default_value);
}

}  // namespace

std::string_view setting_string(std::string_view name) {
  return registered(name) ? process_config().value(name) : std::string_view{};
}

bool setting_bool(std::string_view name) {
  const ConfigVar* var = registered(name);
  if (!var) return false;
  bool on = false;
  const std::string_view v = process_config().value(name);
  if (!v.empty() && parse_bool(v, &on)) return on;
  if (!v.empty()) warn_malformed(*var, v, "a boolean");
  (void)parse_bool(var->default_value, &on);
  return on;
}

int64_t setting_integer(std::string_view name, int64_t min) {
  const ConfigVar* var = registered(name);
  if (!var) return 0;
  const std::string v(process_config().value(name));
  const int64_t fallback = strtoll(var->default_value, nullptr, 10);
  if (v.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long n = strtoll(v.c_str(), &end, 10);
  if (*end == '\0' && errno == 0 && n >= min) return n;
  const std::string expected = min == INT64_MIN ? "a number"
                               : min == 0        ? "a non-negative number"
                                                 : "a number of at least " + std::to_string(min);
  warn_malformed(*var, v, expected.c_str());
  return fallback;
}

uint64_t setting_size(std::string_view name) {
  const ConfigVar* var = registered(name);
  if (!var) return 0;
  uint64_t n = 0;
  const std::string_view v = process_config().value(name);
  if (!v.empty() && parse_size(v, &n)) return n;
  if (!v.empty()) warn_malformed(*var, v, "a size");
  (void)parse_size(var->default_value, &n);
  return n;
}

std::string_view Config::value(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string_view{} : std::string_view(it->second);
}

bool Config::is_set(std::string_view name) const { return set_.count(name) != 0; }

int64_t Config::integer(std::string_view name) const {
  return strtoll(std::string(value(name)).c_str(), nullptr, 10);
}

bool Config::boolean(std::string_view name) const {
  bool b = false;
  (void)parse_bool(value(name), &b);
  return b;
}

uint64_t Config::size(std::string_view name) const {
  uint64_t n = 0;
  (void)parse_size(value(name), &n);
  return n;
}

}  // namespace weft
