// Bytes as hex text (MPIX_Info_set_hex's encoding).
#include "runtime/hex.h"

namespace weft {

namespace {

char hex_digit(unsigned v) { return char(v < 10 ? '0' + v : 'A' + v - 10); }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string hex_encode(const void* bytes, size_t n) {
  std::string text;
  text.reserve(2 * n);
  const auto* b = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < n; ++i) {
    text.push_back(hex_digit(b[i] >> 4));
    text.push_back(hex_digit(b[i] & 0xf));
  }
  return text;
}

bool hex_decode(const std::string& text, std::vector<unsigned char>* out, size_t max_bytes) {
  out->clear();
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '[') {
      const size_t close = text.find(']', i);
      if (close == std::string::npos || close == i + 1 || close - i > 8) return false;
      size_t n = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (text[k] < '0' || text[k] > '9') return false;
        n = n * 10 + size_t(text[k] - '0');
      }
      if (n > max_bytes - out->size()) return false;
      out->insert(out->end(), n, 0);
      i = close + 1;
      continue;
    }
    if (i + 1 >= text.size()) return false;
    const int hi = hex_value(text[i]), lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0 || out->size() == max_bytes) return false;
    out->push_back(static_cast<unsigned char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

}  // namespace weft
