// What the GPU algorithm files share: the measured rates of their estimates, share copies,
// sub-block sizes, and the entries (supports, build, or the whole Algorithm) of algorithms that
// differ only in the function that enqueues them.
#pragma once
#include <algorithm>

#include "workspace.h"

namespace weft::coll::gpu {

// Estimates: a launch floor, a step of a launch and a pairwise flag, and the rates of copies
// and reduction kernels (all measured on one H200).
constexpr double kLaunchUs = 10, kStepUs = 4, kCopyBytesPerUs = 2.1e6, kReduceBytesPerUs = 3.3e6;

// A rough model of a reduce_scatter through the slots, printed with the choice: the launch
// floor, a barrier and a second launch, the input copied in, and p reads of this rank's share
// plus one write by the reduction.
inline double slots_reduce_scatter_us(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  return kLaunchUs + 4 + double(a.bytes) / kCopyBytesPerUs + double(a.bytes) * (ctx.comm.size + 1) / ctx.comm.size / kReduceBytesPerUs;
}

// Copies share k of a piece (from and to point at the piece's start), unless it is empty.
inline Status copy_share(char* to, const char* from, const Shares& sh, size_t k, size_t elem, cudaStream_t s) {
  if (sh.hi(k) > sh.lo(k))
    WEFT_CUDA_TRY(cudaMemcpyAsync(to + sh.lo(k) * elem, from + sh.lo(k) * elem, (sh.hi(k) - sh.lo(k)) * elem,
                                  cudaMemcpyDefault, s));
  return Status::ok;
}

// Elements of each rank's sub-block when a slot holds one per rank: 16-byte multiples where
// they fit, so the kernels' vector loads apply.
inline size_t sub_block_elements(const GpuWorkspace& ws, size_t elem) {
  const size_t align = std::max<size_t>(1, 16 / elem);
  size_t per = piece_elements(ws, elem) / size_t(ws.size);
  if (per >= align) per = per / align * align;
  return per;
}

// Enqueues the pieces make() returns on a user's stream (kernels allowed only); `name` (the
// call's) names its GPU event.
template <class MakePieces>
Status enqueue_pieces_on(GpuWorkspace& ws, void* stream, const char* name, MakePieces make) {
  if (!ws.kernels) return kernels_required();
  const auto s = static_cast<cudaStream_t>(stream);
  return enqueue_stream_call(ws, s, name, [&] { return enqueue_pieces(ws, *make(), s); });
}

// The blocking schedule of the pieces make(ws) returns, on c's workspace.
template <class MakePieces>
std::shared_ptr<Schedule> build_pieces_on(const char* name, const Comm& c, MakePieces make) {
  std::shared_ptr<GpuWorkspace> ws = shared_workspace(c);
  return build_pieces(name, c, ws, make(*ws));
}

// gpu_reduce_scatter_block's pieces (reduce_scatter_block.cpp): `count` elements per rank's
// block; send == recv in place.
std::shared_ptr<const Pieces> reduce_scatter_block_pieces(GpuWorkspace& ws, const char* send, char* recv, size_t count,
                                                          BasicType type, ReduceOp op);

// An allreduce (root < 0) or a reduce to root, enqueued by one function.
using EnqueueReduction = Status (*)(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                                    ReduceOp op, cudaStream_t s, int root);
inline bool supports_allreduce_kernels(const CollArgs& a, const CollContext& ctx) {
  return kernel_call_supported(a, ctx.comm, true);
}
inline bool supports_reduce_kernels(const CollArgs& a, const CollContext& ctx) {
  return a.count > 0 && a.send && kernel_call_supported(a, ctx.comm, true);
}
template <EnqueueReduction enqueue>
std::shared_ptr<Schedule> build_reduction(const char* name, const CollArgs& a, const Comm& c, int root) {
  return build_enqueued(name, c, [r = reduction_call(a), root](GpuWorkspace& ws, cudaStream_t s) {
    return enqueue(ws, r.send, r.recv, r.count, r.type, r.op, s, root);
  });
}

// A string literal as a template argument: the name of an algorithm and of its schedules.
template <size_t N>
struct Name {
  constexpr Name(const char (&s)[N]) { std::copy_n(s, N, chars); }
  char chars[N];
};

// The allreduce entry and the reduce entry (to the call's root) of an algorithm whose two forms
// enqueue runs.
using Estimate = double (*)(const CollArgs& a, const CollContext& c, const CostModel& m);
template <EnqueueReduction enqueue, Name name>
constexpr Algorithm allreduce_entry(Estimate estimate) {
  return {name.chars, Collective::allreduce, supports_allreduce_kernels, estimate,
          [](const CollArgs& a, const CollContext& ctx) {
                      return build_reduction<enqueue>(name.chars, a, ctx.comm, -1);
          }};
}
template <EnqueueReduction enqueue, Name name>
constexpr Algorithm reduce_entry(Estimate estimate) {
  return {name.chars, Collective::reduce, supports_reduce_kernels, estimate,
          [](const CollArgs& a, const CollContext& ctx) {
                      return build_reduction<enqueue>(name.chars, a, ctx.comm, a.root);
          }};
}

// A bcast enqueued by one function.
using EnqueueBcast = Status (*)(GpuWorkspace& ws, char* buf, size_t bytes, int root, cudaStream_t s);
inline bool supports_bcast_kernels(const CollArgs& a, const CollContext& ctx) {
  return a.bytes > 0 && kernel_call_supported(a, ctx.comm, true, false);
}
template <EnqueueBcast enqueue>
std::shared_ptr<Schedule> build_bcast(const char* name, const CollArgs& a, const Comm& c) {
  return build_enqueued(name, c, [buf = static_cast<char*>(a.recv), bytes = a.bytes, root = a.root](
                                     GpuWorkspace& ws, cudaStream_t s) { return enqueue(ws, buf, bytes, root, s); });
}

}  // namespace weft::coll::gpu
