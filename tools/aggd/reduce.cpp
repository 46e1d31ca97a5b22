// Reduction kernels, one template instance per (type, operation).
#include "tools/aggd/reduce.h"

#include <cstring>
#include <type_traits>

#include "tools/aggd/wire.h"

namespace weft::aggd {

namespace {

// Sums and products of signed integers go through the unsigned type: they wrap instead of
// overflowing (undefined behaviour).
template <class T>
struct ArithOf {
  using type = T;
};
template <class T>
  requires std::is_integral_v<T>
struct ArithOf<T> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Arith = typename ArithOf<T>::type;

template <class T, uint32_t Op>
T combine(T a, T b) {
  if constexpr (Op == WEFT_OFFLOAD_SUM) return T(Arith<T>(a) + Arith<T>(b));
  if constexpr (Op == WEFT_OFFLOAD_PROD) return T(Arith<T>(a) * Arith<T>(b));
  if constexpr (Op == WEFT_OFFLOAD_MIN) return b < a ? b : a;
  if constexpr (Op == WEFT_OFFLOAD_MAX) return a < b ? b : a;
  if constexpr (std::is_integral_v<T>) {
    if constexpr (Op == WEFT_OFFLOAD_BAND) return a & b;
    if constexpr (Op == WEFT_OFFLOAD_BOR) return a | b;
    if constexpr (Op == WEFT_OFFLOAD_BXOR) return a ^ b;
  }
  return a;  // not reached: bitwise operations on floats are refused before
}

template <class T, uint32_t Op>
void kernel(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const size_t n = bytes / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, d + i * sizeof(T), sizeof(T));  // memcpy: FRAG payloads are not aligned
    std::memcpy(&b, s + i * sizeof(T), sizeof(T));
    a = combine<T, Op>(a, b);
    std::memcpy(d + i * sizeof(T), &a, sizeof(T));
  }
}

template <class T>
void by_op(uint32_t op, void* dst, const void* src, size_t bytes) {
  switch (op) {
    case WEFT_OFFLOAD_SUM: return kernel<T, WEFT_OFFLOAD_SUM>(dst, src, bytes);
    case WEFT_OFFLOAD_PROD: return kernel<T, WEFT_OFFLOAD_PROD>(dst, src, bytes);
    case WEFT_OFFLOAD_MIN: return kernel<T, WEFT_OFFLOAD_MIN>(dst, src, bytes);
    case WEFT_OFFLOAD_MAX: return kernel<T, WEFT_OFFLOAD_MAX>(dst, src, bytes);
    case WEFT_OFFLOAD_BAND: return kernel<T, WEFT_OFFLOAD_BAND>(dst, src, bytes);
    case WEFT_OFFLOAD_BOR: return kernel<T, WEFT_OFFLOAD_BOR>(dst, src, bytes);
    case WEFT_OFFLOAD_BXOR: return kernel<T, WEFT_OFFLOAD_BXOR>(dst, src, bytes);
  }
}

}  // namespace

bool reduction_supported(uint32_t dtype, uint32_t op) {
  if (dtype >= WEFT_OFFLOAD_DTYPE_COUNT || op >= WEFT_OFFLOAD_OP_COUNT) return false;
  return !(is_float(dtype) && is_bitwise(op));
}

void reduce_into(uint32_t dtype, uint32_t op, void* dst, const void* src, size_t bytes) {
  switch (dtype) {
    case WEFT_OFFLOAD_INT32: return by_op<int32_t>(op, dst, src, bytes);
    case WEFT_OFFLOAD_UINT32: return by_op<uint32_t>(op, dst, src, bytes);
    case WEFT_OFFLOAD_INT64: return by_op<int64_t>(op, dst, src, bytes);
    case WEFT_OFFLOAD_UINT64: return by_op<uint64_t>(op, dst, src, bytes);
    case WEFT_OFFLOAD_FLOAT32: return by_op<float>(op, dst, src, bytes);
    case WEFT_OFFLOAD_FLOAT64: return by_op<double>(op, dst, src, bytes);
  }
}

}  // namespace weft::aggd
