// The GPU workspace of a communicator (CUDA builds only; coll/gpu internal).
//
// Each rank's allocation: a 4 KiB flags area, then two data slots of `half` bytes each. Piece
// n of the workspace's calls uses slot n mod 2 (double buffering by parity), so a rank may
// write the next piece while slow peers still read the last one; it writes a slot again only
// after a barrier that every peer entered after finishing the piece that used it before.
// Flags area: word 0 is this rank's barrier epoch (the barriers it has entered, counted by the
// barrier kernels themselves; written only by this rank, read by every peer; monotonic, so
// back-to-back barriers never race a reset); from byte 256 one word per
// rank, set by that rank when it releases its mappings (the owner frees its memory then).
// Point-to-point words (the stream-native MPIX_Send/Recv_enqueue, p2p_* in gpu_coll.h), for
// up to kFlagRanks ranks:
//   bytes 512..767   ready[q]: 64-bit, the last sequence number this rank (as sender) made
//                    ready for rank q; written by this rank only, polled by q (>= seq);
//   bytes 768..2815  done[q][k], k < kP2pSlots: 32-bit, written by this rank (as receiver)
//                    when it has copied message seq from rank q, at k = seq % kP2pSlots, value
//                    uint32_t(seq); polled by q (== seq). A slot per sequence number, as
//                    receives may complete out of send order (tags); q reuses a slot only after
//                    its wait for the slot's previous message is enqueued on its stream.
// The fused allreduce kernels' words (reduce_device_fused_allreduce, runtime/op_gpu.h):
//   bytes 2816..2819 this rank's block counter (its own kernels' blocks only; zero between
//                    launches);
//   bytes 2880..2911 this rank's FusedPlace for its current piece: written before the piece's
//                    first meeting, read by peers between its two meetings;
//   bytes 2944..2951 this rank's skip word: the last piece number a whole-call fold covered
//                    (written by a call's first piece, read by its later pieces; own use only).
// Point-to-point words of calls captured into a CUDA graph (p2p_graph_* in gpu_coll.h): counts
// of messages, kept on the device so that every replay counts on; 64-bit, per rank q:
//   bytes 3072..3327 graph_ready[q]: the captured messages to q this rank made ready; written
//                    by this rank only (+1 per message), polled by q;
//   bytes 3328..3583 graph_done[q]: the captured messages from q this rank has copied; written
//                    by this rank only (+1 per message), polled by q. Captured messages of one
//                    pair are received in send order (checked on the host at capture).
// The multi-block one-shot kernel's words (DeviceFlags::lane, runtime/op_gpu.h):
//   bytes 3584..3839 lane[b]: 64-bit, the epoch of this rank's block b (block b's meetings of
//                    the calls with more than b blocks, counted on the device); written by
//                    this rank only, polled by every peer's block b.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coll/schedule.h"
#include "gpu_coll.h"
#include "runtime/op_gpu.h"

namespace weft::coll::gpu {

constexpr size_t kFlagsBytes = 4096;
constexpr size_t kReleasedAt = 256;
constexpr size_t kP2pReadyAt = 512;
constexpr size_t kP2pDoneAt = 768;
static_assert(kP2pDoneAt + size_t(kMaxRanks) * kP2pSlots * 4 <= kFlagsBytes);
constexpr size_t kFusedArriveAt = 2816;
constexpr size_t kFusedPlaceAt = 2880;
static_assert(kP2pDoneAt + size_t(kMaxRanks) * kP2pSlots * 4 <= kFusedArriveAt);
static_assert(kFusedPlaceAt + sizeof(FusedPlace) <= kFlagsBytes && kFusedPlaceAt % 16 == 0);
constexpr size_t kFusedSkipAt = 2944;  // FusedPiece::skip
static_assert(kFusedSkipAt >= kFusedPlaceAt + sizeof(FusedPlace) && kFusedSkipAt % 8 == 0);
constexpr size_t kGraphReadyAt = 3072;
static_assert(kFusedSkipAt + 8 <= kGraphReadyAt);
constexpr size_t kGraphDoneAt = kGraphReadyAt + size_t(kMaxRanks) * 8;
static_assert(kFusedPlaceAt + sizeof(FusedPlace) <= kGraphReadyAt);
static_assert(kGraphDoneAt + size_t(kMaxRanks) * 8 <= kFlagsBytes);
constexpr size_t kLaneAt = 3584;
static_assert(kLaneAt >= kGraphDoneAt + size_t(kMaxRanks) * 8 && kLaneAt + kFusedOneShotMaxBlocks * 8 <= kFlagsBytes);

// This rank's registrations and its view of every peer's (registered.cpp). Every rank's id for
// one registration is the same (agreed when it is made); the table in device memory is what
// the fused kernels read.
struct OwnRegistration {
  const char* at = nullptr;
  uint64_t bytes = 0;  // 0: free
  uint64_t buffer_id = 0, serial = 0;
  // Who made it: the user or a persistent call (kept until dropped), an uncaptured
  // stream-ordered call (a cache entry: evictable), or a captured one (its graph may replay at
  // any time: evictable only once its memory was freed; a stream-ordered call's registration
  // that a captured call finds becomes one).
  enum class Origin : uint8_t { user, stream_call, captured } origin = Origin::user;
};
struct Registrations {
  std::vector<OwnRegistration> own;        // [id]
  std::vector<FusedRegistration> table;    // [q * kMaxRegistrations + id]: rank q's, mapped here
  std::vector<uint64_t> peer_buffer;       // [q * kMaxRegistrations + id]: its buffer id (unpin)
  std::vector<int> world;                  // [q]: rank q's world rank
  FusedRegistration* device = nullptr;     // the table in device memory
  uint64_t serial = 0;
  int live = 0;
  // Ids this rank dropped on its own (the IPC cache's release hook) that its peers may still
  // hold: reported as live and stale until a registration drops them on every rank.
  uint64_t released_here = 0;
};

class GpuWorkspace {
 public:
  ~GpuWorkspace() { release(false); }
  // after_barrier: every rank has stopped using every workspace (MPI_Finalize), so memory may
  // be freed without waiting for the peers' release marks.
  void release(bool after_barrier);

  char* slot(int q, uint64_t piece) const { return base[size_t(q)] + kFlagsBytes + (piece & 1) * half; }
  unsigned long long* flag(int q) const { return reinterpret_cast<unsigned long long*>(base[size_t(q)]); }
  unsigned long long* lane(int q) const { return reinterpret_cast<unsigned long long*>(base[size_t(q)] + kLaneAt); }
  // ready[to] in rank `from`'s flags area, done[from][seq % kP2pSlots] in rank `to`'s.
  unsigned long long* p2p_ready(int from, int to) const {
    return reinterpret_cast<unsigned long long*>(base[size_t(from)] + kP2pReadyAt) + to;
  }
  // graph_ready[to] in rank `from`'s flags area; graph_done[from] in rank `to`'s.
  unsigned long long* graph_ready(int from, int to) const {
    return reinterpret_cast<unsigned long long*>(base[size_t(from)] + kGraphReadyAt) + to;
  }
  unsigned long long* graph_done(int to, int from) const {
    return reinterpret_cast<unsigned long long*>(base[size_t(to)] + kGraphDoneAt) + from;
  }
  FusedPlace* place(int q) const { return reinterpret_cast<FusedPlace*>(base[size_t(q)] + kFusedPlaceAt); }
  unsigned int* arrive() const { return reinterpret_cast<unsigned int*>(own + kFusedArriveAt); }
  unsigned long long* fused_skip() const { return reinterpret_cast<unsigned long long*>(own + kFusedSkipAt); }
  unsigned int* p2p_done(int to, int from, uint64_t seq) const {
    return reinterpret_cast<unsigned int*>(base[size_t(to)] + kP2pDoneAt) + size_t(from) * kP2pSlots +
           seq % kP2pSlots;
  }

  int rank = 0, size = 0, device = -1;
  bool kernels = true;  // the peer-spinning kernels may run (agreed at creation)
  Settings settings;    // the settings it was made with (settings_of its context)
  size_t half = 0;      // bytes of one slot (a multiple of 256)
  char* own = nullptr;  // this rank's allocation
  std::vector<char*> base;     // every rank's allocation, mapped here (own for this rank)
  std::vector<char> opened;    // base[q] came from cudaIpcOpenMemHandle
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  char* temp = nullptr;        // gpu_copy_engine: the peers' pieces, (size - 1) slots; lazily
  uint64_t pieces = 0;         // pieces started so far (their parity picks the slot)
  bool released = false;
  // Automatic registration of stream-ordered calls' buffers (register_call_buffers) goes on
  // until one fails; the outcome is agreed, so every rank stops at the same call.
  bool auto_register = true;
  AgreementSchedule auto_schedule;  // which uncaptured eligible calls agree
  // The stop word: host memory the kernels read (stop_device) while they wait for peers. Set
  // once the communicator fails (stop()), so no kernel spins for a dead or departed rank; the
  // workspace then refuses every call with stop_status.
  unsigned int* stop_host = nullptr;
  const unsigned int* stop_device = nullptr;
  Status stop_status = Status::ok;
  std::string stop_reason;
  // Set by a fused kernel (host memory mapped for the device) when a peer published a place
  // outside its registrations: the piece moved no data, and later calls fail.
  unsigned int* error_host = nullptr;
  unsigned int* error_device = nullptr;
  cudaStream_t aux = nullptr;  // non-blocking: registration table uploads
  Registrations regs;
  void stop(Status why_status, const std::string& why);
  // Status::ok, or the stop's status with its reason as the error detail.
  Status check_running() const;
};

// Unpins every peer mapping ws's registrations hold (its release).
void release_registrations(GpuWorkspace& ws);

// The shared workspace of c (null when none or unusable).
std::shared_ptr<GpuWorkspace> shared_workspace(const Comm& c);

// Enqueues a flag barrier on `s` (refused once the workspace is stopped): a one-block kernel publishes this rank's next epoch (its flag
// word plus one, after a system-wide fence) and waits until every rank's flag has reached it.
// The epoch is counted on the device, so a CUDA graph that captured barriers may be replayed.
Status enqueue_flag_barrier(const GpuWorkspace& ws, cudaStream_t s);

// The same publish, but waiting for rank `peer` alone (one step of a ring). Every rank must
// still enqueue the same number of barriers and waits, in the same order.
Status enqueue_flag_wait_one(const GpuWorkspace& ws, int peer, cudaStream_t s);

// Enqueues a stream-ordered call (body) on `s`. While `s` is being captured into a CUDA graph,
// flag barriers before and after it: the graph keeps the slots its pieces used at capture, and
// may be replayed after any other call, or be followed by any; the barriers keep the slot rule
// whatever the parities. The flag epochs are counted on the device, so replays count on.
Status enqueue_stream_call(GpuWorkspace& ws, cudaStream_t s, const char* name, const std::function<Status()>& body);

// Logs a failed CUDA call (what: the call) and returns Status::internal.
Status cuda_failure(const char* what, cudaError_t err);
#define WEFT_CUDA_TRY(call)                                             \
  do {                                                                  \
    const cudaError_t weft_err_ = (call);                               \
    if (weft_err_ != cudaSuccess) return ::weft::coll::gpu::cuda_failure(#call, weft_err_); \
  } while (0)

// Status::not_supported, with the reason, for an enqueue function in the copy-engine variant.
Status kernels_required();

// A broadcast or an allgather of `bytes` bytes per rank as one launch of the gather kernel
// (gather_kernel.h): own_in is this rank's contribution (null: none, a broadcast's non-root),
// out[q] where rank q's goes (null: not here). Takes the call's pieces from ws.pieces. Kernels
// allowed only.
Status enqueue_gather(GpuWorkspace& ws, const char* own_in, char* const* out, size_t bytes, cudaStream_t s);
// gpu_bcast and gpu_allgather as that launch (blocking or enqueued), and whether a call of
// `bytes` per rank runs so (kernels allowed, up to WEFT_GPU_GATHER_KERNEL_MAX).
bool runs_as_gather(const GpuWorkspace& ws, size_t bytes);
Status enqueue_bcast_gather(GpuWorkspace& ws, char* buf, size_t bytes, int root, cudaStream_t s);
Status enqueue_allgather_gather(GpuWorkspace& ws, const char* send, char* recv, size_t block, cudaStream_t s);

// The elements of the piece sizes for one call: a slot holds `half / elem` elements.
inline size_t piece_elements(const GpuWorkspace& ws, size_t elem) { return ws.half / elem; }

// The blocking schedule steps: record the workspace's event on its stream, and a poll that
// reports pending until it has passed (WEFT_GPU_WAIT_QUERY=stream: no event; the poll queries
// the stream; WEFT_GPU_WAIT_SPIN_US: the poll queries in a tight loop that long).
Status record_done(GpuWorkspace& ws);
Status query_done(GpuWorkspace& ws);

// Shared by the algorithm entries: a workspace exists (and allows kernels, if need_kernels),
// the call's buffers are device memory, and (reduction) the kernels reduce its op and type.
bool kernel_call_supported(const CollArgs& a, const Comm& c, bool need_kernels, bool reduction = true);

// A call of the bcast, allgather, reduce_scatter_block and reduce algorithms as slot-sized
// pieces. Piece i (workspace piece `piece`, whose parity picks the slot): `in` writes this
// rank's part into its slot (it may do nothing), then a barrier, then `out` reads the slots it
// needs. Both only enqueue on the stream. Every rank has the same number of pieces.
struct Pieces {
  size_t count = 0;
  std::function<Status(size_t i, uint64_t piece, cudaStream_t s)> in, out;
};
// Enqueues every piece with a flag barrier between `in` and `out` (kernels allowed only). The
// slot rule holds with one barrier per piece: a rank writes piece n + 2's slot after piece
// n + 1's barrier, which every peer entered after its reads of piece n (stream order).
Status enqueue_pieces(GpuWorkspace& ws, const Pieces& p, cudaStream_t s);
// The blocking schedule of such a call. Kernels allowed: one step enqueues every piece on the
// workspace's stream and records the event, a poll waits for it. Copy-engine variant (ranks
// share a GPU without MPS; nothing may spin on the GPU): per piece, `in` and a wait for the
// stream (which also covers the last piece's reads), a host barrier (dissemination), `out`;
// a final wait. No flag kernel runs; `out` may launch a reduction kernel, which never waits.
std::shared_ptr<Schedule> build_pieces(const char* name, const Comm& c, std::shared_ptr<GpuWorkspace> ws,
                                       std::shared_ptr<const Pieces> p);

// The blocking schedule of any call that enqueues on a stream (kernels allowed only): one step
// enqueues it on the workspace's stream and records the event, a poll waits for the event.
using EnqueueFn = std::function<Status(GpuWorkspace& ws, cudaStream_t s)>;
std::shared_ptr<Schedule> build_enqueued(const char* name, const Comm& c, EnqueueFn fn);
// A reduction call's buffers and reduction, as the schedules of reduction algorithms keep them.
struct ReductionCall {
  const void* send;
  void* recv;
  size_t count;
  BasicType type;
  ReduceOp op;
};
inline ReductionCall reduction_call(const CollArgs& a) { return {a.send, a.recv, a.count, a.red.type, a.red.op}; }

// A piece of n elements cut into p shares of `share` elements (the last ones may be short or
// empty). By default shares are 16-byte multiples, so the kernels' vector loads apply.
struct Shares {
  Shares(size_t n_, size_t p, size_t elem) : n(n_) {
    const size_t align = std::max<size_t>(1, 16 / elem);
    share = ((n + p - 1) / p + align - 1) / align * align;
  }
  size_t lo(size_t k) const { return std::min(n, k * share); }
  size_t hi(size_t k) const { return std::min(n, (k + 1) * share); }
  size_t n = 0, share = 0;
};

// The reduce-scatter steps of a ring, on a piece already in every rank's slot and visible to
// its right neighbour: p - 1 steps, at step t rank r folds share (r + rot - t - 1) mod p of its
// left neighbour's slot into the same share of its own, the steps meeting pairwise
// (enqueue_flag_wait_one). Afterwards rank r's slot holds share (r + rot + 1) mod p reduced
// over every rank, in ring order (each share is folded once, by one chain of ranks).
Status enqueue_ring_reduce_scatter(GpuWorkspace& ws, uint64_t piece, const Shares& sh, size_t rot, BasicType type,
                                   ReduceOp op, cudaStream_t s);

// Call shapes the algorithms of one collective share: allgather's uniform blocks back to
// back; reduce_scatter's equal shares (the block form).
bool uniform_allgather(const CollArgs& a, const CollContext& c);
bool block_reduce_scatter(const CollArgs& a, const Comm& c);

// The allreduce as fused pieces (reduce_device_fused_allreduce): one launch per slot-sized
// piece, places from this rank's registrations (send and recv looked up; in place, the
// one-shot reads its input from the slot, as its own result overwrites it while peers read).
// scatter: reduce_scatter_block of `count` elements per rank (send holds size blocks of them;
// in place: the input in recv, through the slot); its pieces are sub_block_elements long.
enum class FusedForm : uint8_t { one_shot, direct, scatter };
Status enqueue_fused(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                     cudaStream_t s, FusedForm form);
// Where the peers find [ptr, ptr + bytes) of this rank: the id of a live registration holding
// it whole whose allocation is still the one registered (buffer id), *offset into it; else -1.
int32_t find_registration(const GpuWorkspace& ws, const void* ptr, size_t bytes, uint64_t* offset);

// The inputs (every rank's slot of `piece`) and flags of one launch of the fused one-shot
// kernel (reduce_device_fused_one_shot) over `bytes` of each slot; refused once ws is stopped.
Status one_shot_launch_args(const GpuWorkspace& ws, uint64_t piece, size_t bytes, DeviceInputs* in,
                            DeviceFlags* flags);
// gpu_reduce_scatter_block as one launch of that kernel per piece (kernels allowed, up to
// WEFT_GPU_REDUCE_SCATTER_KERNEL_MAX bytes of input), and whether a call of `input_bytes` runs so.
bool runs_as_scatter_kernel(const GpuWorkspace& ws, size_t input_bytes);
Status enqueue_reduce_scatter_block_one_launch(GpuWorkspace& ws, const char* send, char* recv, size_t count,
                                               BasicType type, ReduceOp op, cudaStream_t s);

// may_fuse false: never as fused pieces (a blocking call below gpu_direct's size).
Status enqueue_one_shot(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                        ReduceOp op, cudaStream_t s, bool may_fuse = true);
// root < 0: allreduce; else reduce to root (the result lands at the root only).
Status enqueue_two_shot(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                        ReduceOp op, cudaStream_t s, int root = -1);
Status enqueue_ring(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                    cudaStream_t s, int root = -1);

}  // namespace weft::coll::gpu
