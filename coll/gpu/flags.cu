// The flag barrier of the GPU collectives: one small kernel per rank, no host round trip.
// Thread 0 publishes the epoch with a volatile store after a system-wide fence (everything
// this rank's stream did before, the copy into its slot included, is complete and visible
// first); thread q polls rank q's flag in IPC-mapped memory until it reaches the epoch.
// Epochs only grow, so a fast rank already at the next barrier still counts as arrived.
#include "flags.h"

namespace weft::coll::gpu {

namespace {

struct Flags {
  unsigned long long* at[kFlagRanks];
};

// only < 0: wait for every rank; else for rank `only` alone (a ring step's left neighbour).
__global__ void flag_barrier_kernel(Flags flags, int me, int p, unsigned long long epoch, int only) {
  const int t = int(threadIdx.x);
  if (t == 0) {
    __threadfence_system();
    *reinterpret_cast<volatile unsigned long long*>(flags.at[me]) = epoch;
  }
  if (t < p && t != me && (only < 0 || t == only)) {
    const volatile unsigned long long* f = flags.at[t];
    while (*f < epoch) __nanosleep(64);
  }
  __syncthreads();
  __threadfence_system();
}

}  // namespace

cudaError_t preload_flag_barrier() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, flag_barrier_kernel);
}

cudaError_t launch_flag_barrier(unsigned long long* const* flags, int me, int p, uint64_t epoch, cudaStream_t s) {
  Flags f{};
  for (int q = 0; q < p && q < kFlagRanks; ++q) f.at[q] = flags[q];
  flag_barrier_kernel<<<1, kFlagRanks, 0, s>>>(f, me, p, epoch, -1);
  return cudaGetLastError();
}

cudaError_t launch_flag_wait_one(unsigned long long* const* flags, int me, int p, int peer, uint64_t epoch,
                                 cudaStream_t s) {
  Flags f{};
  for (int q = 0; q < p && q < kFlagRanks; ++q) f.at[q] = flags[q];
  flag_barrier_kernel<<<1, kFlagRanks, 0, s>>>(f, me, p, epoch, peer);
  return cudaGetLastError();
}

}  // namespace weft::coll::gpu
