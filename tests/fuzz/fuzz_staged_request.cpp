// Fuzzes the decoder of staged one-sided requests (rma/staged_wire.h), which a window's target
// runs on every request a rank of another node sends: a decoded request is of a known
// operation with exactly its payload, and the range check never lets bytes past the window.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "rma/staged_wire.h"

using namespace weft::rma::staged;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RequestHeader h;
  if (decode_request(data, size, &h)) {
    if (h.magic != kMagic || (h.op != kPut && h.op != kGet && h.op != kFlush)) abort();
    if (h.op == kPut ? h.bytes != size - sizeof h : size != sizeof h) abort();
  }
  // The window: base and size from the input's first bytes when there are enough.
  uint64_t base = 0x10000, span = 4096;
  if (size >= 16) {
    memcpy(&base, data, 8);
    memcpy(&span, data + 8, 8);
  }
  if (size >= sizeof h) {
    memcpy(&h, data, sizeof h);
    if (range_inside(h.addr, h.bytes, base, span)) {
      // Inside means: starts at or after the base, ends at or before its end, no wrap.
      if (h.addr < base || h.addr - base > span || h.bytes > span - (h.addr - base)) abort();
      const unsigned __int128 end = (unsigned __int128)h.addr + h.bytes;
      if (end > (unsigned __int128)base + span) abort();
    }
  }
  return 0;
}
