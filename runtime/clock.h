// The monotonic clock (CLOCK_MONOTONIC) in seconds, and its resolution: MPI_Wtime and MPI_Wtick.
#pragma once
#include <time.h>

namespace weft {

inline double monotonic_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

inline double monotonic_tick() {
  timespec res;
  clock_getres(CLOCK_MONOTONIC, &res);
  return double(res.tv_sec) + double(res.tv_nsec) * 1e-9;
}

}  // namespace weft
