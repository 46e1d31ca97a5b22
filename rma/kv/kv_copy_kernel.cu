// The batched copy kernel of KV requests (kv_copy_kernel.h).
#include "kv_copy_kernel.h"

namespace weft::kv {

namespace {

constexpr int kThreads = 512;
constexpr uint64_t kMaxBlocks = 1024;

__global__ void copy_chunks(const CopyChunk* __restrict__ chunks, uint64_t count) {
  for (uint64_t c = blockIdx.x; c < count; c += gridDim.x) {
    const CopyChunk k = chunks[c];
    uint64_t done = 0;
    if (((reinterpret_cast<uintptr_t>(k.src) | reinterpret_cast<uintptr_t>(k.dst)) & 15) == 0) {
      const uint64_t vectors = k.bytes / 16;
      const int4* s = reinterpret_cast<const int4*>(k.src);
      int4* d = reinterpret_cast<int4*>(k.dst);
      for (uint64_t i = threadIdx.x; i < vectors; i += blockDim.x) d[i] = s[i];
      done = vectors * 16;
    }
    for (uint64_t i = done + threadIdx.x; i < k.bytes; i += blockDim.x) k.dst[i] = k.src[i];
  }
}

__global__ void signal_add(unsigned long long* word) {
  __threadfence_system();
  atomicAdd(word, 1ull);
  __threadfence_system();
}

__global__ void signal_wait(const unsigned long long* word, unsigned long long value, const unsigned int* stop,
                            unsigned int generation) {
  const volatile unsigned long long* w = word;
  const volatile unsigned int* s = stop;
  for (unsigned int rounds = 1; *w < value; ++rounds) {
    __nanosleep(256);
    if ((rounds & 63) == 0 && *s > generation) break;  // host memory: read now and then
  }
  __threadfence_system();
}

}  // namespace

cudaError_t launch_signal_add(unsigned long long* word, cudaStream_t stream) {
  signal_add<<<1, 1, 0, stream>>>(word);
  return cudaGetLastError();
}

cudaError_t launch_signal_wait(const unsigned long long* word, unsigned long long value, const unsigned int* stop,
                               unsigned int generation, cudaStream_t stream) {
  signal_wait<<<1, 1, 0, stream>>>(word, value, stop, generation);
  return cudaGetLastError();
}

cudaError_t launch_copy_chunks(const CopyChunk* chunks, uint64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = unsigned(count < kMaxBlocks ? count : kMaxBlocks);
  copy_chunks<<<blocks, kThreads, 0, stream>>>(chunks, count);
  return cudaGetLastError();
}

}  // namespace weft::kv
