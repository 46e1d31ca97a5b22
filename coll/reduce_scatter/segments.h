// Where each rank's segment of a reduce_scatter lies in the vector, and what its builders start from.
#pragma once
#include <memory>
#include <vector>

#include "coll/algorithm.h"

namespace weft::coll {

// start[r]: the first element of rank r's segment (counts[r] elements); start[p]: the total.
inline std::vector<size_t> segment_starts(const std::vector<size_t>& counts) {
  std::vector<size_t> start(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) start[r + 1] = start[r] + counts[r];
  return start;
}

// What a reduce_scatter builder starts from: its schedule (reducing with red), the size of c and
// this rank, the element size, and segment_starts(counts).
struct ReduceScatterStart {
  std::shared_ptr<Schedule> s;
  int p, me;
  size_t es;
  std::vector<size_t> start;
};
inline ReduceScatterStart begin_reduce_scatter(const char* name, const Comm& c, const std::vector<size_t>& counts,
                                               const Reduction& red) {
  return {std::make_shared<Schedule>(name, red), c.size, c.rank, red.elem_size, segment_starts(counts)};
}

}  // namespace weft::coll
