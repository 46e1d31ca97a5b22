// allreduce gpu_copy_engine: for ranks that share one GPU without MPS. Kernels of different
// processes then take turns on the GPU (time slices of milliseconds), so a kernel spinning on
// a peer's flag would wait for the peer's kernel to be scheduled at all. Here nothing spins
// on the GPU: per slot-sized piece, each rank copies its input into its slot and waits for
// the copy; a host barrier (dissemination, zero-byte messages); each rank copies the peers'
// pieces out of their slots with cudaMemcpyAsync (the copy engines) into a local buffer and
// reduces the p pieces in rank order into its result with one kernel. The next piece's wait
// for its own copy also covers this piece's copies, so by the next barrier every rank has
// finished reading the slot that the piece after will overwrite (slots alternate by parity).
#include <algorithm>

#include "runtime/op_gpu.h"
#include "workspace.h"

namespace weft::coll::gpu {

namespace {

bool supports(const CollArgs& a, const CollContext& ctx) { return kernel_call_supported(a, ctx.comm, false); }

// A rough model, printed with the choice (the rule in choice.cpp decides): per piece a host
// wait and barrier (about 20 us), then p - 1 copies at about 2.1 TB/s and a p-input reduction
// at 3.3 TB/s (measured on one H200).
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  constexpr double kWaitUs = 20, kCopyBytesPerUs = 2.1e6, kReduceBytesPerUs = 3.3e6;
  return kWaitUs + m.alpha_us * ceil_log2(c.size) + double(a.bytes) * (c.size - 1) / kCopyBytesPerUs +
         double(a.bytes) * (c.size + 1) / kReduceBytesPerUs;
}

struct Call {
  std::shared_ptr<GpuWorkspace> ws;
  const char* send;
  char* recv;
  size_t count, elem, per;
  BasicType type;
  ReduceOp op;
  uint64_t first_piece = 0;  // reserved when the call starts
};

Status copy_in(Call& k, size_t piece_index) {
  GpuWorkspace& ws = *k.ws;
  if (piece_index == 0) {
    k.first_piece = ws.pieces;
    ws.pieces += (k.count + k.per - 1) / k.per;
  }
  const size_t off = piece_index * k.per, n = std::min(k.per, k.count - off);
  WEFT_CUDA_TRY(cudaMemcpyAsync(ws.slot(ws.rank, k.first_piece + piece_index), k.send + off * k.elem, n * k.elem,
                                cudaMemcpyDefault, ws.stream));
  return record_done(ws);
}

Status gather_and_reduce(Call& k, size_t piece_index) {
  GpuWorkspace& ws = *k.ws;
  if (!ws.temp) {
    void* p = nullptr;
    WEFT_CUDA_TRY(cudaMalloc(&p, ws.half * size_t(ws.size - 1)));
    ws.temp = static_cast<char*>(p);
  }
  const uint64_t piece = k.first_piece + piece_index;
  const size_t off = piece_index * k.per, n = std::min(k.per, k.count - off);
  DeviceInputs in;
  in.count = ws.size;
  for (int q = 0, t = 0; q < ws.size; ++q) {
    if (q == ws.rank) {
      in.in[q] = ws.slot(q, piece);
      continue;
    }
    char* local = ws.temp + size_t(t++) * ws.half;
    WEFT_CUDA_TRY(cudaMemcpyAsync(local, ws.slot(q, piece), n * k.elem, cudaMemcpyDefault, ws.stream));
    in.in[q] = local;
  }
  return reduce_device_multi(k.op, k.type, in, k.recv + off * k.elem, n, ws.stream);
}

std::shared_ptr<Schedule> build(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("gpu_copy_engine");
  auto k = std::make_shared<Call>();
  k->ws = shared_workspace(c);
  k->send = static_cast<const char*>(a.send);
  k->recv = static_cast<char*>(a.recv);
  k->count = a.count;
  k->elem = a.red.elem_size;
  k->per = piece_elements(*k->ws, k->elem);
  k->type = a.red.type;
  k->op = a.red.op;
  const size_t pieces = (a.count + k->per - 1) / k->per;
  auto wait = [ws = k->ws](const CollContext&) { return query_done(*ws); };
  for (size_t i = 0; i < pieces; ++i) {
    s->next_round();
    s->call([k, i] { return copy_in(*k, i); });
    s->poll(wait);
    std::shared_ptr<Schedule> barrier = build_barrier_dissemination(c);
    s->append(*barrier);
    s->new_round();
    s->call([k, i] { return gather_and_reduce(*k, i); });
  }
  s->call([ws = k->ws] { return record_done(*ws); });
  s->poll(wait);
  return s;
}

}  // namespace

extern const Algorithm allreduce_gpu_copy_engine{"gpu_copy_engine", Collective::allreduce, supports,
                                              ruled_estimate<estimate, allreduce_gpu_copy_engine>,
                                                 build};

}  // namespace weft::coll::gpu
