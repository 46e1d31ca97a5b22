// Kernels for tests/gpu/stream_enqueue.c, callable from C.
#include <cuda_runtime_api.h>

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread spins until `ns` nanoseconds of the GPU's global timer have passed.
__global__ void spin(unsigned long long ns) {
  const unsigned long long until = global_ns() + ns;
  while (global_ns() < until) {
  }
}

__global__ void fill(int* buf, size_t n, int rank, int salt) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    buf[i] = int(i % 1000) + rank * 7 + salt;
}

__global__ void derive(const int* in, int* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] * 2 + 1;
}

unsigned blocks_for(size_t n) {
  const size_t b = (n + 255) / 256;
  return unsigned(b == 0 ? 1 : b > 1024 ? 1024 : b);
}

}  // namespace

extern "C" {

cudaError_t test_spin(cudaStream_t s, unsigned long long ns) {
  spin<<<1, 1, 0, s>>>(ns);
  return cudaGetLastError();
}

// buf[i] = i % 1000 + rank * 7 + salt
cudaError_t test_fill(int* buf, size_t n, int rank, int salt, cudaStream_t s) {
  fill<<<blocks_for(n), 256, 0, s>>>(buf, n, rank, salt);
  return cudaGetLastError();
}

// out[i] = in[i] * 2 + 1
cudaError_t test_derive(const int* in, int* out, size_t n, cudaStream_t s) {
  derive<<<blocks_for(n), 256, 0, s>>>(in, out, n);
  return cudaGetLastError();
}

}  // extern "C"
