// The monotonic clock (CLOCK_MONOTONIC) in seconds, and its resolution: MPI_Wtime and MPI_Wtick;
// and in nanoseconds, for deadlines and timelines.
#pragma once
#include <time.h>

#include <cstdint>

namespace weft {

inline double monotonic_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

inline double monotonic_tick() {
  timespec res;
  clock_getres(CLOCK_MONOTONIC, &res);
  return double(res.tv_sec) + double(res.tv_nsec) * 1e-9;
}

}  // namespace weft
