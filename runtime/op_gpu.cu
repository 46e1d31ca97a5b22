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

#include "device_meet.cuh"
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

// The fold of pack p (or element i) over n inputs in rank order, accumulated in the computing
// type (float for half and bfloat16) and rounded once.
template <class T, class Op>
__device__ inline void fold_pack(const void* const* in, int n, size_t p, Pack<T>* out) {
  using C = typename Compute<T>::type;
  constexpr size_t kPer = 16 / sizeof(T);
  C acc[kPer];
  const Pack<T> first = static_cast<const Pack<T>*>(in[0])[p];
#pragma unroll
  for (size_t j = 0; j < kPer; ++j) acc[j] = widen(first.v[j]);
  for (int k = 1; k < n; ++k) {
    const Pack<T> x = static_cast<const Pack<T>*>(in[k])[p];
#pragma unroll
    for (size_t j = 0; j < kPer; ++j) acc[j] = Op::apply(acc[j], widen(x.v[j]));
  }
#pragma unroll
  for (size_t j = 0; j < kPer; ++j) out->v[j] = narrow<T>(acc[j]);
}

template <class T, class Op>
__device__ inline T fold_one(const void* const* in, int n, size_t i) {
  typename Compute<T>::type acc = widen(static_cast<const T*>(in[0])[i]);
  for (int k = 1; k < n; ++k) acc = Op::apply(acc, widen(static_cast<const T*>(in[k])[i]));
  return narrow<T>(acc);
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
      Pack<T> out;
      fold_pack<T, Op>(ins.in, ins.count, p, &out);
      for (int o = 0; o < outs.count; ++o) static_cast<Pack<T>*>(outs.out[o])[p] = out;
    }
    done = packs * kPer;
  }
  for (size_t i = done + first; i < count; i += stride) {
    const T acc = fold_one<T, Op>(ins.in, ins.count, i);
    for (int o = 0; o < outs.count; ++o) static_cast<T*>(outs.out[o])[i] = acc;
  }
}

// Block b of the grid owns chunk b of the vector (16-byte multiples) and meets its peers'
// block b alone, through its own epoch word (flags.lane; one block: flags.at): every thread
// copies its share of the chunk of `own` into this rank's input; after the block meets, thread
// 0 fences (cumulative over the block's writes) and publishes the next epoch (its word plus
// one); thread q waits for rank q's and fences; after the block meets again, chunk b of every
// input is complete, and the block folds it. No block waits for another block of its own
// rank, so the grid needs no counter and no second meeting: a chunk is read only after every
// rank's block b published it, and rewritten (two calls later, by slot parity) only after a
// later meeting that every peer entered once this kernel had ended. One fence per publishing
// or waiting thread, not per thread: on one H100 (4 ranks, MPS) that took the enqueued 8 B
// allreduce from 13.3 to 11.2 us. The reduce-scatter form (stride > 0) copies chunk b of each
// of the ranks' sub-blocks and folds chunk b of sub-block `me` alone.
template <class T, class Op>
__global__ void fused_one_shot_kernel(const T* own, DeviceInputs ins, DeviceFlags flags, T* out, size_t count,
                                      size_t stride) {
  constexpr size_t kPer = 16 / sizeof(T);
  const int t = int(threadIdx.x);
  const size_t chunk = ((count + gridDim.x - 1) / gridDim.x + kPer - 1) / kPer * kPer;
  const size_t lo = min(count, size_t(blockIdx.x) * chunk), hi = min(count, lo + chunk);
  const int subs = stride ? ins.count : 1;
  const size_t shift = stride ? size_t(flags.me) * count : 0;  // where the folded sub-block starts
  T* mine = static_cast<T*>(const_cast<void*>(ins.in[flags.me]));
  uintptr_t bits = reinterpret_cast<uintptr_t>(own) | reinterpret_cast<uintptr_t>(out);
  for (int q = 0; q < ins.count; ++q) bits |= reinterpret_cast<uintptr_t>(ins.in[q]);
  if (stride) bits |= (stride * sizeof(T)) | (count * sizeof(T));
  const bool packed = bits % 16 == 0;
  for (int j = 0; j < subs; ++j) {
    const T* from = own + size_t(j) * stride;
    T* to = mine + size_t(j) * count;
    size_t tail = lo;
    if (packed) {
      const size_t packs = (hi - lo) / kPer, base = lo / kPer;
      for (size_t p = size_t(t); p < packs; p += blockDim.x)
        reinterpret_cast<Pack<T>*>(to)[base + p] = reinterpret_cast<const Pack<T>*>(from)[base + p];
      tail = lo + packs * kPer;
    }
    for (size_t i = tail + size_t(t); i < hi; i += blockDim.x) to[i] = from[i];
  }
  __shared__ unsigned long long epoch;
  const auto word = [&](int q) { return flags.lane[q] ? flags.lane[q] + blockIdx.x : flags.at[q]; };
  // The block's writes reach thread 0 through the barrier; its fence is cumulative.
  __syncthreads();
  if (t == 0) {
    __threadfence_system();
    volatile unsigned long long* w = word(flags.me);
    epoch = *w + 1;
    *w = epoch;
  }
  __syncthreads();
  if (t < ins.count && t != flags.me) {
    device::wait_epoch(word(t), epoch, flags.stop);
    __threadfence_system();
  }
  __syncthreads();
  // Plain loads: this kernel has not touched the peers' inputs before the meeting, so no stale
  // line of them sits in L1.
  size_t tail = lo;
  if (packed) {
    const size_t packs = (hi - lo) / kPer, base = lo / kPer, from = shift / kPer;
    for (size_t p = size_t(t); p < packs; p += blockDim.x) {
      Pack<T> v;
      fold_pack<T, Op>(ins.in, ins.count, from + base + p, &v);
      reinterpret_cast<Pack<T>*>(out)[base + p] = v;
    }
    tail = lo + packs * kPer;
  }
  for (size_t i = tail + size_t(t); i < hi; i += blockDim.x) out[i] = fold_one<T, Op>(ins.in, ins.count, shift + i);
}

// The fused allreduce piece (FusedPiece in op_gpu.h). kFusedThreads threads a block; every
// block of the grid spins on the peers' flags, so the grid is kept small enough to be resident
// at once beside the peers' grids (fused_blocks).
constexpr int kFusedThreads = 512;

// The grid's meeting (device_meet.cuh) on the piece's words.
__device__ void fused_meet(const FusedPiece& a, unsigned long long epoch) {
  device::grid_meet(a.arrive, a.flag, a.me, a.ranks, a.stop, epoch);
}

// One piece of a fused launch, as the kernel walks them.
struct FusedStep {
  size_t count = 0;             // elements of the piece
  const char* own_in = nullptr;  // this rank's input and result of the piece
  char* own_out = nullptr;
  uint64_t in_off = 0, out_off = 0;  // this rank's place of the piece (bytes into a registration)
  char* const* slot = nullptr;       // every rank's slot of the piece (by its parity)
  bool first = false;                // the call's first piece: it may fold the whole call
};

__device__ FusedStep fused_step(const FusedPiece& a, size_t k, size_t elem) {
  FusedStep s;
  const size_t per = a.per ? a.per : a.count, off = k * per;
  s.count = a.count - off < per ? a.count - off : per;
  s.own_in = static_cast<const char*>(a.own_in) + off * elem;
  s.own_out = static_cast<char*>(a.own_out) + off * elem;
  s.in_off = a.mine.in_off + off * elem;
  s.out_off = a.mine.out_off + off * elem;
  s.slot = k % 2 == 0 ? a.slot : a.slot_next;
  s.first = a.first && k == 0;
  return s;
}

// A peer's published place of `bytes` bytes, resolved through this rank's view of its
// registrations; null when out of bounds.
__device__ const char* fused_resolve(const FusedPiece& a, char* const* slot, int q, int32_t reg, uint64_t off,
                                     uint64_t bytes) {
  if (reg < 0) return slot[q];
  if (reg >= kFusedMaxRegistrations || !a.table) return nullptr;
  const FusedRegistration r = a.table[size_t(q) * kFusedMaxRegistrations + size_t(reg)];
  if (!r.base || off > r.bytes || bytes > r.bytes - off) return nullptr;
  return r.base + off;
}

// The fold of a piece after the first meeting: resolves every rank's published place (one out
// of bounds sets *error and moves nothing), then one-shot: every input into this rank's result;
// direct: this rank's share of every input into the share of every output. Every thread of the
// block calls it. Returns whether it folded the whole call (the call's first piece only).
template <class T, class Op>
__device__ bool fused_fold(const FusedPiece& a, const FusedStep& s, size_t first, size_t stride) {
  constexpr size_t kPer = 16 / sizeof(T);
  __shared__ const void* in[kReduceMaxInputs];
  __shared__ void* out[kReduceMaxInputs];
  const int t = int(threadIdx.x);
  const size_t bytes = s.count * sizeof(T), call_bytes = a.call_count * sizeof(T);
  // A call's first piece may fold the whole call: every rank's input and output of the whole
  // call lie in registrations (a rank whose buffers go through its slot has place -1).
  const bool may_whole = s.first && a.skip && a.call_count > s.count;
  // Where this rank's sub-block starts: in a registered input (scatter: block me of it), or in
  // the slot (scatter: the piece's sub-blocks back to back).
  const uint64_t in_shift = a.scatter ? uint64_t(a.me) * call_bytes : 0;
  const size_t slot_shift = a.scatter ? size_t(a.me) * bytes : 0;
  const uint64_t in_span = a.scatter ? uint64_t(a.ranks) * call_bytes : call_bytes;
  bool bad = false, odd = false, partial = false;
  if (t < a.ranks) {
    const volatile FusedPlace* pl = a.place[t];
    const FusedPlace p{pl->in_reg, pl->out_reg, pl->in_off, pl->out_off};
    const char* i = p.in_reg < 0 ? s.slot[t] + slot_shift
                                 : fused_resolve(a, s.slot, t, p.in_reg, p.in_off + in_shift, bytes);
    const char* o = a.direct ? fused_resolve(a, s.slot, t, p.out_reg, p.out_off, bytes) : s.own_out;
    bad = !i || !o;
    odd = ((reinterpret_cast<uintptr_t>(i) | reinterpret_cast<uintptr_t>(o)) % 16) != 0;
    in[t] = i;
    out[t] = const_cast<char*>(o);
    if (may_whole)
      partial = p.in_reg < 0 || !fused_resolve(a, s.slot, t, p.in_reg, p.in_off, in_span) ||
                (a.direct && (p.out_reg < 0 || !fused_resolve(a, s.slot, t, p.out_reg, p.out_off, call_bytes)));
  }
  bad = __syncthreads_or(bad);
  const bool packed = !__syncthreads_or(odd) && (reinterpret_cast<uintptr_t>(s.own_out) % 16) == 0;
  const bool whole = may_whole && !__syncthreads_or(partial);
  if (s.first && a.skip && blockIdx.x == 0 && t == 0) *a.skip = whole && !bad ? a.last : 0;
  if (bad) {
    if (blockIdx.x == 0 && t == 0 && a.error) *reinterpret_cast<volatile unsigned int*>(a.error) = 1;
    return false;
  }
  const size_t count = whole ? a.call_count : s.count;
  size_t lo = 0, hi = count;
  if (a.direct) {  // this rank's share, in 16-byte multiples
    const size_t share = ((count + a.ranks - 1) / a.ranks + kPer - 1) / kPer * kPer;
    lo = size_t(a.me) * share < count ? size_t(a.me) * share : count;
    hi = count - lo < share ? count : lo + share;
  }
  const int outs = a.direct ? a.ranks : 1;
  void* own_out = s.own_out;
  void* const* dst = a.direct ? out : &own_out;
  size_t done = lo;
  if (packed) {
    const size_t packs = (hi - lo) / kPer, base = lo / kPer;
    for (size_t p = first; p < packs; p += stride) {
      Pack<T> v;
      fold_pack<T, Op>(in, a.ranks, base + p, &v);
      for (int o = 0; o < outs; ++o) static_cast<Pack<T>*>(dst[o])[base + p] = v;
    }
    done = lo + packs * kPer;
  }
  for (size_t i = done + first; i < hi; i += stride) {
    const T v = fold_one<T, Op>(in, a.ranks, i);
    for (int o = 0; o < outs; ++o) static_cast<T*>(dst[o])[i] = v;
  }
  return whole;
}

__device__ void fused_publish_place(const FusedPiece& a, const FusedStep& s) {
  volatile FusedPlace* mine = a.place[a.me];
  mine->in_reg = a.mine.in_reg;
  mine->out_reg = a.mine.out_reg;
  mine->in_off = s.in_off;
  mine->out_off = s.out_off;
}

// A launch of later pieces of a call whose first piece folded it whole: nothing to do (stream
// order: the first piece wrote the word before this kernel started).
__device__ inline bool fused_skipped(const FusedPiece& a) {
  return !a.first && a.skip && *reinterpret_cast<const volatile unsigned long long*>(a.skip) >= a.piece;
}

// Every piece of the launch in turn, each between two meetings (epochs start + 2k + 1 and
// start + 2k + 2 for piece k). After the call's first piece folded the whole call, the rest
// is done.
template <class T, class Op>
__global__ void __launch_bounds__(kFusedThreads, 2) fused_allreduce_kernel(FusedPiece a) {
  if (fused_skipped(a)) return;
  __shared__ unsigned long long epoch;
  const int t = int(threadIdx.x);
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  // This rank's flag before the launch: no block publishes before every block has read it.
  if (t == 0) epoch = *reinterpret_cast<volatile unsigned long long*>(a.flag[a.me]);
  __syncthreads();
  const unsigned long long start = epoch;
  const size_t pieces = a.per ? (a.count + a.per - 1) / a.per : 1;
  for (size_t k = 0; k < pieces; ++k) {
    const FusedStep s = fused_step(a, k, sizeof(T));
    const size_t bytes = s.count * sizeof(T);
    char* own_slot = s.slot[a.me];
    if (a.mine.in_reg < 0 && a.scatter) {  // the piece's sub-blocks, back to back
      for (int j = 0; j < a.ranks; ++j)
        device::grid_copy(own_slot + size_t(j) * bytes, s.own_in + size_t(j) * a.call_count * sizeof(T), bytes, first,
                          stride);
    } else if (a.mine.in_reg < 0 && s.own_in != own_slot) {
      device::grid_copy(own_slot, s.own_in, bytes, first, stride);
    }
    if (blockIdx.x == 0 && t == 0) fused_publish_place(a, s);
    fused_meet(a, start + 2 * k + 1);
    const bool whole = fused_fold<T, Op>(a, s, first, stride);
    fused_meet(a, start + 2 * k + 2);
    if (whole) return;
    if (a.direct && a.mine.out_reg < 0 && s.own_out != own_slot)  // the result came to the slot
      device::grid_copy(s.own_out, own_slot, bytes, first, stride);
  }
}

// The split form of a call's first piece (FusedPiece::split): the meetings are one-block
// kernels and the fold a grid as large as the data wants, which never spins and so need not be
// resident beside the peers' grids. `place`: publish this rank's place before meeting (the
// first one).
__global__ void fused_meet_kernel(FusedPiece a, bool place) {
  __shared__ unsigned long long epoch;
  if (threadIdx.x == 0) {
    epoch = *reinterpret_cast<volatile unsigned long long*>(a.flag[a.me]);
    if (place) fused_publish_place(a, fused_step(a, 0, 1));
  }
  __syncthreads();
  fused_meet(a, epoch + 1);
}

template <class T, class Op>
__global__ void fused_fold_kernel(FusedPiece a) {
  fused_fold<T, Op>(a, fused_step(a, 0, sizeof(T)), size_t(blockIdx.x) * blockDim.x + threadIdx.x,
                    size_t(gridDim.x) * blockDim.x);
}

// Blocks per rank: enough for the piece, and at most 128 spinning blocks on the GPU in all.
unsigned fused_blocks(const FusedPiece& a, size_t elem) {
  const size_t piece = a.per ? std::min(a.per, a.count) : a.count;
  const size_t work = (a.direct ? piece / size_t(a.ranks) : piece) / (16 / elem) + 1;
  const size_t cap = std::max<size_t>(1, 128 / size_t(a.ranks));
  return unsigned(std::min(cap, (work + kFusedThreads - 1) / kFusedThreads));
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
constexpr int kFusedMeetThreads = 64;  // at least kReduceMaxInputs: thread q waits for rank q
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
  size_t stride;
  template <class Op> Status go() const {
    fused_one_shot_kernel<T, Op><<<unsigned(flags->blocks), 512, 0, stream>>>(
        static_cast<const T*>(own), *ins, *flags, static_cast<T*>(out), count, stride);
    return launched(stride ? "fused one-shot reduce-scatter" : "fused one-shot allreduce");
  }
};

template <class T>
struct FusedAllreduce {
  const FusedPiece* piece;
  cudaStream_t stream;
  template <class Op> Status go() const {
    const FusedPiece& a = *piece;
    if (!a.split) {  // every piece of the launch in one kernel
      fused_allreduce_kernel<T, Op><<<fused_blocks(a, sizeof(T)), kFusedThreads, 0, stream>>>(a);
      return launched("fused allreduce");
    }
    const size_t bytes = a.count * sizeof(T);
    const void* own_slot = a.slot[a.me];
    if (a.mine.in_reg < 0 && a.scatter &&
        cudaMemcpy2DAsync(a.slot[a.me], bytes, a.own_in, a.call_count * sizeof(T), bytes, size_t(a.ranks),
                          cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
      return launched("fused reduce-scatter input copy");
    if (a.mine.in_reg < 0 && !a.scatter && a.own_in != own_slot &&
        cudaMemcpyAsync(a.slot[a.me], a.own_in, bytes, cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
      return launched("fused allreduce input copy");
    fused_meet_kernel<<<1, kFusedMeetThreads, 0, stream>>>(a, true);
    const size_t work = (a.direct ? a.count / size_t(a.ranks) : a.count) / (16 / sizeof(T)) + 1;
    fused_fold_kernel<T, Op><<<blocks_for(work), kThreads, 0, stream>>>(a);
    fused_meet_kernel<<<1, kFusedMeetThreads, 0, stream>>>(a, false);
    if (a.direct && a.mine.out_reg < 0 && a.own_out != own_slot &&
        cudaMemcpyAsync(a.own_out, own_slot, bytes, cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
      return launched("fused allreduce result copy");
    return launched("fused allreduce (split)");
  }
};

template <class T>
struct Preload {
  template <class Op> Status go() const {
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, reduce_multi_kernel<T, Op>) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, fused_one_shot_kernel<T, Op>) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, fused_allreduce_kernel<T, Op>) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, fused_fold_kernel<T, Op>) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, fused_meet_kernel) != cudaSuccess)
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
                                   const DeviceFlags& flags, void* out, size_t count, void* stream,
                                   size_t scatter_stride) {
  if (!reduce_device_supports(op, type)) return unsupported_pair(op, type);
  if (inputs.count < 1 || inputs.count > kReduceMaxInputs || flags.me < 0 || flags.me >= inputs.count ||
      flags.blocks < 1 || flags.blocks > kFusedOneShotMaxBlocks || (flags.blocks > 1 && !flags.lane[flags.me]) ||
      (scatter_stride && scatter_stride < count)) {
    set_error_detail("fused one-shot of " + std::to_string(inputs.count) + " inputs" +
                     (scatter_stride && scatter_stride < count ? ", sub-blocks overlapping" : ""));
    return Status::invalid_arg;
  }
  return by_type<FusedOneShot>(type, op, own, &inputs, &flags, out, count, static_cast<cudaStream_t>(stream),
                               scatter_stride);
}

Status reduce_device_fused_allreduce(ReduceOp op, BasicType type, const FusedPiece& piece, void* stream) {
  if (!reduce_device_supports(op, type)) return unsupported_pair(op, type);
  if (piece.ranks < 1 || piece.ranks > kReduceMaxInputs || piece.me < 0 || piece.me >= piece.ranks || !piece.arrive ||
      (piece.split && piece.per && piece.per < piece.count) || (piece.scatter && piece.direct)) {
    set_error_detail("fused allreduce launch of " + std::to_string(piece.ranks) + " ranks" +
                     (piece.split ? ", split, of more than one piece" : "") +
                     (piece.scatter && piece.direct ? ", both reduce-scatter and direct" : ""));
    return Status::invalid_arg;
  }
  return by_type<FusedAllreduce>(type, op, &piece, static_cast<cudaStream_t>(stream));
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
