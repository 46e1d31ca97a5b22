// Fuzzes the hex decoder of info values (runtime/hex.h): any text is refused or decoded within
// the byte limit, and decoded bytes encode back to text that decodes to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/hex.h"

using namespace weft;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  constexpr size_t kLimit = 4096;
  std::vector<unsigned char> bytes;
  if (!hex_decode(text, &bytes, kLimit)) return 0;
  if (bytes.size() > kLimit) abort();
  std::vector<unsigned char> again;
  if (!hex_decode(hex_encode(bytes.data(), bytes.size()), &again, kLimit) || again != bytes) abort();
  return 0;
}
