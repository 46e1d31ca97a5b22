/*
 * gpu_bench_kernels.h - the few CUDA kernels the GPU benchmark programs need
 * (gpu_allreduce, nccl_allreduce, gpu_floors, ddp_overlap_gpu), behind a C interface so that the
 * programs themselves stay plain C on top of the CUDA runtime API.
 *
 * Data pattern: element i of rank r holds (i % 13) + r + 1.  After a sum over
 * p ranks element i must hold p * (i % 13) + p * (p + 1) / 2: small integers,
 * exact in int32, float and double, so the check compares for equality.
 */
#ifndef WEFT_GPU_BENCH_KERNELS_H
#define WEFT_GPU_BENCH_KERNELS_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GB_INT32 = 0, GB_FLOAT, GB_DOUBLE } gb_type;

size_t gb_type_size(gb_type t);
const char *gb_type_name(gb_type t);

/* One empty kernel (1 block, 1 thread) on `stream`. */
cudaError_t gb_launch_empty(cudaStream_t stream);

/* One thread that spins for `ns` nanoseconds of the GPU's clock, on `stream`. */
cudaError_t gb_spin(unsigned long long ns, cudaStream_t stream);

/* buf[i] = (i % 13) + rank + 1 for i < count, on `stream`. */
cudaError_t gb_fill(void *buf, size_t count, gb_type t, int rank, cudaStream_t stream);

/*
 * Count the elements of buf[0, count) that differ from the sum over `nranks`
 * ranks of gb_fill's pattern; the number is written to *wrong (host) after a
 * synchronisation of `stream`.  `scratch` is a device word the caller owns.
 */
cudaError_t gb_check(const void *buf, size_t count, gb_type t, int nranks,
                     unsigned long long *scratch, cudaStream_t stream,
                     unsigned long long *wrong);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_GPU_BENCH_KERNELS_H */
