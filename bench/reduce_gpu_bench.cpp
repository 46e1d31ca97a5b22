// GPU reduction kernel throughput against the copy roofline, measured in the same run: for
// each size, the float sum kernel (reads two vectors, writes one: 3n bytes) and a
// device-to-device cudaMemcpy of n bytes (reads and writes: 2n bytes), each the median of 20
// runs timed with CUDA events. Prints size, kernel time, both rates and their ratio.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "runtime/op_gpu.h"

namespace {

template <class F>
float median_ms(F&& run) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  for (int i = 0; i < 23; ++i) {
    cudaEventRecord(start);
    run();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    if (i >= 3) ms.push_back(t);  // three warm-ups
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  printf("# %s; float sum kernel vs device-to-device copy (median of 20)\n", prop.name);
  printf("%12s %12s %14s %14s %8s\n", "bytes", "kernel us", "kernel GB/s", "memcpy GB/s", "ratio");
  const size_t largest = size_t(1) << 30;
  char *a = nullptr, *b = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&a), largest) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void**>(&b), largest) != cudaSuccess) {
    printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(a, 0, largest);
  cudaMemset(b, 0, largest);
  for (size_t bytes = size_t(1) << 20; bytes <= largest; bytes *= 4) {
    const float kernel = median_ms([&] {
      (void)weft::reduce_device(weft::ReduceOp::sum, weft::BasicType::f32, a, b, bytes / sizeof(float), nullptr);
    });
    const float copy = median_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); });
    const double kernel_rate = 3.0 * double(bytes) / (kernel * 1e6), copy_rate = 2.0 * double(bytes) / (copy * 1e6);
    printf("%12zu %12.1f %14.1f %14.1f %8.2f\n", bytes, kernel * 1e3, kernel_rate, copy_rate, kernel_rate / copy_rate);
  }
  cudaFree(a);
  cudaFree(b);
  return 0;
}
