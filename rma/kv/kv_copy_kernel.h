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

}  // namespace weft::kv
