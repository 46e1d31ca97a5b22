// Fuzzes the WEFT_COLL_TUNE parser (coll/tune.h): any string is refused with a message naming
// the bad part, or parsed; a parsed tuning answers queries for any size.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "coll/tune.h"

using namespace weft;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  coll::Tuning t;
  std::string error;
  if (coll::Tuning::parse(text, &t, &error) != Status::ok) {
    if (error.empty()) abort();
    return 0;
  }
  for (int c = 0; c < int(coll::Collective::count_); ++c)
    for (size_t bytes : {size_t(0), size_t(1), size_t(4096), size_t(1) << 20, SIZE_MAX})
      (void)t.forced(coll::Collective(c), bytes);
  return 0;
}
