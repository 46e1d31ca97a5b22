#include "json.h"

#include <cstdio>
#include <cstdlib>

namespace weft::topo {

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxText = 64 << 20;

class Parser {
 public:
  Parser(std::string_view t, std::string* error) : t_(t), error_(error) {}

  bool document(Json* out) {
    if (t_.size() > kMaxText) return fail("the file is larger than 64 MiB");
    if (!value(out, 0)) return false;
    skip();
    if (at_ != t_.size()) return fail("unexpected text after the value");
    return true;
  }

 private:
  bool fail(const char* what) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at_ && i < t_.size(); ++i) {
      if (t_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    *error_ = "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what;
    return false;
  }
  void skip() {
    while (at_ < t_.size() && (t_[at_] == ' ' || t_[at_] == '\t' || t_[at_] == '\n' || t_[at_] == '\r')) ++at_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(at_, word.size()) != word) return fail("unknown literal");
    at_ += word.size();
    return true;
  }
  bool value(Json* v, int depth) {
    if (depth > kMaxDepth) return fail("nested more than 64 levels deep");
    skip();
    if (at_ >= t_.size()) return fail("unexpected end of input");
    const char c = t_[at_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v->kind = Json::string;
      return string(&v->str);
    }
    if (c == 't' || c == 'f') {
      v->kind = Json::boolean;
      v->b = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      v->kind = Json::null;
      return literal("null");
    }
    return number(v);
  }
  bool number(Json* v) {
    const size_t start = at_;
    if (at_ < t_.size() && t_[at_] == '-') ++at_;
    while (at_ < t_.size() && ((t_[at_] >= '0' && t_[at_] <= '9') || t_[at_] == '.' || t_[at_] == 'e' ||
                               t_[at_] == 'E' || t_[at_] == '+' || t_[at_] == '-'))
      ++at_;
    if (at_ == start || at_ - start > 64) return fail("expected a value");
    std::string digits(t_.substr(start, at_ - start));
    char* end = nullptr;
    v->num = strtod(digits.c_str(), &end);
    if (!end || *end != '\0') {
      at_ = start;
      return fail("malformed number");
    }
    v->kind = Json::number;
    return true;
  }
  bool string(std::string* out) {
    ++at_;  // opening quote
    while (at_ < t_.size()) {
      const char c = t_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (at_ >= t_.size()) break;
      const char e = t_[at_++];
      switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          if (at_ + 4 > t_.size()) return fail("truncated \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = t_[at_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f') code |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= unsigned(h - 'A' + 10);
            else return fail("bad \\u escape");
          }
          // Names in topology files are ASCII; others are kept as '?'.
          *out += code < 0x80 ? char(code) : '?';
          break;
        }
        default: return fail("unknown escape");
      }
    }
    return fail("unterminated string");
  }
  bool array(Json* v, int depth) {
    v->kind = Json::array;
    ++at_;
    skip();
    if (at_ < t_.size() && t_[at_] == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      v->items.emplace_back();
      if (!value(&v->items.back(), depth + 1)) return false;
      skip();
      if (at_ >= t_.size()) return fail("unterminated array");
      if (t_[at_] == ']') {
        ++at_;
        return true;
      }
      if (t_[at_] != ',') return fail("expected ',' or ']'");
      ++at_;
    }
  }
  bool object(Json* v, int depth) {
    v->kind = Json::object;
    ++at_;
    skip();
    if (at_ < t_.size() && t_[at_] == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      skip();
      if (at_ >= t_.size() || t_[at_] != '"') return fail("expected a member name");
      std::string key;
      if (!string(&key)) return false;
      skip();
      if (at_ >= t_.size() || t_[at_] != ':') return fail("expected ':'");
      ++at_;
      v->keys.push_back(std::move(key));
      v->values.emplace_back();
      if (!value(&v->values.back(), depth + 1)) return false;
      skip();
      if (at_ >= t_.size()) return fail("unterminated object");
      if (t_[at_] == '}') {
        ++at_;
        return true;
      }
      if (t_[at_] != ',') return fail("expected ',' or '}'");
      ++at_;
    }
  }

  std::string_view t_;
  std::string* error_;
  size_t at_ = 0;
};

}  // namespace

const Json* Json::get(std::string_view key) const {
  if (kind != object) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &values[i];
  return nullptr;
}

bool parse_json(std::string_view text, Json* out, std::string* error) {
  *out = Json{};
  return Parser(text, error).document(out);
}

void json_quote(std::string_view s, std::string* out) {
  *out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

}  // namespace weft::topo
