// The contiguous runs a datatype's elements occupy, for one-sided accesses with derived
// datatypes at the target: one access per run.
#pragma once
#include <cstddef>
#include <vector>

#include "runtime/datatype.h"

namespace weft::rma {

struct Run {
  ptrdiff_t disp;  // bytes from the buffer's start
  size_t bytes;
};

// The runs of `count` elements of d in typemap order (adjacent runs merged); *lo and *hi
// (exclusive) bound every byte touched. No runs when nothing is touched.
std::vector<Run> runs_of(const Datatype* d, size_t count, ptrdiff_t* lo, ptrdiff_t* hi);

}  // namespace weft::rma
