#include "json.h"

#include <nlohmann/json.hpp>

namespace weft::topo {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxText = 64 << 20;
// Room for the reason, not for the hostile token nlohmann quotes in some of its messages.
constexpr size_t kMaxReason = 160;

bool fail_at(std::string_view text, size_t offset, const std::string& what, std::string* error) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  *error = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what;
  return false;
}

// The offset of the first '[' or '{' that opens more than kMaxDepth containers, or npos. A cheap
// scan before the parse keeps a file of nothing but brackets from costing a deep tree.
size_t first_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// Builds nothing; keeps where and why the parse failed. The DOM parse without exceptions only
// says that it failed, so a failed text is read a second time through this.
struct ParseErrorRecorder : Json::json_sax_t {
  size_t position = 0;  // 1-based offset of the failing byte (one past the end: the text ended)
  std::string reason;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t at, const std::string& last_token, const Json::exception& e) override {
    position = at;
    // A number too large for a double (out_of_range.406) is reported where it ends: point at its start.
    constexpr int kNumberOverflow = 406;
    if (e.id == kNumberOverflow && last_token.size() < at) position = at - last_token.size() + 1;
    // "[json.exception.parse_error.101] parse error at line 1, column 6: syntax error while
    // parsing value - invalid literal; last read: '...'": keep the part between the position
    // (which fail_at writes) and the echoed input.
    std::string_view what = e.what();
    if (const size_t tag_end = what.find("] "); tag_end != what.npos) what.remove_prefix(tag_end + 2);
    if (what.starts_with("parse error")) {
      if (const size_t colon = what.find(": "); colon != what.npos) what.remove_prefix(colon + 2);
    }
    if (const size_t echo = what.find("; last read:"); echo != what.npos) what = what.substr(0, echo);
    reason = std::string(what.substr(0, kMaxReason));
    return false;
  }
};

}  // namespace

bool parse_json(std::string_view text, Json* out, std::string* error) {
  *out = Json();
  if (text.size() > kMaxText) return fail_at(text, 0, "the file is larger than 64 MiB", error);
  if (const size_t at = first_too_deep(text); at != std::string_view::npos)
    return fail_at(text, at, "nested more than 64 levels deep", error);
  *out = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!out->is_discarded()) return true;
  *out = Json();
  ParseErrorRecorder why;
  Json::sax_parse(text.begin(), text.end(), &why);
  if (why.reason.empty()) why.reason = "malformed JSON";
  const size_t offset = why.position > 0 ? why.position - 1 : 0;
  // A failure past the last byte is a file cut short: say so, not just what token was missing.
  if (offset >= text.size()) return fail_at(text, text.size(), "the text is truncated (" + why.reason + ")", error);
  return fail_at(text, offset, why.reason, error);
}

const Json* json_member(const Json& o, std::string_view key) {
  if (!o.is_object()) return nullptr;
  const auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

void json_quote(std::string_view s, std::string* out) {
  // replace, not the default strict: a hostname or device name from the system may not be UTF-8,
  // and strict would throw.
  *out += Json(std::string(s)).dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace weft::topo
