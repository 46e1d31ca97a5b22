// reduce gpu_reduce (one-shot): per slot-sized piece, every rank but the root copies its piece
// into its slot, a barrier, and the root reduces every rank's piece, in rank order, into its
// result (its own straight from its send buffer, which may be the result: in place). The
// others' calls return after the barrier; they write a slot again only after the next piece's
// barrier, which the root enters after reducing this piece (workspace.h's slot rule), so the
// root never reads an overwritten slot. The reduction kernel never waits on flags, so the
// copy-engine variant runs it too, between host barriers.
#include <algorithm>

#include "runtime/op_gpu.h"
#include "steps.h"

namespace weft::coll::gpu {

namespace {

std::shared_ptr<const Pieces> reduce_pieces(GpuWorkspace& ws, const char* send, char* recv, size_t count,
                                            BasicType type, ReduceOp op, int root) {
  auto p = std::make_shared<Pieces>();
  GpuWorkspace* w = &ws;
  const size_t elem = basic_type_size(type), per = piece_elements(ws, elem);
  p->count = (count + per - 1) / per;
  p->in = [w, send, count, elem, per, root](size_t i, uint64_t piece, cudaStream_t s) {
    if (w->rank == root) return Status::ok;
    const size_t off = i * per, n = std::min(per, count - off);
    WEFT_CUDA_TRY(cudaMemcpyAsync(w->slot(w->rank, piece), send + off * elem, n * elem, cudaMemcpyDefault, s));
    return Status::ok;
  };
  p->out = [w, send, recv, count, elem, per, type, op, root](size_t i, uint64_t piece, cudaStream_t s) {
    if (w->rank != root) return Status::ok;
    const size_t off = i * per, n = std::min(per, count - off);
    DeviceInputs in;
    in.count = w->size;
    for (int q = 0; q < w->size; ++q) in.in[q] = q == root ? send + off * elem : w->slot(q, piece);
    return reduce_device_multi(op, type, in, recv + off * elem, n, s);
  };
  return p;
}

}  // namespace

Status reduce_enqueue(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                      int root, void* stream) {
  return enqueue_pieces_on(ws, stream, "MPIX_Reduce_enqueue", [&] {
    return reduce_pieces(ws, static_cast<const char*>(send), static_cast<char*>(recv), count, type, op, root);
  });
}

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) {
  return a.count > 0 && a.send && kernel_call_supported(a, ctx.comm, false, true);
}

// A rough model, printed with the choice (the rule's pick for small messages): the launch
// floor (about 10 us), a barrier and a second launch, the vector copied in at about 2.1 TB/s,
// and p reads plus one write at the root at 3.3 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel&) {
  return kLaunchUs + 4 + double(a.bytes) / kCopyBytesPerUs +
         double(a.bytes) * (ctx.comm.size + 1) / kReduceBytesPerUs;
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  return build_pieces_on("gpu_reduce", c, [&](GpuWorkspace& ws) {
    return reduce_pieces(ws, static_cast<const char*>(a.send), static_cast<char*>(a.recv), a.count, a.red.type,
                              a.red.op, a.root);
  });
}

}  // namespace

extern const Algorithm reduce_gpu{"gpu_reduce", Collective::reduce, supports, ruled_estimate<estimate, reduce_gpu>,
                                build};

}  // namespace weft::coll::gpu
