// The GPU workspace: made once per communicator on its first GPU-native collective, kept with
// it (CommState::gpu, coll/comm_state.h), and released with it or at MPI_Finalize.
//
// Making it: each rank allocates its flags and slots (one cudaMalloc, so one IPC handle),
// the ranks exchange {ok, MPS pipe seen, GPU uuid, IPC handle} with one host allreduce (bitwise
// or over a table with one row per rank), each rank opens its peers' handles (about 0.3 ms
// each, so only here), and a second allreduce agrees whether every rank succeeded. A rank
// that failed makes the workspace unusable everywhere, and the calls are staged.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "coll/schedule.h"
#include "runtime/clock.h"
#include "runtime/cuda_ipc.h"
#include "runtime/gpu_timing.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/op_gpu.h"
#include "coll/comm_state.h"
#include "coll/hier/hierarchy.h"
#include "flags.h"
#include "gather_kernel.h"
#include "workspace.h"

namespace weft::coll::gpu {

// What a communicator keeps (CommState::gpu): the workspace, or why there is none.
struct CommGpu {
  std::shared_ptr<GpuWorkspace> ws;
  std::string why;
};

namespace {

// Workspaces still alive, for MPI_Finalize; and allocations whose peers had not released
// them when their communicator was freed (freed at MPI_Finalize, after its barrier).
struct Live {
  std::vector<std::weak_ptr<GpuWorkspace>> workspaces;
  std::vector<char*> deferred;
};
Live& live() {
  static Live* l = new Live();  // never destroyed: emptied at finalize
  return *l;
}

// One rank's row of the exchange, combined with bitwise or (so a row of u64 words).
struct Row {
  uint64_t ok = 0;   // allocation and handle made
  uint64_t mps = 0;  // an MPS control pipe is visible to this rank
  unsigned char uuid[16] = {};
  unsigned char handle[64] = {};
  uint64_t alloc_start = 0, alloc_bytes = 0;  // the allocation that holds it (CUDA IPC's view)
};
static_assert(sizeof(Row) % 8 == 0 && sizeof(cudaIpcMemHandle_t) == 64);

// The MPS control daemon's pipe, as a client would find it. CUDA_MPS_PIPE_DIRECTORY is
// CUDA's variable (not a WEFT_* one), read here only.
bool mps_pipe_visible(std::string* where) {
  const char* dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
  *where = std::string(dir && *dir ? dir : "/tmp/nvidia-mps") + "/control";
  return access(where->c_str(), F_OK) == 0;
}

Status local_setup(GpuWorkspace& ws, Row* row, std::string* why) {
  if (!cuda_state().usable) {
    *why = "cuda is not usable here (" + cuda_state().reason + ")";
    return Status::not_supported;
  }
  WEFT_CUDA_TRY(cudaGetDevice(&ws.device));
  cudaDeviceProp prop{};
  WEFT_CUDA_TRY(cudaGetDeviceProperties(&prop, ws.device));
  memcpy(row->uuid, &prop.uuid, sizeof row->uuid);
  ws.half = std::max<size_t>(ws.settings.scratch_bytes / 2, 4096) & ~size_t(255);
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, kFlagsBytes + 2 * ws.half);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    *why = "cudaMalloc of " + std::to_string(kFlagsBytes + 2 * ws.half) + " bytes failed: " + cudaGetErrorString(err) +
           " (lower WEFT_GPU_COLL_SCRATCH)";
    return Status::no_memory;
  }
  ws.own = static_cast<char*>(p);
  WEFT_CUDA_TRY(cudaMemset(ws.own, 0, kFlagsBytes));
  cudaIpcMemHandle_t h{};
  err = cudaIpcGetMemHandle(&h, ws.own);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string("cudaIpcGetMemHandle failed: ") + cudaGetErrorString(err);
    return Status::not_supported;
  }
  memcpy(row->handle, &h, sizeof h);
  cuda_ipc_own_allocation(ws.own, &row->alloc_start, &row->alloc_bytes);
  // The stop word, in host memory the kernels can read: the host must be able to end a wait
  // on the device without a CUDA call (the streams may be stuck behind it).
  void* stop = nullptr;
  WEFT_CUDA_TRY(cudaHostAlloc(&stop, sizeof(unsigned int), cudaHostAllocMapped));
  ws.stop_host = static_cast<unsigned int*>(stop);
  *ws.stop_host = 0;
  void* stop_device = nullptr;
  WEFT_CUDA_TRY(cudaHostGetDevicePointer(&stop_device, stop, 0));
  ws.stop_device = static_cast<const unsigned int*>(stop_device);
  // The fused kernels' error word (host memory too, read without a CUDA call) and the
  // registration table, made now: stream capture forbids allocations later.
  void* error = nullptr;
  WEFT_CUDA_TRY(cudaHostAlloc(&error, sizeof(unsigned int), cudaHostAllocMapped));
  ws.error_host = static_cast<unsigned int*>(error);
  *ws.error_host = 0;
  void* error_device = nullptr;
  WEFT_CUDA_TRY(cudaHostGetDevicePointer(&error_device, error, 0));
  ws.error_device = static_cast<unsigned int*>(error_device);
  const size_t entries = size_t(ws.size) * kMaxRegistrations;
  void* table = nullptr;
  WEFT_CUDA_TRY(cudaMalloc(&table, entries * sizeof(FusedRegistration)));
  WEFT_CUDA_TRY(cudaMemset(table, 0, entries * sizeof(FusedRegistration)));
  ws.regs.device = static_cast<FusedRegistration*>(table);
  ws.regs.own.assign(kMaxRegistrations, OwnRegistration{});
  ws.regs.table.assign(entries, FusedRegistration{});
  ws.regs.peer_buffer.assign(entries, 0);
  WEFT_CUDA_TRY(cudaStreamCreateWithFlags(&ws.aux, cudaStreamNonBlocking));
  // A blocking stream (not cudaStreamNonBlocking): ordered after what the program issued on
  // the legacy default stream, such as a cudaMemset or a pageable cudaMemcpy whose DMA may
  // still run when it returns; a non-blocking stream read such inputs before they landed.
  WEFT_CUDA_TRY(cudaStreamCreateWithFlags(&ws.stream, cudaStreamDefault));
  WEFT_CUDA_TRY(cudaEventCreateWithFlags(&ws.done, cudaEventDisableTiming));
  // Kernels load now, not at a stream-ordered call's first launch (lazy loading may wait for
  // the device there).
  WEFT_CUDA_TRY(preload_flag_barrier());
  WEFT_CUDA_TRY(preload_gather());
  WEFT_TRY(reduce_device_preload());
  WEFT_CUDA_TRY(cudaDeviceSynchronize());  // the zeroed flags, before any peer can read them
  row->ok = 1;
  return Status::ok;
}

// The CUDA ordinal (here) of the GPU with this uuid, or -1.
int ordinal_of(const unsigned char* uuid) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return -1;
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess && memcmp(&prop.uuid, uuid, 16) == 0) return d;
  }
  (void)cudaGetLastError();
  return -1;
}

Status open_peers(GpuWorkspace& ws, const std::vector<Row>& rows, const std::vector<int>& world, std::string* why) {
  for (int q = 0; q < ws.size; ++q) {
    if (q == ws.rank) continue;
    const Row& r = rows[size_t(q)];
    if (!r.ok) {
      *why = "rank " + std::to_string(q) + " could not make its workspace";
      return Status::not_supported;
    }
    const int d = ordinal_of(r.uuid);
    if (d < 0) {
      *why = "rank " + std::to_string(q) + "'s GPU is not visible here";
      return Status::not_supported;
    }
    if (d != ws.device) {
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, ws.device, d) != cudaSuccess || !can) {
        (void)cudaGetLastError();
        *why = "GPU " + std::to_string(ws.device) + " has no peer access to rank " + std::to_string(q) + "'s GPU " +
               std::to_string(d);
        return Status::not_supported;
      }
    }
    cudaIpcMemHandle_t h;
    memcpy(&h, r.handle, sizeof h);
    void* p = nullptr;
    cudaError_t err = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    // The driver maps an allocation into a process once: the IPC cache may still hold mappings
    // of memory the peer freed and its workspace now reuses (say, of a registration).
    if (err == cudaErrorAlreadyMapped) {
      (void)cudaGetLastError();
      if (cuda_ipc_close_freed(world[size_t(q)], r.alloc_start, r.alloc_bytes) > 0)
        err = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      *why = "cudaIpcOpenMemHandle of rank " + std::to_string(q) + "'s workspace failed: " + cudaGetErrorString(err);
      return Status::not_supported;
    }
    ws.base[size_t(q)] = static_cast<char*>(p);
    ws.opened[size_t(q)] = 1;
  }
  return Status::ok;
}

std::shared_ptr<GpuWorkspace> create(const CollContext& ctx, std::string* why) {
  const Comm& c = ctx.comm;
  if (!settings_of(ctx).enabled) {
    *why = "turned off by WEFT_GPU_COLL";
    return nullptr;
  }
  if (c.size < 2 || c.size > kMaxRanks || !c.single_node) {
    *why = c.single_node ? "GPU collectives serve 2 to " + std::to_string(kMaxRanks) + " ranks"
                         : "the communicator spans nodes";
    return nullptr;
  }
  auto ws = std::make_shared<GpuWorkspace>();
  ws->settings = settings_of(ctx);
  ws->rank = c.rank;
  ws->size = c.size;
  ws->base.assign(size_t(c.size), nullptr);
  ws->opened.assign(size_t(c.size), 0);
  std::vector<Row> rows(size_t(c.size));
  Row& mine = rows[size_t(c.rank)];
  std::string local_why;
  std::string pipe;
  if (local_setup(*ws, &mine, &local_why) != Status::ok && local_why.empty()) local_why = error_detail();
  mine.mps = mps_pipe_visible(&pipe);
  ws->base[size_t(c.rank)] = ws->own;
  const Reduction bor{ReduceOp::bor, BasicType::u64, sizeof(uint64_t)};
  Status s = coll::allreduce(ctx, rows.data(), rows.data(), rows.size() * sizeof(Row) / 8, bor);
  if (s != Status::ok) {
    *why = "the exchange of IPC handles failed";
    return nullptr;
  }
  if (mine.ok && open_peers(*ws, rows, c.world_ranks, &local_why) != Status::ok && local_why.empty())
    local_why = error_detail();
  // Agree: the lowest rank that failed, or none.
  std::vector<int64_t> failed(size_t(c.size), 0);
  failed[size_t(c.rank)] = local_why.empty() ? 0 : 1;
  const Reduction sum{ReduceOp::sum, BasicType::i64, sizeof(int64_t)};
  s = coll::allreduce(ctx, failed.data(), failed.data(), failed.size(), sum);
  if (s != Status::ok) {
    *why = "the agreement on the workspace failed";
    return nullptr;  // the destructor closes what was opened
  }
  const auto first = std::find(failed.begin(), failed.end(), int64_t(1));
  if (first != failed.end()) {
    *why = !local_why.empty() ? local_why
                              : "rank " + std::to_string(first - failed.begin()) + " could not set it up (its log says why)";
    ws->release(true);  // no peer uses it: nobody passed the agreement
    return nullptr;
  }
  // Kernels spinning on peers' flags need the ranks' kernels to run at the same time: one GPU
  // per rank, or MPS. Decided from the exchanged rows, so alike everywhere.
  bool shared = false, all_mps = true;
  for (int q = 0; q < c.size; ++q) {
    all_mps = all_mps && rows[size_t(q)].mps;
    for (int r = q + 1; r < c.size; ++r) shared = shared || memcmp(rows[size_t(q)].uuid, rows[size_t(r)].uuid, 16) == 0;
  }
  const char* variant;
  switch (ws->settings.mode) {
    case Mode::kernels: ws->kernels = true; variant = "kernels (forced by WEFT_GPU_COLL_MODE)"; break;
    case Mode::copy_engine: ws->kernels = false; variant = "copy engine (forced by WEFT_GPU_COLL_MODE)"; break;
    default:
      ws->kernels = !shared || all_mps;
      variant = !shared ? "kernels (one GPU per rank)"
                : all_mps ? "kernels (ranks share a GPU; every rank sees an MPS control pipe)"
                          : "copy engine (ranks share a GPU and some rank sees no MPS control pipe: kernels "
                            "of different processes would take turns, so flags are not spun on)";
  }
  WEFT_INFO(Subsys::gpu, "gpu collectives on %s: workspace of 2 slots of %zu bytes per rank, %d peers mapped; %s",
            c.label().c_str(), ws->half, c.size - 1, variant);
  {
    auto& l = live();
    std::erase_if(l.workspaces, [](const std::weak_ptr<GpuWorkspace>& w) { return w.expired(); });
    l.workspaces.push_back(ws);
  }
  return ws;
}

}  // namespace

Status cuda_failure(const char* what, cudaError_t err) {
  (void)cudaGetLastError();
  const std::string msg = std::string(what) + ": " + cudaGetErrorString(err);
  WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::internal;
}

bool compiled() { return true; }

bool supports(ReduceOp op, BasicType type) { return reduce_device_supports(op, type); }

std::shared_ptr<GpuWorkspace> shared_workspace(const Comm& c) {
  const CommState* st = find_state(c);
  return st && st->gpu ? st->gpu->ws : nullptr;
}

GpuWorkspace* existing_workspace(const Comm& c) {
  const CommState* st = find_state(c);
  return st && st->gpu ? st->gpu->ws.get() : nullptr;
}

GpuWorkspace* workspace(const CollContext& ctx, std::string* why) {
  const Comm& c = ctx.comm;
  CommState& st = state_of(ctx);
  if (!st.gpu) {
    auto h = std::make_shared<CommGpu>();
    h->ws = create(ctx, &h->why);
    if (!h->ws)
      WEFT_INFO(Subsys::gpu, "gpu collectives on %s: not usable (%s); device buffers are staged through host memory",
                c.label().c_str(), h->why.c_str());
    st.gpu = h;
  }
  CommGpu* h = st.gpu.get();
  if (!h->ws && why) *why = h->why;
  return h->ws.get();
}

void stop_kernels(const Comm& c, Status status, const std::string& why) {
  CommState* st = find_state(c);
  if (!st) return;
  if (st->gpu && st->gpu->ws) st->gpu->ws->stop(status, why);
  if (st->hier && st->hier->node_comm) stop_kernels(*st->hier->node_comm, status, why);
}

bool kernels_allowed(const GpuWorkspace& ws) { return ws.kernels; }
const Settings& settings_of(const GpuWorkspace& ws) { return ws.settings; }
void* internal_stream(const GpuWorkspace& ws) { return ws.stream; }

void GpuWorkspace::stop(Status why_status, const std::string& why) {
  if (stop_status != Status::ok || released) return;
  stop_status = why_status;
  stop_reason = why;
  if (stop_host) __atomic_store_n(stop_host, 1u, __ATOMIC_RELEASE);
  WEFT_WARN(Subsys::gpu, "gpu collectives stopped on this communicator (%s): kernels waiting for peers end, and later "
            "GPU calls on it fail", why.c_str());
}

Status GpuWorkspace::check_running() const {
  if (error_host && __atomic_load_n(error_host, __ATOMIC_ACQUIRE)) [[unlikely]] {
    set_error_detail("a fused GPU allreduce on this communicator found a rank's buffer outside its registrations "
                     "and moved no data; the communicator's GPU collectives are unusable");
    return Status::invalid_arg;
  }
  if (stop_status == Status::ok) [[likely]] return Status::ok;
  set_error_detail("the GPU collectives of this communicator were stopped: " + stop_reason);
  return stop_status;
}

void GpuWorkspace::release(bool after_barrier) {
  if (released) return;
  released = true;
  if (stream) (void)cudaStreamSynchronize(stream);
  // Tell each peer that this rank no longer reads its memory, then unmap it. A stopped
  // workspace writes no marks: a peer may be dead, its memory gone.
  const uint64_t one = 1;
  const bool mark = !after_barrier && stop_status == Status::ok;
  for (int q = 0; q < size; ++q) {
    if (!opened[size_t(q)]) continue;
    if (mark) (void)cudaMemcpy(base[size_t(q)] + kReleasedAt + 8 * size_t(rank), &one, 8, cudaMemcpyHostToDevice);
    (void)cudaIpcCloseMemHandle(base[size_t(q)]);
  }
  if (temp) (void)cudaFree(temp);
  if (own) {
    bool free_now = after_barrier || size < 2;
    if (!free_now) {
      std::vector<uint64_t> marks(size_t(size), 0);
      free_now = cudaMemcpy(marks.data(), own + kReleasedAt, 8 * size_t(size), cudaMemcpyDeviceToHost) == cudaSuccess;
      for (int q = 0; q < size; ++q) free_now = free_now && (q == rank || marks[size_t(q)]);
    }
    if (free_now) (void)cudaFree(own);
    else live().deferred.push_back(own);  // a peer may still read it: freed at MPI_Finalize
  }
  if (done) (void)cudaEventDestroy(done);
  if (stream) (void)cudaStreamDestroy(stream);
  if (stop_host) (void)cudaFreeHost(stop_host);
  if (error_host) (void)cudaFreeHost(error_host);
  if (aux) (void)cudaStreamDestroy(aux);
  if (regs.device) (void)cudaFree(regs.device);
  release_registrations(*this);
  error_host = error_device = nullptr;
  aux = nullptr;
  regs.device = nullptr;
  (void)cudaGetLastError();
  stop_host = nullptr;
  stop_device = nullptr;
  own = temp = nullptr;
  stream = nullptr;
  done = nullptr;
}

void release_all() {
  auto& l = live();
  for (auto& w : l.workspaces)
    if (auto ws = w.lock()) ws->release(true);
  l.workspaces.clear();
  for (char* p : l.deferred) (void)cudaFree(p);
  l.deferred.clear();
  (void)cudaGetLastError();
}

Status enqueue_flag_barrier(const GpuWorkspace& ws, cudaStream_t s) {
  static_assert(kFlagRanks == kMaxRanks);
  WEFT_TRY(ws.check_running());
  unsigned long long* flags[kMaxRanks];
  for (int q = 0; q < ws.size; ++q) flags[q] = ws.flag(q);
  const cudaError_t err = launch_flag_barrier(flags, ws.rank, ws.size, ws.stop_device, s);
  return err == cudaSuccess ? Status::ok : cuda_failure("flag barrier launch", err);
}

Status enqueue_flag_wait_one(const GpuWorkspace& ws, int peer, cudaStream_t s) {
  WEFT_TRY(ws.check_running());
  unsigned long long* flags[kMaxRanks];
  for (int q = 0; q < ws.size; ++q) flags[q] = ws.flag(q);
  const cudaError_t err = launch_flag_wait_one(flags, ws.rank, ws.size, peer, ws.stop_device, s);
  return err == cudaSuccess ? Status::ok : cuda_failure("flag wait launch", err);
}

Status p2p_ready_enqueue(GpuWorkspace& ws, int peer, uint64_t seq, void* stream) {
  WEFT_TRY(ws.check_running());
  const cudaError_t err = launch_flag_store(ws.p2p_ready(ws.rank, peer), seq, static_cast<cudaStream_t>(stream));
  return err == cudaSuccess ? Status::ok : cuda_failure("point-to-point ready launch", err);
}

Status p2p_wait_done_enqueue(GpuWorkspace& ws, int peer, uint64_t seq, void* stream) {
  WEFT_TRY(ws.check_running());
  const cudaError_t err = launch_flag_wait_eq32(ws.p2p_done(peer, ws.rank, seq), uint32_t(seq), ws.stop_device,
                                                static_cast<cudaStream_t>(stream));
  return err == cudaSuccess ? Status::ok : cuda_failure("point-to-point done wait launch", err);
}

Status p2p_recv_enqueue(GpuWorkspace& ws, int peer, uint64_t seq, const void* src, void* dst, size_t bytes,
                        void* stream) {
  WEFT_TRY(ws.check_running());
  const auto s = static_cast<cudaStream_t>(stream);
  cudaError_t err = launch_flag_wait_geq(ws.p2p_ready(peer, ws.rank), seq, ws.stop_device, s);
  if (err != cudaSuccess) return cuda_failure("point-to-point ready wait launch", err);
  if (bytes > 0) WEFT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  err = launch_flag_store32(ws.p2p_done(ws.rank, peer, seq), uint32_t(seq), s);
  return err == cudaSuccess ? Status::ok : cuda_failure("point-to-point done launch", err);
}

Status p2p_graph_ready_enqueue(GpuWorkspace& ws, int peer, void* stream) {
  WEFT_TRY(ws.check_running());
  const cudaError_t err = launch_flag_increment(ws.graph_ready(ws.rank, peer), static_cast<cudaStream_t>(stream));
  return err == cudaSuccess ? Status::ok : cuda_failure("captured point-to-point ready launch", err);
}

Status p2p_graph_wait_done_enqueue(GpuWorkspace& ws, int peer, uint64_t back, void* stream) {
  WEFT_TRY(ws.check_running());
  // The message is number graph_ready[peer] - back (this rank's own count, in stream order).
  const cudaError_t err = launch_flag_wait_relative(ws.graph_done(peer, ws.rank), ws.graph_ready(ws.rank, peer),
                                                    -int64_t(back), ws.stop_device, static_cast<cudaStream_t>(stream));
  return err == cudaSuccess ? Status::ok : cuda_failure("captured point-to-point done wait launch", err);
}

Status p2p_graph_recv_enqueue(GpuWorkspace& ws, int peer, const void* src, void* dst, size_t bytes, void* stream) {
  WEFT_TRY(ws.check_running());
  const auto s = static_cast<cudaStream_t>(stream);
  // The next message from peer is number graph_done[peer] + 1.
  cudaError_t err =
      launch_flag_wait_relative(ws.graph_ready(peer, ws.rank), ws.graph_done(ws.rank, peer), 1, ws.stop_device, s);
  if (err != cudaSuccess) return cuda_failure("captured point-to-point ready wait launch", err);
  if (bytes > 0) WEFT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  err = launch_flag_increment(ws.graph_done(ws.rank, peer), s);
  return err == cudaSuccess ? Status::ok : cuda_failure("captured point-to-point done launch", err);
}

Status record_done(GpuWorkspace& ws) {
  if (!ws.settings.wait_on_stream) WEFT_CUDA_TRY(cudaEventRecord(ws.done, ws.stream));
  return Status::ok;
}

Status query_done(GpuWorkspace& ws) {
  const uint64_t spin = ws.settings.wait_spin_ns, until = spin ? monotonic_ns() + spin : 0;
  const bool on_stream = ws.settings.wait_on_stream;
  for (;;) {
    const cudaError_t err = on_stream ? cudaStreamQuery(ws.stream) : cudaEventQuery(ws.done);
    if (err == cudaSuccess) return Status::ok;
    if (err != cudaErrorNotReady) return cuda_failure(on_stream ? "cudaStreamQuery" : "cudaEventQuery", err);
    (void)cudaGetLastError();
    if (!spin || monotonic_ns() >= until) return Status::pending;
  }
}

bool kernel_call_supported(const CollArgs& a, const Comm& c, bool need_kernels, bool reduction) {
  const GpuWorkspace* ws = existing_workspace(c);
  if (!ws || (reduction && (a.red.user || !supports(a.red.op, a.red.type)))) return false;
  if (need_kernels && !ws->kernels) return false;
  return device_call(a);
}

Status enqueue_pieces(GpuWorkspace& ws, const Pieces& p, cudaStream_t s) {
  for (size_t i = 0; i < p.count; ++i) {
    const uint64_t piece = ws.pieces++;
    WEFT_TRY(p.in(i, piece, s));
    WEFT_TRY(enqueue_flag_barrier(ws, s));
    WEFT_TRY(p.out(i, piece, s));
  }
  return Status::ok;
}

std::shared_ptr<Schedule> build_pieces(const char* name, const Comm& c, std::shared_ptr<GpuWorkspace> ws,
                                       std::shared_ptr<const Pieces> p) {
  auto s = std::make_shared<Schedule>(name);
  auto wait = [ws](const CollContext&) { return query_done(*ws); };
  if (ws->kernels) {
    s->call([ws, p, name, comm = c.context_id] {
      gpu_timing::Span* span = gpu_timing::begin(ws->stream, name, 0, comm);
      const Status st = enqueue_pieces(*ws, *p, ws->stream);
      gpu_timing::end(span, ws->stream);
      WEFT_TRY(st);
      return record_done(*ws);
    });
    s->poll(wait);
    return s;
  }
  // The first piece's number is reserved when the call starts (so a reused schedule takes
  // fresh pieces each time).
  auto first = std::make_shared<uint64_t>(0);
  for (size_t i = 0; i < p->count; ++i) {
    s->next_round();
    s->call([ws, p, first, i] {
      if (i == 0) {
        *first = ws->pieces;
        ws->pieces += p->count;
      }
      WEFT_TRY(p->in(i, *first + i, ws->stream));
      return record_done(*ws);
    });
    s->poll(wait);
    std::shared_ptr<Schedule> barrier = build_barrier_dissemination(c);
    s->append(*barrier);
    s->new_round();
    s->call([ws, p, first, i] { return p->out(i, *first + i, ws->stream); });
  }
  s->call([ws] { return record_done(*ws); });
  s->poll(wait);
  return s;
}

std::shared_ptr<Schedule> build_enqueued(const char* name, const Comm& c, EnqueueFn fn) {
  auto s = std::make_shared<Schedule>(name);
  std::shared_ptr<GpuWorkspace> ws = shared_workspace(c);
  s->call([ws, fn = std::move(fn), name, comm = c.context_id] {
    gpu_timing::Span* span = gpu_timing::begin(ws->stream, name, 0, comm);
    const Status st = fn(*ws, ws->stream);
    gpu_timing::end(span, ws->stream);
    WEFT_TRY(st);
    return record_done(*ws);
  });
  s->poll([ws](const CollContext&) { return query_done(*ws); });
  return s;
}

Status enqueue_ring_reduce_scatter(GpuWorkspace& ws, uint64_t piece, const Shares& sh, size_t rot, BasicType type,
                                   ReduceOp op, cudaStream_t s) {
  const size_t elem = basic_type_size(type), p = size_t(ws.size), r = size_t(ws.rank);
  const int left = int((r + p - 1) % p);
  char* mine = ws.slot(ws.rank, piece);
  const char* theirs = ws.slot(left, piece);
  for (size_t step = 0; step + 1 < p; ++step) {
    const size_t k = (r + rot + 2 * p - step - 1) % p;
    if (sh.hi(k) > sh.lo(k)) {
      DeviceInputs in;
      in.count = 2;
      in.in[0] = theirs + sh.lo(k) * elem;
      in.in[1] = mine + sh.lo(k) * elem;
      WEFT_TRY(reduce_device_multi(op, type, in, mine + sh.lo(k) * elem, sh.hi(k) - sh.lo(k), s));
    }
    if (step + 2 < p) WEFT_TRY(enqueue_flag_wait_one(ws, left, s));
  }
  return Status::ok;
}

bool uniform_allgather(const CollArgs& a, const CollContext& ctx) {
  if (!a.uniform || !a.send || a.own_bytes == 0 || a.recv_blocks.size() != size_t(ctx.comm.size)) return false;
  for (size_t q = 0; q < a.recv_blocks.size(); ++q)
    if (a.recv_blocks[q].offset != q * a.own_bytes || a.recv_blocks[q].bytes != a.own_bytes) return false;
  return true;
}

bool block_reduce_scatter(const CollArgs& a, const Comm& c) {
  if (!a.uniform || !a.send || a.counts.size() != size_t(c.size) || a.counts[0] == 0) return false;
  for (size_t n : a.counts)
    if (n != a.counts[0]) return false;
  return a.count == a.counts[0] * size_t(c.size);
}

Status enqueue_stream_call(GpuWorkspace& ws, cudaStream_t s, const char* name, const std::function<Status()>& body) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  WEFT_CUDA_TRY(cudaStreamIsCapturing(s, &capture));
  if (capture == cudaStreamCaptureStatusNone) {
    gpu_timing::Span* span = gpu_timing::begin(s, name, 0, 0);
    const Status st = body();
    gpu_timing::end(span, s);
    return st;
  }
  WEFT_TRY(enqueue_flag_barrier(ws, s));
  WEFT_TRY(body());
  return enqueue_flag_barrier(ws, s);
}

Status kernels_required() {
  set_error_detail("the GPU workspace runs copy-engine algorithms only (ranks share a GPU without MPS)");
  return Status::not_supported;
}

Status allreduce_enqueue(GpuWorkspace& ws, AllreduceAlgo algo, const void* send, void* recv, size_t count,
                         BasicType type, ReduceOp op, void* stream) {
  if (!ws.kernels) return kernels_required();
  auto s = static_cast<cudaStream_t>(stream);
  return enqueue_stream_call(ws, s, "MPIX_Allreduce_enqueue", [&] {
    return algo == AllreduceAlgo::two_shot ? enqueue_two_shot(ws, send, recv, count, type, op, s)
                                           : enqueue_one_shot(ws, send, recv, count, type, op, s);
  });
}

}  // namespace weft::coll::gpu
