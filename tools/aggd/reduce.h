// Elementwise reduction of one fragment into another: every weft_offload_dtype_t x
// weft_offload_op_t the daemon offers. Integer arithmetic wraps (two's complement).
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::aggd {

// Whether the pair is one the daemon reduces (bitwise operations only on integer types).
bool reduction_supported(uint32_t dtype, uint32_t op);

// dst[i] = dst[i] op src[i] for bytes / element size elements. src may be unaligned; bytes is a
// multiple of the element size and the pair is supported (the caller has checked both).
void reduce_into(uint32_t dtype, uint32_t op, void* dst, const void* src, size_t bytes);

}  // namespace weft::aggd
