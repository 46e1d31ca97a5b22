// The flag barrier kernel's launcher (flags.cu; C++17 for nvcc, so it sees no other coll
// header). flags[q]: rank q's epoch word, mapped here. stop: the workspace's stop word (host
// memory mapped for the device); every wait ends early once it is non-zero.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace weft::coll::gpu {

constexpr int kFlagRanks = 32;  // = kMaxRanks (gpu_coll.h)

// Loads the barrier kernel and the point-to-point flag kernels now (see reduce_device_preload).
cudaError_t preload_flag_barrier();

// Publishes flags[me] + 1 (the next epoch) and waits until every flags[q] has reached it.
cudaError_t launch_flag_barrier(unsigned long long* const* flags, int me, int p, const unsigned int* stop,
                                cudaStream_t s);
// The same, but waiting for rank `peer`'s flag alone (this rank still publishes its epoch).
cudaError_t launch_flag_wait_one(unsigned long long* const* flags, int me, int p, int peer, const unsigned int* stop,
                                 cudaStream_t s);

// The point-to-point words (MPIX_Send/Recv_enqueue; one-thread kernels, in stream order):
// stores v at a after a system-wide fence (everything the stream did before is complete and
// visible first), or spins until *a >= v (64-bit word) / *a == v (32-bit word).
cudaError_t launch_flag_store(unsigned long long* a, uint64_t v, cudaStream_t s);
cudaError_t launch_flag_store32(unsigned int* a, uint32_t v, cudaStream_t s);
cudaError_t launch_flag_wait_geq(const unsigned long long* a, uint64_t v, const unsigned int* stop, cudaStream_t s);
cudaError_t launch_flag_wait_eq32(const unsigned int* a, uint32_t v, const unsigned int* stop, cudaStream_t s);
// The captured point-to-point words (counted on the device, so a replayed CUDA graph counts
// on): *a += 1 after a system-wide fence (a's only writer); spin until *watched >= *base + delta.
cudaError_t launch_flag_increment(unsigned long long* a, cudaStream_t s);
cudaError_t launch_flag_wait_relative(const unsigned long long* watched, const unsigned long long* base, int64_t delta,
                                      const unsigned int* stop, cudaStream_t s);

}  // namespace weft::coll::gpu
