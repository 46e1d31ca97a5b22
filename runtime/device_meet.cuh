// What the multi-block kernels that meet their peers on the device share (the fused allreduce
// in op_gpu.cu, the gather kernel of the GPU collectives): the epoch wait, the grid's meeting
// and the grid's copy. CUDA device code only; include it from .cu files.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::device {

// Spins until a rank's epoch word reaches `epoch`, or the host's stop word is set (host
// memory: read every 128 rounds).
__device__ inline void wait_epoch(const unsigned long long* flag, unsigned long long epoch, const unsigned int* stop) {
  const volatile unsigned long long* f = flag;
  const volatile unsigned int* s = stop;
  for (unsigned int rounds = 1; *f < epoch; ++rounds) {
    __nanosleep(32);
    if ((rounds & 127) == 0 && s && *s) break;
  }
}

// Every block arrives on this rank's counter `arrive` (thread 0 fences the block's writes
// first); the last to arrive resets it and publishes this rank's epoch in flag[me]; then every
// block waits until every rank, this one included, has reached it (each waiting thread fences
// what it saw). Every thread of every block calls it; the grid must be resident at once.
__device__ inline void grid_meet(unsigned int* arrive, unsigned long long* const* flag, int me, int ranks,
                                 const unsigned int* stop, unsigned long long epoch) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    if (atomicAdd(arrive, 1u) == gridDim.x - 1) {
      atomicExch(arrive, 0u);
      __threadfence_system();
      *reinterpret_cast<volatile unsigned long long*>(flag[me]) = epoch;
    }
  }
  if (int(threadIdx.x) < ranks) {
    wait_epoch(flag[threadIdx.x], epoch, stop);
    __threadfence_system();
  }
  __syncthreads();
}

// The grid copies `bytes` bytes (thread `first` of `stride`), 16 at a time where both ends
// allow it. Loads bypass L1 (__ldcg): the source may have been written by peers during this
// kernel.
__device__ inline void grid_copy(void* dst, const void* src, size_t bytes, size_t first, size_t stride) {
  size_t done = 0;
  if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16) == 0) {
    const size_t packs = bytes / 16;
    for (size_t p = first; p < packs; p += stride)
      static_cast<uint4*>(dst)[p] = __ldcg(static_cast<const uint4*>(src) + p);
    done = packs * 16;
  }
  for (size_t i = done + first; i < bytes; i += stride)
    static_cast<char*>(dst)[i] = __ldcg(static_cast<const char*>(src) + i);
}

}  // namespace weft::device
