// GPU reduction kernels, generated from one list of types and one list of ops. Each thread
// reduces 16-byte packs (one vectorised load per operand) where both buffers are 16-byte
// aligned, and single elements for the rest. half and bfloat16 compute in float and round
// back to nearest even, as the host would.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "log.h"
#include "op_gpu.h"

namespace weft {

namespace {

template <class T> struct Compute { using type = T; };
template <> struct Compute<__half> { using type = float; };
template <> struct Compute<__nv_bfloat16> { using type = float; };

template <class T> __device__ inline typename Compute<T>::type widen(T v) { return v; }
template <> __device__ inline float widen(__half v) { return __half2float(v); }
template <> __device__ inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ inline T narrow(typename Compute<T>::type v) { return T(v); }
template <> __device__ inline __half narrow<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// The ops, on the computing type.
struct Sum { template <class C> __device__ static C apply(C a, C b) { return a + b; } };
struct Prod { template <class C> __device__ static C apply(C a, C b) { return a * b; } };
struct Min { template <class C> __device__ static C apply(C a, C b) { return b < a ? b : a; } };
struct Max { template <class C> __device__ static C apply(C a, C b) { return b > a ? b : a; } };
struct Band { template <class C> __device__ static C apply(C a, C b) { return a & b; } };
struct Bor { template <class C> __device__ static C apply(C a, C b) { return a | b; } };
struct Bxor { template <class C> __device__ static C apply(C a, C b) { return a ^ b; } };
struct Land { template <class C> __device__ static C apply(C a, C b) { return C(a && b); } };
struct Lor { template <class C> __device__ static C apply(C a, C b) { return C(a || b); } };
struct Lxor { template <class C> __device__ static C apply(C a, C b) { return C(!a != !b); } };

template <class T> struct alignas(16) Pack { T v[16 / sizeof(T)]; };

template <class T, class Op>
__global__ void reduce_kernel(const T* __restrict__ in, T* __restrict__ inout, size_t count, bool packed) {
  constexpr size_t kPer = 16 / sizeof(T);
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  size_t done = 0;
  if (packed) {
    const size_t packs = count / kPer;
    auto* a = reinterpret_cast<const Pack<T>*>(in);
    auto* b = reinterpret_cast<Pack<T>*>(inout);
    for (size_t p = first; p < packs; p += stride) {
      const Pack<T> x = a[p];
      Pack<T> y = b[p];
#pragma unroll
      for (size_t k = 0; k < kPer; ++k) y.v[k] = narrow<T>(Op::apply(widen(x.v[k]), widen(y.v[k])));
      b[p] = y;
    }
    done = packs * kPer;
  }
  for (size_t i = done + first; i < count; i += stride) inout[i] = narrow<T>(Op::apply(widen(in[i]), widen(inout[i])));
}

template <class T, class Op>
Status launch(const void* in, void* inout, size_t count, cudaStream_t stream) {
  constexpr size_t kPer = 16 / sizeof(T), kThreads = 256, kMaxBlocks = 1024;
  const bool packed = (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(inout)) % 16 == 0;
  const size_t work = packed ? count / kPer + kPer : count;
  const unsigned blocks = unsigned(std::min(kMaxBlocks, (work + kThreads - 1) / kThreads));
  reduce_kernel<T, Op><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(inout), count, packed);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    WEFT_ERROR(Subsys::gpu, "reduction kernel launch failed: %s", cudaGetErrorString(err));
    return Status::internal;
  }
  return Status::ok;
}

// The op list: which ops a kind of type takes.
template <class T>
Status by_op(ReduceOp op, const void* in, void* inout, size_t count, cudaStream_t s) {
  switch (op) {
    case ReduceOp::sum: return launch<T, Sum>(in, inout, count, s);
    case ReduceOp::prod: return launch<T, Prod>(in, inout, count, s);
    case ReduceOp::min: return launch<T, Min>(in, inout, count, s);
    case ReduceOp::max: return launch<T, Max>(in, inout, count, s);
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::band: return launch<T, Band>(in, inout, count, s);
      case ReduceOp::bor: return launch<T, Bor>(in, inout, count, s);
      case ReduceOp::bxor: return launch<T, Bxor>(in, inout, count, s);
      case ReduceOp::land: return launch<T, Land>(in, inout, count, s);
      case ReduceOp::lor: return launch<T, Lor>(in, inout, count, s);
      case ReduceOp::lxor: return launch<T, Lxor>(in, inout, count, s);
      default: break;
    }
  }
  return Status::invalid_op;
}

bool is_arithmetic(ReduceOp op) {
  return op == ReduceOp::sum || op == ReduceOp::prod || op == ReduceOp::min || op == ReduceOp::max;
}

bool is_integer_only(ReduceOp op) {
  return op == ReduceOp::band || op == ReduceOp::bor || op == ReduceOp::bxor || op == ReduceOp::land ||
         op == ReduceOp::lor || op == ReduceOp::lxor;
}

}  // namespace

bool reduce_device_supports(ReduceOp op, BasicType type) {
  switch (type) {
    case BasicType::i8: case BasicType::u8: case BasicType::i16: case BasicType::u16:
    case BasicType::i32: case BasicType::u32: case BasicType::i64: case BasicType::u64:
      return is_arithmetic(op) || is_integer_only(op);
    case BasicType::f16: case BasicType::bf16: case BasicType::f32: case BasicType::f64:
      return is_arithmetic(op);
    default: return false;
  }
}

// The type list.
Status reduce_device(ReduceOp op, BasicType type, const void* in, void* inout, size_t count, void* stream) {
  if (!reduce_device_supports(op, type)) {
    set_error_detail(std::string("reduction ") + reduce_op_name(op) + " on " + basic_type_name(type) +
                     " has no GPU kernel");
    return Status::invalid_op;
  }
  if (count == 0) return Status::ok;
  auto s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case BasicType::i8: return by_op<int8_t>(op, in, inout, count, s);
    case BasicType::u8: return by_op<uint8_t>(op, in, inout, count, s);
    case BasicType::i16: return by_op<int16_t>(op, in, inout, count, s);
    case BasicType::u16: return by_op<uint16_t>(op, in, inout, count, s);
    case BasicType::i32: return by_op<int32_t>(op, in, inout, count, s);
    case BasicType::u32: return by_op<uint32_t>(op, in, inout, count, s);
    case BasicType::i64: return by_op<int64_t>(op, in, inout, count, s);
    case BasicType::u64: return by_op<uint64_t>(op, in, inout, count, s);
    case BasicType::f16: return by_op<__half>(op, in, inout, count, s);
    case BasicType::bf16: return by_op<__nv_bfloat16>(op, in, inout, count, s);
    case BasicType::f32: return by_op<float>(op, in, inout, count, s);
    case BasicType::f64: return by_op<double>(op, in, inout, count, s);
    default: return Status::invalid_op;
  }
}

}  // namespace weft
