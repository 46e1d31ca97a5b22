// allreduce gpu_ring: per slot-sized piece, every rank copies its input into its slot and a
// flag barrier follows; the piece is cut into p chunks (16-byte multiples). Reduce-scatter in
// p - 1 steps: at step s, rank r folds chunk (r - s - 1) mod p of its left neighbour's slot
// into the same chunk of its own, then publishes the step and waits for its left neighbour
// alone; after the last step rank r holds chunk (r + 1) mod p reduced over every rank. A
// barrier, then allgather in p - 1 steps: at step t rank r copies chunk (r - t) mod p out of
// its left neighbour's slot into its own (final since the neighbour's previous step), and
// they meet pairwise again. Last, the slot is copied to the result.
// Each step touches only the left neighbour's memory: the pattern for GPUs linked in a ring or
// through PCIe switches, where not every pair has a fast link. Where every rank reaches every
// other one directly (one GPU under MPS, or NVSwitch), gpu_direct moves less data and the rule
// never picks the ring; WEFT_COLL_TUNE=allreduce:@gpu_ring forces it.
#include <algorithm>

#include "runtime/core/op_gpu.h"
#include "workspace.h"

namespace weft::coll::gpu {

Status enqueue_ring(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                    cudaStream_t s) {
  const size_t elem = basic_type_size(type), per = piece_elements(ws, elem);
  const size_t align = std::max<size_t>(1, 16 / elem);
  const size_t p = size_t(ws.size), r = size_t(ws.rank);
  const int left = int((r + p - 1) % p);
  const char* src = static_cast<const char*>(send);
  char* dst = static_cast<char*>(recv);
  for (size_t off = 0; off < count; off += per) {
    const size_t n = std::min(per, count - off);
    const size_t share = ((n + p - 1) / p + align - 1) / align * align;
    auto lo = [&](size_t k) { return std::min(n, k * share); };
    auto hi = [&](size_t k) { return std::min(n, (k + 1) * share); };
    const uint64_t piece = ws.pieces++;
    char* mine = ws.slot(ws.rank, piece);
    const char* theirs = ws.slot(left, piece);
    WEFT_CUDA_TRY(cudaMemcpyAsync(mine, src + off * elem, n * elem, cudaMemcpyDefault, s));
    WEFT_TRY(enqueue_flag_barrier(ws, ++ws.epoch, s));
    for (size_t step = 0; step + 1 < p; ++step) {
      const size_t k = (r + 2 * p - step - 1) % p;
      if (hi(k) > lo(k)) {
        DeviceInputs in;
        in.count = 2;
        in.in[0] = theirs + lo(k) * elem;
        in.in[1] = mine + lo(k) * elem;
        WEFT_TRY(reduce_device_multi(op, type, in, mine + lo(k) * elem, hi(k) - lo(k), s));
      }
      if (step + 2 < p) WEFT_TRY(enqueue_flag_wait_one(ws, left, ++ws.epoch, s));
    }
    // Every partial chunk has been read before any rank overwrites one with a final chunk.
    WEFT_TRY(enqueue_flag_barrier(ws, ++ws.epoch, s));
    for (size_t step = 0; step + 1 < p; ++step) {
      const size_t k = (r + p - step) % p;
      if (hi(k) > lo(k))
        WEFT_CUDA_TRY(cudaMemcpyAsync(mine + lo(k) * elem, theirs + lo(k) * elem, (hi(k) - lo(k)) * elem,
                                      cudaMemcpyDefault, s));
      if (step + 2 < p) WEFT_TRY(enqueue_flag_wait_one(ws, left, ++ws.epoch, s));
    }
    WEFT_CUDA_TRY(cudaMemcpyAsync(dst + off * elem, mine, n * elem, cudaMemcpyDefault, s));
  }
  return Status::ok;
}

}  // namespace weft::coll::gpu

namespace weft::coll {

namespace {

bool supports(const CollArgs& a, const Comm& c) { return gpu::kernel_call_supported(a, c, true); }

// A rough model, printed with the choice: two barriers and 2(p - 1) steps of a launch and a
// pairwise flag each, then the copy in and out and about two reads and a write of the vector
// at 3.3 TB/s (measured on one H200).
double estimate(const CollArgs& a, const Comm& c, const CostModel&) {
  constexpr double kLaunchUs = 10, kStepUs = 4, kBytesPerUs = 3.3e6;
  return kLaunchUs + 8 + 2.0 * (c.size - 1) * kStepUs + double(a.bytes) * 5 / kBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const Comm& c) {
  return gpu::build_enqueued_allreduce("gpu_ring", a, c, gpu::enqueue_ring);
}

}  // namespace

extern const Algorithm allreduce_gpu_ring{"gpu_ring", Collective::allreduce, supports, estimate, build};

}  // namespace weft::coll
