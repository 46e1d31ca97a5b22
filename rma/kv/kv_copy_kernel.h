// One kernel that moves a whole list of device-accessible copies (the blocks of a KV request
// between local and peer GPU memory): one launch per post instead of one copy call per block.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace weft::kv {

struct CopyChunk {
  const char* src;
  char* dst;
  uint64_t bytes;
};

// Copies chunks[0, count) (device memory) on stream; chunks should be at most a few MiB each,
// since one thread block copies one chunk at a time.
cudaError_t launch_copy_chunks(const CopyChunk* chunks, uint64_t count, cudaStream_t stream);

// Device-side signals: adds 1 to *word after a system-wide fence (everything the stream did
// before is visible first); waits until *word >= value, or until *stop (host memory mapped
// for the device) exceeds generation.
cudaError_t launch_signal_add(unsigned long long* word, cudaStream_t stream);
cudaError_t launch_signal_wait(const unsigned long long* word, unsigned long long value, const unsigned int* stop,
                               unsigned int generation, cudaStream_t stream);

}  // namespace weft::kv
