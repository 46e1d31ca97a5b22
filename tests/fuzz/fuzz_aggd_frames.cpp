// Fuzzes weft-aggd's frame decoder (tools/aggd/wire.h), which both the daemon and the offload
// plugin run on every byte a peer sends: under every reader and limit, a stream of bytes is cut
// into frames that lie inside the input, or stops at a malformed frame with a reason, or asks
// for more; it never reads past the input.
#include <cstdint>
#include <cstdlib>

#include "tools/aggd/wire.h"

using namespace weft::aggd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (int variant = 0; variant < 4; ++variant) {
    DecodeLimits limits;
    limits.reader = variant & 1 ? Reader::client : Reader::daemon;
    limits.handshake = variant == 2;
    limits.fragment_bytes = variant == 3 ? 64 : 4096;
    size_t at = 0;
    while (at < size) {
      const Decoded d = decode_frame(data + at, size - at, limits);
      if (d.status == Decoded::Status::malformed) {
        if (d.why.empty()) abort();
        break;
      }
      if (d.status == Decoded::Status::need_more) {
        if (d.needed && d.needed <= size - at) abort();  // it had the bytes it asked for
        break;
      }
      if (d.consumed == 0 || d.consumed > size - at) abort();
      const uint8_t* end = data + at + d.consumed;
      if (d.frame.payload < data + at || d.frame.payload + d.frame.length > end) abort();
      at += d.consumed;
    }
  }
  return 0;
}
