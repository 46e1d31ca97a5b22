// Stream-ordered collectives and the stream communicator's agreement (stream_exec.h), and the
// device words of the stream-native point-to-point protocol (pt2pt/stream.h) in the GPU
// workspace's flags area (layout in workspace.h).
#include <cstring>
#include <initializer_list>

#include "gpu_coll.h"
#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/typemap.h"
#include "stream_exec.h"

namespace weft::coll::gpu {

namespace {

Status workspace_of(const Comm& c, GpuWorkspace** ws) {
  *ws = existing_workspace(c);
  if (*ws) return Status::ok;
  const std::string msg = "no GPU workspace on " + c.label();
  WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::internal;
}

class WorkspaceFlags final : public StreamFlags {
 public:
  std::string unusable(const Comm& c) const override {
    const GpuWorkspace* w = existing_workspace(c);
    if (!w) return "no GPU workspace on " + c.label();
    return kernels_allowed(*w) ? "" : "GPU flag kernels not allowed";
  }
  int slots() const override { return kP2pSlots; }
  Status ready(const Comm& c, int peer, uint64_t seq, void* stream) const override {
    GpuWorkspace* ws;
    WEFT_TRY(workspace_of(c, &ws));
    return p2p_ready_enqueue(*ws, peer, seq, stream);
  }
  Status wait_done(const Comm& c, int peer, uint64_t seq, void* stream) const override {
    GpuWorkspace* ws;
    WEFT_TRY(workspace_of(c, &ws));
    return p2p_wait_done_enqueue(*ws, peer, seq, stream);
  }
  Status copy(const Comm& c, int peer, uint64_t seq, const void* src, void* dst, size_t bytes,
              void* stream) const override {
    GpuWorkspace* ws;
    WEFT_TRY(workspace_of(c, &ws));
    return p2p_recv_enqueue(*ws, peer, seq, src, dst, bytes, stream);
  }
  Status graph_ready(const Comm& c, int peer, void* stream) const override {
    GpuWorkspace* ws;
    WEFT_TRY(workspace_of(c, &ws));
    return p2p_graph_ready_enqueue(*ws, peer, stream);
  }
  Status graph_wait_done(const Comm& c, int peer, uint64_t back, void* stream) const override {
    GpuWorkspace* ws;
    WEFT_TRY(workspace_of(c, &ws));
    return p2p_graph_wait_done_enqueue(*ws, peer, back, stream);
  }
  Status graph_copy(const Comm& c, int peer, const void* src, void* dst, size_t bytes, void* stream) const override {
    GpuWorkspace* ws;
    WEFT_TRY(workspace_of(c, &ws));
    return p2p_graph_recv_enqueue(*ws, peer, src, dst, bytes, stream);
  }
};

const WorkspaceFlags kFlags;

// Whether a call can run stream-native. True: *ws is the communicator's workspace, or null on
// a communicator of one rank (nothing spins there, so pinned and managed host memory do too:
// the call is a copy or nothing). False: *why says why.
bool stream_native(const StreamComm& sc, const Comm& c, const StreamCall& call, GpuWorkspace** ws,
                   std::string* why) {
  *ws = nullptr;
  if (!sc.native_why.empty()) {
    *why = sc.native_why;
    return false;
  }
  if (!call.contiguous) {
    *why = "non-contiguous datatype";
    return false;
  }
  const void* last = nullptr;
  for (const void* b : {call.send, static_cast<const void*>(call.recv)}) {
    if (b && b == last) continue;  // in place: one query
    if (!b && call.coll == Collective::reduce) continue;  // a reduce's recv away from the root
    const MemKind kind = b ? memkind_query(b).kind : MemKind::host;
    if (c.size == 1 ? kind == MemKind::host : kind != MemKind::cuda_device) {
      *why = c.size == 1 ? "pageable host buffers" : "buffers not in CUDA device memory";
      return false;
    }
    last = b;
  }
  if (c.size == 1) return true;
  if (call.reduction && (call.red.user || !call.predefined_type)) {
    *why = "user-defined operation or derived datatype";
    return false;
  }
  if (call.reduction && !supports(call.red.op, call.red.type)) {
    *why = std::string("no GPU kernel for ") + reduce_op_name(call.red.op) + " on " + basic_type_name(call.red.type);
    return false;
  }
  GpuWorkspace* w = existing_workspace(c);  // made at creation
  if (!w || !kernels_allowed(*w)) {
    *why = w ? "GPU flag kernels not allowed" : "no GPU workspace on " + c.label();
    return false;
  }
  *ws = w;
  return true;
}

// Enqueues a stream-native collective on the user's stream, logging the choice at INFO once
// per communicator, call and algorithm.
template <class Enqueue>
Status enqueue_native(const char* fn, const StreamComm& sc, const Comm& c, const char* algo, const std::string& detail,
                      Enqueue&& enqueue) {
  // The key is built only where INFO is on: this runs on every enqueued call.
  if (log_enabled(LogLevel::info, Subsys::gpu) &&
      log_first_time(std::string("stream-native:") + c.label() + ":" + fn + ":" + algo)) {
    const std::string why = detail.empty() ? "" : " (" + detail + ")";
    WEFT_INFO(Subsys::gpu, "%s on %s: %s on the user's stream%s", fn, c.label().c_str(), algo, why.c_str());
  }
  sc.stream.enqueued = true;  // the communicator's free waits for the stream
  return enqueue(sc.stream.cuda);
}

// A call that runs as fused pieces registers its buffers (register_call_buffers) when captured
// into a graph, or when it moves WEFT_GPU_AUTO_REGISTER_MIN bytes or more.
void register_if_due(const StreamComm& sc, const CollContext& ctx, const GpuWorkspace& ws, const void* send,
                     const void* recv, size_t bytes) {
  const bool capturing = stream_capturing(sc.stream.cuda);
  const size_t auto_min = settings_of(ws).auto_register_min;
  if (capturing || (auto_min && bytes >= auto_min)) register_call_buffers(ctx, send, recv, bytes, capturing);
}

// The allreduce as the rule chooses it (gpu_one_shot or gpu_two_shot; gpu_direct runs in
// blocking calls only). False: the rule chose none of them, *why says so. The rule is the one
// the GPU algorithms' estimates carry (gpu::rule_pick), asked directly: the selector plans a
// Schedule for coll::run, while a stream-ordered call enqueues on the user's stream and has no
// plan, cache or WEFT_COLL_TUNE force of its own.
Status enqueue_allreduce(const char* fn, const StreamComm& sc, const CollContext& ctx, GpuWorkspace& ws,
                         const StreamCall& call, bool* native, std::string* why) {
  const Comm& c = ctx.comm;
  CollArgs a{Collective::allreduce};
  a.send = call.send;
  a.recv = call.recv;
  a.count = call.count;
  a.bytes = a.count * call.red.elem_size;
  a.red = call.red;
  std::string choice;
  const Algorithm* algo = rule_pick(rule_call(a, c), rule_settings(c), &choice);
  const char* name = algo ? algo->name : "";
  AllreduceAlgo which;
  if (!strcmp(name, "gpu_one_shot")) which = AllreduceAlgo::one_shot;
  else if (!strcmp(name, "gpu_two_shot")) which = AllreduceAlgo::two_shot;
  else if (!strcmp(name, "gpu_direct")) {  // blocking calls only: the rule's next choice
    which = AllreduceAlgo::two_shot;
    name = "gpu_two_shot";
    choice = "gpu_direct runs in blocking calls only; " + choice;
  } else {
    *native = false;
    *why = algo ? std::string("the rule chose ") + name : "no GPU algorithm";
    return Status::ok;
  }
  // Fused pieces read the peers' user buffers once registered: a call captured into a graph,
  // or one of WEFT_GPU_AUTO_REGISTER_MIN bytes or more, registers them (every rank enqueues the
  // same calls and picks alike, so the registration's agreement is safe).
  if (allreduce_runs_fused(ws, which, a.bytes)) register_if_due(sc, ctx, ws, call.send, call.recv, a.bytes);
  return enqueue_native(fn, sc, c, name, choice, [&](void* stream) {
    return allreduce_enqueue(ws, which, call.send, call.recv, a.count, call.red.type, call.red.op, stream);
  });
}

// The call on the stream, or *native false and *why.
Status collective_on_stream(const char* fn, const StreamComm& sc, const CollContext& ctx, const StreamCall& call,
                            bool* native, std::string* why) {
  const Comm& c = ctx.comm;
  GpuWorkspace* ws;
  *native = stream_native(sc, c, call, &ws, why);
  if (!*native) return Status::ok;
  if (!ws) return stream_copy(sc.stream.cuda, call.recv, call.send, call.bytes);  // one rank
  switch (call.coll) {
    case Collective::allreduce:
      return enqueue_allreduce(fn, sc, ctx, *ws, call, native, why);
    case Collective::bcast:
      return enqueue_native(fn, sc, c, "gpu_bcast", "", [&](void* stream) {
        return bcast_enqueue(*ws, call.recv, call.bytes, call.root, stream);
      });
    case Collective::allgather:
      return enqueue_native(fn, sc, c, "gpu_allgather", "", [&](void* stream) {
        return allgather_enqueue(*ws, call.send, call.recv, call.bytes, stream);
      });
    case Collective::reduce_scatter: {
      // Fused pieces fold registered inputs in place: register the input as the allreduce does
      // (out of place only; in place, the input goes through the slots).
      const size_t input_bytes = call.bytes * size_t(c.size);
      if (call.send != call.recv && scatter_runs_fused(*ws, input_bytes))
        register_if_due(sc, ctx, *ws, call.send, nullptr, input_bytes);
    }
      return enqueue_native(fn, sc, c, "gpu_reduce_scatter_block", "", [&](void* stream) {
        return reduce_scatter_block_enqueue(*ws, call.send, call.recv, call.count, call.red.type, call.red.op, stream);
      });
    case Collective::reduce:
      return enqueue_native(fn, sc, c, "gpu_reduce", "", [&](void* stream) {
        return reduce_enqueue(*ws, call.send, call.recv, call.count, call.red.type, call.red.op, call.root, stream);
      });
    default:
      *native = false;
      *why = std::string("no stream-ordered ") + collective_name(call.coll);
      return Status::ok;
  }
}

}  // namespace

Status prepare_stream_comm(const CollContext& ctx, StreamComm* sc) {
  const Comm& c = ctx.comm;
  int32_t gpu = sc->stream.gpu ? 1 : 0;
  const Reduction min{ReduceOp::min, BasicType::i32, sizeof(int32_t)};
  WEFT_TRY(allreduce(ctx, &gpu, &gpu, 1, min));
  sc->every_rank_gpu = gpu == 1;
  if (!sc->every_rank_gpu) {
    sc->native_why = "not every rank passed a GPU stream to MPIX_Stream_comm_create";
  } else if (c.size < 2) {
    sc->native_why.clear();  // one rank: a stream-ordered copy
  } else if (!c.single_node) {
    sc->native_why = "GPU-native collectives need every rank on one node";
  } else {
    std::string why;
    GpuWorkspace* ws = workspace(ctx, &why);
    if (!ws) sc->native_why = "GPU collectives not usable on " + c.label() + ": " + why;
    else if (!kernels_allowed(*ws))
      sc->native_why = settings_of(*ws).mode == Mode::copy_engine
                           ? "WEFT_GPU_COLL_MODE=copy_engine"
                           : "ranks share a GPU without MPS: the stream-native kernels would take turns";
  }
  WEFT_INFO(Subsys::gpu, "stream communicator %s: %s", c.label().c_str(),
            !sc->every_rank_gpu        ? "no gpu stream on every rank"
            : sc->native_why.empty()   ? "the collective *_enqueue calls may run stream-native"
                                       : ("the collective *_enqueue calls fall back: " + sc->native_why).c_str());
  // Point-to-point: the same conditions, and CUDA IPC of user buffers usable on every rank.
  std::string p2p_why = sc->native_why;
  if (sc->every_rank_gpu && sc->native_why.empty() && c.size < 2) {
    p2p_why = "a communicator of one rank";
  } else if (sc->every_rank_gpu && sc->native_why.empty()) {
    int32_t ipc = cuda_ipc_usable() ? 1 : 0;
    WEFT_TRY(allreduce(ctx, &ipc, &ipc, 1, min));
    if (ipc != 1) p2p_why = "CUDA IPC of user buffers not usable on every rank";
  }
  if (sc->every_rank_gpu)
    WEFT_INFO(Subsys::gpu, "stream communicator %s: %s", c.label().c_str(),
              p2p_why.empty() ? "Send/Recv_enqueue on device buffers may run stream-native"
                              : ("Send/Recv_enqueue fall back: " + p2p_why).c_str());
  sc->p2p.init(c, std::move(p2p_why), &kFlags);
  return Status::ok;
}

StreamCall stream_reduction(const void* in, void* recv, const Datatype* type, size_t count, size_t ranks,
                            size_t reduce_count, const Reduction& red) {
  StreamCall call;
  ptrdiff_t in_offset = 0, out_offset = 0;
  call.coll = ranks == 1 ? Collective::allreduce : Collective::reduce_scatter;
  call.contiguous = type_is_contiguous(type, count * ranks, &in_offset) && type_is_contiguous(type, count, &out_offset);
  call.send = static_cast<const char*>(in) + in_offset;
  call.recv = static_cast<char*>(recv) + out_offset;
  call.bytes = type->packed * count;
  call.count = reduce_count / ranks;
  call.reduction = true;
  call.red = red;
  call.predefined_type = type->predefined;
  call.empty = count * ranks == 0;
  return call;
}

StreamCall stream_reduce(StreamCall call, int root, int rank) {
  call.coll = Collective::reduce;
  call.root = root;
  if (rank != root) call.recv = nullptr;  // not significant: neither checked nor written
  return call;
}

StreamCall stream_bcast(const Datatype* type, void* buf, size_t count, int root) {
  const StreamSpan m = stream_span(type, buf, count);
  StreamCall call;
  call.coll = Collective::bcast;
  call.send = call.recv = m.at;
  call.bytes = m.bytes;
  call.contiguous = m.contiguous;
  call.root = root;
  call.empty = call.bytes == 0;
  return call;
}

StreamCall stream_allgather(const Datatype* rtype, void* recv, size_t count, const Datatype* stype, const void* send,
                            size_t scount, const Comm& c) {
  StreamCall call;
  call.coll = Collective::allgather;
  call.bytes = rtype->packed * count;
  const StreamSpan all = stream_span(rtype, recv, count * size_t(c.size));
  call.recv = all.at;
  call.send = all.at + size_t(c.rank) * call.bytes;
  call.contiguous = all.contiguous;
  if (stype) {
    const StreamSpan mine = stream_span(stype, send, scount);
    call.send = mine.at;
    call.contiguous = call.contiguous && mine.contiguous;
  }
  call.empty = call.bytes == 0;
  return call;
}

Status stream_collective(const char* fn, const StreamComm& sc, const CollContext& ctx, const StreamCall& call,
                         StreamRoute* route) {
  bool native = call.empty;
  const Status s = call.empty ? Status::ok : collective_on_stream(fn, sc, ctx, call, &native, &route->why);
  route->path = native ? StreamPath::native : StreamPath::fallback;
  return s;
}

}  // namespace weft::coll::gpu
