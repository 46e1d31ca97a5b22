// The messages of staged one-sided accesses (rma/staged.cpp): an origin's request, and the
// target's reply. The target decodes every request before it acts on it; decode_request and
// range_inside are pure, so they can be tested and fuzzed on their own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace weft::rma::staged {

inline constexpr uint32_t kMagic = 0x57524d01;  // "WRM" and the protocol version
enum Op : uint32_t { kPut = 1, kGet = 2, kFlush = 3 };

struct RequestHeader {  // a put's data follows it
  uint32_t magic = kMagic, op = 0;
  uint64_t addr = 0, bytes = 0;
};
struct ReplyHeader {  // a get's data follows it
  uint32_t magic = kMagic, status = 0;
  uint64_t bytes = 0;
};

// A request as it arrived: the header of a known operation, and exactly `bytes` bytes of data
// after it for a put (nothing after it otherwise). *out is set only when it is well formed.
inline bool decode_request(const void* message, size_t length, RequestHeader* out) {
  RequestHeader h;
  if (message == nullptr || length < sizeof h) return false;
  std::memcpy(&h, message, sizeof h);
  if (h.magic != kMagic || (h.op != kPut && h.op != kGet && h.op != kFlush)) return false;
  if (h.op == kPut ? h.bytes != length - sizeof h : length != sizeof h) return false;
  *out = h;
  return true;
}

// Whether [addr, addr + bytes) lies inside [base, base + size), without overflow.
inline bool range_inside(uint64_t addr, uint64_t bytes, uint64_t base, uint64_t size) {
  return addr >= base && addr - base <= size && bytes <= size - (addr - base);
}

}  // namespace weft::rma::staged
