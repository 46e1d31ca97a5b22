// A CPU set from a list of CPU numbers, for the placement and wait-policy tests.
#pragma once
#include <initializer_list>

#include "runtime/progress.h"

namespace weft::unit {

inline CpuSet cpus(std::initializer_list<int> list) {
  CpuSet s;
  for (int c : list) {
    if (s.size() <= size_t(c / 64)) s.resize(size_t(c / 64) + 1, 0);
    s[size_t(c / 64)] |= uint64_t(1) << (c % 64);
  }
  return s;
}

}  // namespace weft::unit
