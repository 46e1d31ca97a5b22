// Fuzzes the topology file reader (WEFT_TOPO_FILE, topo/topology.h: JSON): any text is refused
// with a message or read; a topology read from text is written out and read back the same.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "topo/topology.h"

using namespace weft;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  topo::NodeTopology t;
  std::string error;
  if (topo::from_json_text(text, &t, &error) != Status::ok) {
    if (error.empty()) abort();
    return 0;
  }
  topo::NodeTopology again;
  if (topo::from_json_text(topo::to_json(t), &again, &error) != Status::ok) abort();
  if (topo::to_json(again) != topo::to_json(t)) abort();
  return 0;
}
