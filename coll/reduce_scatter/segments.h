// Where each rank's segment of a reduce_scatter lies in the vector.
#pragma once
#include <vector>

#include "coll/algorithm.h"

namespace weft::coll {

// start[r]: the first element of rank r's segment (counts[r] elements); start[p]: the total.
inline std::vector<size_t> segment_starts(const std::vector<size_t>& counts) {
  std::vector<size_t> start(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) start[r + 1] = start[r] + counts[r];
  return start;
}

}  // namespace weft::coll
