// Fuzzes the tuning-file reader (WEFT_COLL_MODEL, coll/coll.h): any text is refused with a
// message naming the line, or read into finite, non-negative parameters; a refused file leaves
// the model as it was.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "coll/coll.h"

using namespace weft;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  coll::CostModel m;
  m.alpha_us = 7;
  std::string error;
  if (coll::parse_cost_model(text, "fuzz", &m, &error) != Status::ok) {
    if (error.empty() || m.alpha_us != 7) abort();
    return 0;
  }
  for (double v : {m.alpha_us, m.beta_us_per_byte, m.gamma_us_per_byte, m.shm_alpha_us, m.shm_beta_us_per_byte,
                   m.gap_us, m.node_alpha_us, m.node_beta_us_per_byte, m.net_alpha_us, m.net_beta_us_per_byte})
    if (!(v >= 0) || !std::isfinite(v)) abort();
  return 0;
}
