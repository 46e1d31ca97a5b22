// The one-launch copy collectives (gather_kernel.h). The meeting is the fused allreduce's:
// every block arrives on this rank's counter (thread 0 fences the block's writes first), the
// last to arrive resets it and publishes the epoch, and every block waits until every rank has
// reached it. One meeting a piece keeps the slot rule (workspace.h): a rank writes the slot of
// piece n + 2 only after piece n + 1's meeting, which every peer entered after reading piece n.
#include "gather_kernel.h"

#include <algorithm>
#include <cstdint>

namespace weft::coll::gpu {

namespace {

constexpr int kGatherThreads = 512;

__device__ void gather_wait(const unsigned long long* flag, unsigned long long epoch, const unsigned int* stop) {
  const volatile unsigned long long* f = flag;
  const volatile unsigned int* s = stop;
  for (unsigned int rounds = 1; *f < epoch; ++rounds) {
    __nanosleep(32);
    if ((rounds & 127) == 0 && s && *s) break;
  }
}

__device__ void gather_meet(const GatherLaunch& g, unsigned long long epoch) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    if (atomicAdd(g.arrive, 1u) == gridDim.x - 1) {
      atomicExch(g.arrive, 0u);
      __threadfence_system();
      *reinterpret_cast<volatile unsigned long long*>(g.flag[g.me]) = epoch;
    }
  }
  if (int(threadIdx.x) < g.ranks) {
    gather_wait(g.flag[threadIdx.x], epoch, g.stop);
    __threadfence_system();
  }
  __syncthreads();
}

// The grid copies `bytes` bytes, 16 at a time where both ends allow it; loads bypass L1 (the
// peers wrote the source during this kernel).
__device__ void gather_copy(char* dst, const char* src, size_t bytes, size_t first, size_t stride) {
  size_t done = 0;
  if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16) == 0) {
    const size_t packs = bytes / 16;
    for (size_t p = first; p < packs; p += stride)
      reinterpret_cast<uint4*>(dst)[p] = __ldcg(reinterpret_cast<const uint4*>(src) + p);
    done = packs * 16;
  }
  for (size_t i = done + first; i < bytes; i += stride) dst[i] = __ldcg(src + i);
}

__global__ void __launch_bounds__(kGatherThreads) gather_kernel(GatherLaunch g) {
  __shared__ unsigned long long epoch;
  if (threadIdx.x == 0) epoch = *reinterpret_cast<volatile unsigned long long*>(g.flag[g.me]);
  __syncthreads();
  const unsigned long long start = epoch;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  const size_t pieces = (g.bytes + g.per - 1) / g.per;
  for (size_t k = 0; k < pieces; ++k) {
    const size_t off = k * g.per, n = g.bytes - off < g.per ? g.bytes - off : g.per;
    char* const* slot = k % 2 == 0 ? g.slot : g.slot_next;
    if (g.own_in) gather_copy(slot[g.me], g.own_in + off, n, first, stride);
    gather_meet(g, start + k + 1);
    for (int q = 0; q < g.ranks; ++q) {
      if (!g.out[q]) continue;
      const char* from = q == g.me && g.own_in ? g.own_in + off : slot[q];
      gather_copy(g.out[q] + off, from, n, first, stride);
    }
  }
}

}  // namespace

cudaError_t preload_gather() {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, gather_kernel);
}

cudaError_t launch_gather(const GatherLaunch& g, cudaStream_t s) {
  if (g.bytes == 0 || g.per == 0) return cudaSuccess;
  const size_t work = std::min(g.per, g.bytes) / 16 + 1;  // 16-byte copies of a piece
  const size_t cap = std::max<size_t>(1, 128 / size_t(g.ranks));
  const auto blocks = unsigned(std::min(cap, (work + kGatherThreads - 1) / kGatherThreads));
  gather_kernel<<<blocks, kGatherThreads, 0, s>>>(g);
  return cudaGetLastError();
}

}  // namespace weft::coll::gpu
