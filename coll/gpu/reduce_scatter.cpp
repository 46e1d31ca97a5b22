// reduce_scatter gpu_reduce_scatter (one-shot, any counts: MPI_Reduce_scatter): the input
// vector (every rank's share back to back) runs in slot-sized pieces. Per piece, each rank
// copies the piece into its slot, a barrier, and rank r reduces the part of its own share that
// lies in the piece over every rank's slot, in rank order, into its result. One barrier per
// piece keeps the slot rule (workspace.h). In place (the input in recv), a result element lands
// at or before its input element, which this or an earlier piece has already copied. The
// reduction kernel never waits on flags, so the copy-engine variant runs it too, between host
// barriers. The block form has gpu_reduce_scatter_block (a p-th of the slot per block: every
// rank reduces in every piece).
#include <algorithm>

#include "runtime/op_gpu.h"
#include "steps.h"

namespace weft::coll::gpu {

namespace {

std::shared_ptr<const Pieces> reduce_scatter_pieces(GpuWorkspace& ws, const char* send, char* recv,
                                                    const std::vector<size_t>& counts, size_t total, BasicType type,
                                                    ReduceOp op) {
  auto p = std::make_shared<Pieces>();
  GpuWorkspace* w = &ws;
  const size_t elem = basic_type_size(type), per = piece_elements(ws, elem);
  size_t first = 0;  // where this rank's share starts in the vector
  for (int q = 0; q < ws.rank; ++q) first += counts[size_t(q)];
  const size_t last = first + counts[size_t(ws.rank)];
  p->count = (total + per - 1) / per;
  p->in = [w, send, total, elem, per](size_t i, uint64_t piece, cudaStream_t s) {
    const size_t off = i * per, n = std::min(per, total - off);
    WEFT_CUDA_TRY(cudaMemcpyAsync(w->slot(w->rank, piece), send + off * elem, n * elem, cudaMemcpyDefault, s));
    return Status::ok;
  };
  p->out = [w, recv, total, elem, per, first, last, type, op](size_t i, uint64_t piece, cudaStream_t s) {
    const size_t off = i * per, lo = std::max(first, off), hi = std::min(last, std::min(total, off + per));
    if (hi <= lo) return Status::ok;
    DeviceInputs in;
    in.count = w->size;
    for (int q = 0; q < w->size; ++q) in.in[q] = w->slot(q, piece) + (lo - off) * elem;
    return reduce_device_multi(op, type, in, recv + (lo - first) * elem, hi - lo, s);
  };
  return p;
}

bool supports(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  if (!a.send || a.counts.size() != size_t(c.size) || a.count == 0) return false;
  size_t total = 0;
  for (size_t n : a.counts) total += n;
  return total == a.count && kernel_call_supported(a, ctx.comm, false, true);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_pieces_on("gpu_reduce_scatter", c, [&](GpuWorkspace& ws) {
    return reduce_scatter_pieces(ws, static_cast<const char*>(a.send), static_cast<char*>(a.recv), a.counts,
                                      a.count, a.red.type, a.red.op);
  });
}

}  // namespace

extern const Algorithm reduce_scatter_gpu{"gpu_reduce_scatter", Collective::reduce_scatter, supports,
                                         ruled_estimate<slots_reduce_scatter_us, reduce_scatter_gpu>, build};

}  // namespace weft::coll::gpu
