// The one-launch copy collectives (gather_kernel.h). The meeting is the fused allreduce's
// (runtime/device_meet.cuh). One meeting a piece keeps the slot rule (workspace.h): a rank
// writes the slot of piece n + 2 only after piece n + 1's meeting, which every peer entered
// after reading piece n.
#include "gather_kernel.h"

#include <algorithm>
#include <cstdint>

#include "runtime/device_meet.cuh"

namespace weft::coll::gpu {

namespace {

constexpr int kGatherThreads = 512;

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
    if (g.own_in) device::grid_copy(slot[g.me], g.own_in + off, n, first, stride);
    device::grid_meet(g.arrive, g.flag, g.me, g.ranks, g.stop, start + k + 1);
    for (int q = 0; q < g.ranks; ++q) {
      if (!g.out[q]) continue;
      const char* from = q == g.me && g.own_in ? g.own_in + off : slot[q];
      device::grid_copy(g.out[q] + off, from, n, first, stride);
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
