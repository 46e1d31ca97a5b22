// The flag barrier of the GPU collectives: one small kernel per rank, no host round trip.
// Thread 0 publishes the next epoch (its own flag plus one, so a replayed CUDA graph counts on)
// with a volatile store after a system-wide fence (everything this rank's stream did before,
// the copy into its slot included, is complete and visible first); thread q polls rank q's
// flag in IPC-mapped memory until it reaches the epoch.
// Epochs only grow, so a fast rank already at the next barrier still counts as arrived.
// The point-to-point kernels below are the same store and poll, one word at a time.
// Every poll also reads the workspace's stop word (host memory, mapped) every 128 rounds: the
// host sets it when the communicator fails, so a kernel waiting for a dead rank ends.
#include "flags.h"

namespace weft::coll::gpu {

namespace {

// One round of a poll: true when the host has stopped the workspace (read every 128 rounds,
// as a read of host memory costs about a microsecond).
__device__ __forceinline__ bool poll_round_stopped(const volatile unsigned int* stop, unsigned int* rounds) {
  __nanosleep(64);
  return (++*rounds & 127) == 0 && *stop != 0;
}

struct Flags {
  unsigned long long* at[kFlagRanks];
};

// only < 0: wait for every rank; else for rank `only` alone (a ring step's left neighbour).
// The epoch is this rank's flag plus one: only this rank's barriers, in stream order, write it.
__global__ void flag_barrier_kernel(Flags flags, int me, int p, int only, const unsigned int* stop) {
  __shared__ unsigned long long epoch;
  const int t = int(threadIdx.x);
  if (t == 0) {
    volatile unsigned long long* own = flags.at[me];
    epoch = *own + 1;
    __threadfence_system();
    *own = epoch;
  }
  __syncthreads();
  if (t < p && t != me && (only < 0 || t == only)) {
    const volatile unsigned long long* f = flags.at[t];
    unsigned int rounds = 0;
    while (*f < epoch && !poll_round_stopped(stop, &rounds)) {
    }
  }
  __syncthreads();
  __threadfence_system();
}

template <class T>
__global__ void flag_store_kernel(T* a, T v) {
  __threadfence_system();
  *reinterpret_cast<volatile T*>(a) = v;
}

__global__ void flag_wait_geq_kernel(const unsigned long long* a, unsigned long long v, const unsigned int* stop) {
  const volatile unsigned long long* f = a;
  unsigned int rounds = 0;
  while (*f < v && !poll_round_stopped(stop, &rounds)) {
  }
  __threadfence_system();
}

__global__ void flag_wait_eq32_kernel(const unsigned int* a, unsigned int v, const unsigned int* stop) {
  const volatile unsigned int* f = a;
  unsigned int rounds = 0;
  while (*f != v && !poll_round_stopped(stop, &rounds)) {
  }
  __threadfence_system();
}

// The captured point-to-point words count messages on the device: the only writer of `a`
// adds one after a system-wide fence (a replayed graph counts on).
__global__ void flag_increment_kernel(unsigned long long* a) {
  __threadfence_system();
  volatile unsigned long long* w = a;
  *w = *w + 1;
}

// Spins until *watched >= *base + delta, base read once (this rank's own word, in stream order).
__global__ void flag_wait_relative_kernel(const unsigned long long* watched, const unsigned long long* base,
                                          long long delta, const unsigned int* stop) {
  const unsigned long long v = *reinterpret_cast<const volatile unsigned long long*>(base) + delta;
  const volatile unsigned long long* f = watched;
  unsigned int rounds = 0;
  while (*f < v && !poll_round_stopped(stop, &rounds)) {
  }
  __threadfence_system();
}

}  // namespace

cudaError_t preload_flag_barrier() {
  cudaFuncAttributes attr;
  cudaError_t err = cudaFuncGetAttributes(&attr, flag_barrier_kernel);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, flag_store_kernel<unsigned long long>);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, flag_store_kernel<unsigned int>);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, flag_wait_geq_kernel);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, flag_wait_eq32_kernel);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, flag_increment_kernel);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, flag_wait_relative_kernel);
  return err;
}

cudaError_t launch_flag_store(unsigned long long* a, uint64_t v, cudaStream_t s) {
  flag_store_kernel<unsigned long long><<<1, 1, 0, s>>>(a, (unsigned long long)v);
  return cudaGetLastError();
}

cudaError_t launch_flag_store32(unsigned int* a, uint32_t v, cudaStream_t s) {
  flag_store_kernel<unsigned int><<<1, 1, 0, s>>>(a, (unsigned int)v);
  return cudaGetLastError();
}

cudaError_t launch_flag_wait_geq(const unsigned long long* a, uint64_t v, const unsigned int* stop, cudaStream_t s) {
  flag_wait_geq_kernel<<<1, 1, 0, s>>>(a, (unsigned long long)v, stop);
  return cudaGetLastError();
}

cudaError_t launch_flag_wait_eq32(const unsigned int* a, uint32_t v, const unsigned int* stop, cudaStream_t s) {
  flag_wait_eq32_kernel<<<1, 1, 0, s>>>(a, (unsigned int)v, stop);
  return cudaGetLastError();
}

cudaError_t launch_flag_increment(unsigned long long* a, cudaStream_t s) {
  flag_increment_kernel<<<1, 1, 0, s>>>(a);
  return cudaGetLastError();
}

cudaError_t launch_flag_wait_relative(const unsigned long long* watched, const unsigned long long* base, int64_t delta,
                                      const unsigned int* stop, cudaStream_t s) {
  flag_wait_relative_kernel<<<1, 1, 0, s>>>(watched, base, (long long)delta, stop);
  return cudaGetLastError();
}

cudaError_t launch_flag_barrier(unsigned long long* const* flags, int me, int p, const unsigned int* stop,
                                cudaStream_t s) {
  Flags f{};
  for (int q = 0; q < p && q < kFlagRanks; ++q) f.at[q] = flags[q];
  flag_barrier_kernel<<<1, kFlagRanks, 0, s>>>(f, me, p, -1, stop);
  return cudaGetLastError();
}

cudaError_t launch_flag_wait_one(unsigned long long* const* flags, int me, int p, int peer, const unsigned int* stop,
                                 cudaStream_t s) {
  Flags f{};
  for (int q = 0; q < p && q < kFlagRanks; ++q) f.at[q] = flags[q];
  flag_barrier_kernel<<<1, kFlagRanks, 0, s>>>(f, me, p, peer, stop);
  return cudaGetLastError();
}

}  // namespace weft::coll::gpu
