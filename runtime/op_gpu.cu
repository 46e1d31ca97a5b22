// GPU reduction kernels, generated from one list of types and one list of ops. Each thread
// reduces 16-byte packs (one vectorised load per operand) where both buffers are 16-byte
// aligned, and single elements for the rest. half and bfloat16 compute in float and round
// back to nearest even, as the host would.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

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

// Each thread folds every input's 16-byte pack (or element) in rank order and stores it into
// every output (usually one).
template <class T, class Op>
__global__ void reduce_multi_kernel(DeviceInputs ins, DeviceOutputs outs, size_t count, bool packed) {
  constexpr size_t kPer = 16 / sizeof(T);
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  size_t done = 0;
  if (packed) {
    const size_t packs = count / kPer;
    for (size_t p = first; p < packs; p += stride) {
      Pack<T> acc = static_cast<const Pack<T>*>(ins.in[0])[p];
      for (int k = 1; k < ins.count; ++k) {
        const Pack<T> x = static_cast<const Pack<T>*>(ins.in[k])[p];
#pragma unroll
        for (size_t j = 0; j < kPer; ++j) acc.v[j] = narrow<T>(Op::apply(widen(acc.v[j]), widen(x.v[j])));
      }
      for (int o = 0; o < outs.count; ++o) static_cast<Pack<T>*>(outs.out[o])[p] = acc;
    }
    done = packs * kPer;
  }
  for (size_t i = done + first; i < count; i += stride) {
    T acc = static_cast<const T*>(ins.in[0])[i];
    for (int k = 1; k < ins.count; ++k) acc = narrow<T>(Op::apply(widen(acc), widen(static_cast<const T*>(ins.in[k])[i])));
    for (int o = 0; o < outs.count; ++o) static_cast<T*>(outs.out[o])[i] = acc;
  }
}

// One block: every thread copies its share of `own` into this rank's input and fences it, then
// thread 0 publishes the next epoch (its flag plus one) and thread q waits for rank q's; after the block meets again,
// every input is complete.
template <class T, class Op>
__global__ void fused_one_shot_kernel(const T* own, DeviceInputs ins, DeviceFlags flags, T* out, size_t count) {
  const int t = int(threadIdx.x);
  T* mine = static_cast<T*>(const_cast<void*>(ins.in[flags.me]));
  for (size_t i = size_t(t); i < count; i += blockDim.x) mine[i] = own[i];
  __shared__ unsigned long long epoch;
  __threadfence_system();
  __syncthreads();
  if (t == 0) {  // this rank's next epoch: only its own barriers, in stream order, write the word
    volatile unsigned long long* own = flags.at[flags.me];
    epoch = *own + 1;
    *own = epoch;
  }
  __syncthreads();
  if (t < ins.count && t != flags.me) {
    const volatile unsigned long long* f = flags.at[t];
    const volatile unsigned int* stop = flags.stop;
    // The stop word lives in host memory: read every 128 rounds.
    for (unsigned int rounds = 1; *f < epoch; ++rounds) {
      __nanosleep(32);
      if ((rounds & 127) == 0 && stop && *stop) break;
    }
  }
  __syncthreads();
  __threadfence_system();
  for (size_t i = size_t(t); i < count; i += blockDim.x) {
    // Plain loads: this kernel has not touched the peers' inputs before the barrier, so no
    // stale line of them sits in L1.
    T acc = static_cast<const T*>(ins.in[0])[i];
    for (int k = 1; k < ins.count; ++k) acc = narrow<T>(Op::apply(widen(acc), widen(static_cast<const T*>(ins.in[k])[i])));
    out[i] = acc;
  }
}

Status launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    WEFT_ERROR(Subsys::gpu, "%s kernel launch failed: %s", what, cudaGetErrorString(err));
    return Status::internal;
  }
  return Status::ok;
}

constexpr size_t kThreads = 256, kMaxBlocks = 1024;
unsigned blocks_for(size_t work) { return unsigned(std::min(kMaxBlocks, (work + kThreads - 1) / kThreads)); }

// The launchers, one per kind of call; go<Op>() launches the (T, Op) kernel.
template <class T>
struct Pairwise {
  const void* in;
  void* inout;
  size_t count;
  cudaStream_t stream;
  template <class Op> Status go() const {
    constexpr size_t kPer = 16 / sizeof(T);
    const bool packed = (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(inout)) % 16 == 0;
    reduce_kernel<T, Op><<<blocks_for(packed ? count / kPer + kPer : count), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(inout), count, packed);
    return launched("reduction");
  }
};

template <class T>
struct Multi {
  const DeviceInputs* ins;
  const DeviceOutputs* outs;
  size_t count;
  cudaStream_t stream;
  template <class Op> Status go() const {
    constexpr size_t kPer = 16 / sizeof(T);
    uintptr_t bits = 0;
    for (int k = 0; k < ins->count; ++k) bits |= reinterpret_cast<uintptr_t>(ins->in[k]);
    for (int o = 0; o < outs->count; ++o) bits |= reinterpret_cast<uintptr_t>(outs->out[o]);
    const bool packed = bits % 16 == 0;
    reduce_multi_kernel<T, Op><<<blocks_for(packed ? count / kPer + kPer : count), kThreads, 0, stream>>>(
        *ins, *outs, count, packed);
    return launched("multi-input reduction");
  }
};

template <class T>
struct FusedOneShot {
  const void* own;
  const DeviceInputs* ins;
  const DeviceFlags* flags;
  void* out;
  size_t count;
  cudaStream_t stream;
  template <class Op> Status go() const {
    fused_one_shot_kernel<T, Op><<<1, 512, 0, stream>>>(static_cast<const T*>(own), *ins, *flags,
                                                         static_cast<T*>(out), count);
    return launched("fused one-shot allreduce");
  }
};

template <class T>
struct Preload {
  template <class Op> Status go() const {
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, reduce_multi_kernel<T, Op>) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, fused_one_shot_kernel<T, Op>) != cudaSuccess)
      return launched("loading the reduction kernels");
    return Status::ok;
  }
};

// The op list: which ops a kind of type takes.
template <class T, class L>
Status by_op(ReduceOp op, const L& l) {
  switch (op) {
    case ReduceOp::sum: return l.template go<Sum>();
    case ReduceOp::prod: return l.template go<Prod>();
    case ReduceOp::min: return l.template go<Min>();
    case ReduceOp::max: return l.template go<Max>();
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ReduceOp::band: return l.template go<Band>();
      case ReduceOp::bor: return l.template go<Bor>();
      case ReduceOp::bxor: return l.template go<Bxor>();
      case ReduceOp::land: return l.template go<Land>();
      case ReduceOp::lor: return l.template go<Lor>();
      case ReduceOp::lxor: return l.template go<Lxor>();
      default: break;
    }
  }
  return Status::invalid_op;
}

// The type list, X(tag, type): the integers (every op) and the floating types (the arithmetic
// ops), half and bfloat16 on the GPU only.
#define WEFT_GPU_FLOAT_TYPES(X) X(f16, __half) X(bf16, __nv_bfloat16) WEFT_REAL_TYPES(X)
#define WEFT_GPU_TYPES(X) WEFT_INTEGER_TYPES(X) WEFT_GPU_FLOAT_TYPES(X)

template <template <class> class L, class... Args>
Status by_type(BasicType type, ReduceOp op, Args... args) {
  switch (type) {
#define WEFT_BY_OP_CASE(tag, T) case BasicType::tag: return by_op<T>(op, L<T>{args...});
    WEFT_GPU_TYPES(WEFT_BY_OP_CASE)
#undef WEFT_BY_OP_CASE
    default: return Status::invalid_op;
  }
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
#define WEFT_TYPE_CASE(tag, T) case BasicType::tag:
    WEFT_INTEGER_TYPES(WEFT_TYPE_CASE) return is_arithmetic(op) || is_integer_only(op);
    WEFT_GPU_FLOAT_TYPES(WEFT_TYPE_CASE) return is_arithmetic(op);
#undef WEFT_TYPE_CASE
    default: return false;
  }
}

static Status unsupported_pair(ReduceOp op, BasicType type) {
  set_error_detail(std::string("reduction ") + reduce_op_name(op) + " on " + basic_type_name(type) +
                   " has no GPU kernel");
  return Status::invalid_op;
}

Status reduce_device(ReduceOp op, BasicType type, const void* in, void* inout, size_t count, void* stream) {
  if (!reduce_device_supports(op, type)) return unsupported_pair(op, type);
  if (count == 0) return Status::ok;
  return by_type<Pairwise>(type, op, in, inout, count, static_cast<cudaStream_t>(stream));
}

Status reduce_device_multi(ReduceOp op, BasicType type, const DeviceInputs& inputs, void* out, size_t count,
                           void* stream) {
  DeviceOutputs outputs;
  outputs.out[0] = out;
  outputs.count = 1;
  return reduce_device_multi_out(op, type, inputs, outputs, count, stream);
}

Status reduce_device_multi_out(ReduceOp op, BasicType type, const DeviceInputs& inputs, const DeviceOutputs& outputs,
                               size_t count, void* stream) {
  if (!reduce_device_supports(op, type)) return unsupported_pair(op, type);
  if (inputs.count < 1 || inputs.count > kReduceMaxInputs || outputs.count < 1 || outputs.count > kReduceMaxInputs) {
    set_error_detail("multi-input reduction of " + std::to_string(inputs.count) + " inputs into " +
                     std::to_string(outputs.count) + " outputs");
    return Status::invalid_arg;
  }
  if (count == 0) return Status::ok;
  return by_type<Multi>(type, op, &inputs, &outputs, count, static_cast<cudaStream_t>(stream));
}

Status reduce_device_fused_one_shot(ReduceOp op, BasicType type, const void* own, const DeviceInputs& inputs,
                                   const DeviceFlags& flags, void* out, size_t count, void* stream) {
  if (!reduce_device_supports(op, type)) return unsupported_pair(op, type);
  if (inputs.count < 1 || inputs.count > kReduceMaxInputs || flags.me < 0 || flags.me >= inputs.count) {
    set_error_detail("fused one-shot of " + std::to_string(inputs.count) + " inputs");
    return Status::invalid_arg;
  }
  return by_type<FusedOneShot>(type, op, own, &inputs, &flags, out, count, static_cast<cudaStream_t>(stream));
}

Status reduce_device_preload() {
  static bool loaded = false;
  if (loaded) return Status::ok;
#define WEFT_TYPE_TAG(tag, T) BasicType::tag,
  constexpr BasicType kTypes[] = {WEFT_GPU_TYPES(WEFT_TYPE_TAG)};
#undef WEFT_TYPE_TAG
  constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::band,
                               ReduceOp::bor, ReduceOp::bxor, ReduceOp::land, ReduceOp::lor, ReduceOp::lxor};
  for (BasicType t : kTypes)
    for (ReduceOp op : kOps)
      if (reduce_device_supports(op, t)) WEFT_TRY(by_type<Preload>(t, op));
  loaded = true;
  return Status::ok;
}

}  // namespace weft
