/*
 * gpu_bench_kernels.cu - kernels of the GPU benchmark programs; see
 * gpu_bench_kernels.h.
 */
#include "gpu_bench_kernels.h"

#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

int blocks_for(size_t count)
{
    size_t b = (count + kThreads - 1) / kThreads;
    if (b < 1)
        b = 1;
    return b > (size_t)kMaxBlocks ? kMaxBlocks : (int)b;
}

__global__ void empty_kernel() {}

// One thread that spins on the GPU's nanosecond timer: a stand-in for a compute kernel of a
// given duration that occupies one SM's slot, not the whole GPU.
__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

template <typename T>
__global__ void fill_kernel(T *buf, size_t count, int rank)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        buf[i] = (T)((int)(i % 13) + rank + 1);
}

template <typename T>
__global__ void check_kernel(const T *buf, size_t count, int nranks, unsigned long long *wrong)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const long long base = (long long)nranks * (nranks + 1) / 2;
    unsigned long long mine = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        const T expect = (T)((long long)nranks * (long long)(i % 13) + base);
        if (!(buf[i] == expect))
            ++mine;
    }
    if (mine != 0)
        atomicAdd(wrong, mine);
}

template <typename T>
cudaError_t fill_as(void *buf, size_t count, int rank, cudaStream_t s)
{
    if (count == 0)
        return cudaSuccess;
    fill_kernel<T><<<blocks_for(count), kThreads, 0, s>>>(static_cast<T *>(buf), count, rank);
    return cudaGetLastError();
}

template <typename T>
cudaError_t check_as(const void *buf, size_t count, int nranks, unsigned long long *scratch,
                     cudaStream_t s)
{
    if (count == 0)
        return cudaSuccess;
    check_kernel<T><<<blocks_for(count), kThreads, 0, s>>>(static_cast<const T *>(buf), count,
                                                           nranks, scratch);
    return cudaGetLastError();
}

} // namespace

extern "C" size_t gb_type_size(gb_type t)
{
    switch (t) {
    case GB_INT32: return sizeof(int32_t);
    case GB_FLOAT: return sizeof(float);
    case GB_DOUBLE: return sizeof(double);
    }
    return 1;
}

extern "C" const char *gb_type_name(gb_type t)
{
    switch (t) {
    case GB_INT32: return "int32";
    case GB_FLOAT: return "float";
    case GB_DOUBLE: return "double";
    }
    return "?";
}

extern "C" cudaError_t gb_launch_empty(cudaStream_t stream)
{
    empty_kernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}

extern "C" cudaError_t gb_spin(unsigned long long ns, cudaStream_t stream)
{
    spin_kernel<<<1, 1, 0, stream>>>(ns);
    return cudaGetLastError();
}

extern "C" cudaError_t gb_fill(void *buf, size_t count, gb_type t, int rank, cudaStream_t stream)
{
    switch (t) {
    case GB_INT32: return fill_as<int32_t>(buf, count, rank, stream);
    case GB_FLOAT: return fill_as<float>(buf, count, rank, stream);
    case GB_DOUBLE: return fill_as<double>(buf, count, rank, stream);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t gb_check(const void *buf, size_t count, gb_type t, int nranks,
                                unsigned long long *scratch, cudaStream_t stream,
                                unsigned long long *wrong)
{
    cudaError_t e = cudaMemsetAsync(scratch, 0, sizeof(*scratch), stream);
    if (e != cudaSuccess)
        return e;
    switch (t) {
    case GB_INT32: e = check_as<int32_t>(buf, count, nranks, scratch, stream); break;
    case GB_FLOAT: e = check_as<float>(buf, count, nranks, scratch, stream); break;
    case GB_DOUBLE: e = check_as<double>(buf, count, nranks, scratch, stream); break;
    default: e = cudaErrorInvalidValue; break;
    }
    if (e != cudaSuccess)
        return e;
    e = cudaMemcpyAsync(wrong, scratch, sizeof(*wrong), cudaMemcpyDeviceToHost, stream);
    if (e != cudaSuccess)
        return e;
    return cudaStreamSynchronize(stream);
}
