// GPU-native collectives among the ranks of one node, on CUDA device buffers (coll/gpu).
//
// Each communicator gets a GPU workspace on its first GPU-native call (GpuWorkspace, cached on
// the communicator in its state, coll/comm_state.h): every rank's scratch buffer and flags in device memory,
// mapped into every other rank through CUDA IPC. The algorithms (one per file):
//   gpu_one_shot     every rank copies its piece into its slot, a flag barrier, every rank
//                    reduces all slots into its result (small messages);
//   gpu_two_shot     the same copy and barrier, each rank reduces its 1/p share of all slots
//                    into its own slot, a second barrier, each rank copies every share out;
//   gpu_direct       no workspace copies: the ranks exchange IPC handles of their buffers, and
//                    rank r reduces share r of every input into share r of every output in
//                    one kernel between two barriers (large messages; blocking calls only);
//   gpu_ring         reduce-scatter and allgather in p - 1 steps each, every step reading the
//                    left neighbour's slot only (links that do not join every pair; forced
//                    with WEFT_COLL_TUNE, never chosen by the rule);
//   gpu_copy_engine  for ranks that share one GPU without MPS (their kernels cannot run at the
//                    same time, so kernels spinning on flags would crawl): copies from the
//                    peers' slots and the reduction kernel, with host barriers between pieces.
// The first two are enqueued on a CUDA stream with no host synchronisation (allreduce_enqueue);
// the blocking MPI call runs them on the workspace's stream and waits once, at the end.
// The other collectives have a one-shot each on the same pattern per slot-sized piece (copy
// into the slot, a barrier, read the slots), which the copy-engine variant runs too:
//   gpu_bcast                 the root copies into its slot, the others copy out of it;
//   gpu_allgather             each rank copies its block into its slot, then every peer's out;
//   gpu_reduce_scatter_block  each rank copies its input into its slot, rank r reduces share r
//                             of every slot (rank order) into its result;
//   gpu_reduce_scatter        the same for any counts (MPI_Reduce_scatter);
//   gpu_reduce                each rank copies into its slot, the root reduces all slots;
// and, with kernels allowed only, two-shot and ring forms (one file each):
//   gpu_bcast_two_shot        scatter out of the root's slot, then allgather;
//   gpu_reduce_two_shot       the allreduce two-shot with a gather to the root;
//   gpu_bcast_ring            a pipelined chain from the root, chunk by chunk;
//   gpu_allgather_ring, gpu_reduce_scatter_ring, gpu_reduce_ring   p - 1 neighbour steps.
// With kernels allowed their barriers are flag kernels (bcast_enqueue etc., no host
// synchronisation); in the copy-engine variant the one-shots wait for the stream and meet in
// a host barrier instead, so nothing spins on the GPU.
//
// Across nodes (gpu_hier, hier.cpp; blocking calls of these five collectives): GPU-native
// stages within each node on the node's own workspace, host staging between the node leaders.
//
// GPU-native algorithms require every rank of the call to pass device memory (as UCC does):
// the choice is made by each rank from its own buffers. Blocking calls use them all;
// non-blocking and persistent ones (whose device work is enqueued when they start) all but
// gpu_direct, and only with kernels allowed. Other memory, other collectives (gather, scatter,
// alltoall, scan, the other v forms) are staged through host memory (coll::Call).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "coll/algorithm.h"
#include "runtime/op.h"

// Every coll/gpu algorithm as X(variable in weft::coll::gpu, name, collective): registered in every
// build (coll/registry.cpp), supporting no call in a build without CUDA (gpu_none.cpp).
#define WEFT_GPU_ALGORITHMS(X)                                                      \
  X(allreduce_gpu_one_shot, "gpu_one_shot", allreduce)                               \
  X(allreduce_gpu_two_shot, "gpu_two_shot", allreduce)                               \
  X(allreduce_gpu_direct, "gpu_direct", allreduce)                                   \
  X(allreduce_gpu_ring, "gpu_ring", allreduce)                                       \
  X(allreduce_gpu_copy_engine, "gpu_copy_engine", allreduce)                         \
  X(bcast_gpu, "gpu_bcast", bcast)                                                   \
  X(bcast_gpu_two_shot, "gpu_bcast_two_shot", bcast)                                 \
  X(bcast_gpu_ring, "gpu_bcast_ring", bcast)                                         \
  X(allgather_gpu, "gpu_allgather", allgather)                                       \
  X(allgather_gpu_ring, "gpu_allgather_ring", allgather)                             \
  X(reduce_scatter_gpu_block, "gpu_reduce_scatter_block", reduce_scatter)            \
  X(reduce_scatter_gpu, "gpu_reduce_scatter", reduce_scatter)                        \
  X(reduce_scatter_gpu_ring, "gpu_reduce_scatter_ring", reduce_scatter)              \
  X(reduce_scatter_gpu_direct, "gpu_reduce_scatter_direct", reduce_scatter)          \
  X(reduce_gpu, "gpu_reduce", reduce)                                                \
  X(reduce_gpu_two_shot, "gpu_reduce_two_shot", reduce)                              \
  X(reduce_gpu_ring, "gpu_reduce_ring", reduce)                                      \
  X(allreduce_gpu_hier, "gpu_hier", allreduce)                                       \
  X(bcast_gpu_hier, "gpu_hier", bcast)                                               \
  X(reduce_gpu_hier, "gpu_hier", reduce)                                             \
  X(allgather_gpu_hier, "gpu_hier", allgather)                                       \
  X(reduce_scatter_gpu_hier, "gpu_hier", reduce_scatter)

namespace weft::coll::gpu {
#define WEFT_DECLARE_GPU_ALGORITHM(var, name, coll) extern const Algorithm var;
WEFT_GPU_ALGORITHMS(WEFT_DECLARE_GPU_ALGORITHM)
#undef WEFT_DECLARE_GPU_ALGORITHM
}  // namespace weft::coll::gpu

namespace weft::coll::gpu {

// The most ranks a GPU workspace serves (the reduction kernel takes one input per rank).
constexpr int kMaxRanks = 32;

enum class Mode : uint8_t { automatic, kernels, copy_engine };
enum class AllreduceAlgo : uint8_t { one_shot, two_shot };

// From the config registry (coll::configure, Settings::gpu in coll/settings.h).
struct Settings {
  bool enabled = true;                       // WEFT_GPU_COLL
  size_t scratch_bytes = size_t(64) << 20;   // WEFT_GPU_COLL_SCRATCH: per rank, two slots
  size_t two_shot_min = size_t(1) << 20;     // WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN
  size_t direct_min = size_t(4) << 20;       // WEFT_GPU_ALLREDUCE_DIRECT_MIN (0: never)
  Mode mode = Mode::automatic;               // WEFT_GPU_COLL_MODE
  // WEFT_GPU_FUSED: allreduce calls of this many bytes or more run as fused pieces
  // (auto: WEFT_GPU_FUSED_MIN, on: above kFusedMaxBytes, off: never).
  size_t fused_min = size_t(4) << 20;
  size_t fused_split_min = size_t(16) << 20;  // WEFT_GPU_FUSED_SPLIT_MIN
  size_t auto_register_min = size_t(256) << 10;  // WEFT_GPU_AUTO_REGISTER_MIN (0: never)
  size_t gather_kernel_max = size_t(2) << 20;    // WEFT_GPU_GATHER_KERNEL_MAX (0: never)
  size_t reduce_scatter_direct_min = size_t(4) << 20;  // WEFT_GPU_REDUCE_SCATTER_DIRECT_MIN (0: never)
  size_t reduce_scatter_kernel_max = size_t(2) << 20;  // WEFT_GPU_REDUCE_SCATTER_KERNEL_MAX (0: never)
  size_t reduce_scatter_fused_min = size_t(2) << 20;  // WEFT_GPU_REDUCE_SCATTER_FUSED_MIN (0: never)
  uint64_t wait_spin_ns = 0;                           // WEFT_GPU_WAIT_SPIN_US
  bool wait_on_stream = false;                         // WEFT_GPU_WAIT_QUERY=stream
};
// The settings calls on ctx see: ctx.settings' where given, else the defaults. A workspace
// keeps the settings it was made with.
const Settings& settings_of(const CollContext& ctx);

// Whether this build has GPU collectives (a CUDA build).
bool compiled();

class GpuWorkspace;

// The workspace of ctx.comm, made on the first call: collective over the communicator (two
// host allreduces), so every rank must call it at the same point, with the same settings.
// Null when it cannot be used on some rank (no CUDA, GPUs without peer access, an IPC handle
// that does not open, more than kMaxRanks ranks, a communicator spanning nodes); *why then
// says why (the same answer on every rank, logged at INFO once per communicator).
GpuWorkspace* workspace(const CollContext& ctx, std::string* why);
// The workspace if one was made and is usable; never makes one.
GpuWorkspace* existing_workspace(const Comm& c);
// Stops the GPU kernels of c (its workspace and, across nodes, its node's): kernels waiting for
// peers end, and later calls on them fail with `status` (Status::peer_failed, revoked or
// timed_out) and `why`. Called when a call on c fails that way and by MPIX_Comm_revoke; a
// kernel spinning for a dead rank would otherwise never end, and with it every later wait on
// the device. No-op where c has no workspace, and in a build without CUDA.
void stop_kernels(const Comm& c, Status status, const std::string& why);
// Whether the peer-spinning kernels may run (MPS on, or one GPU per rank), as agreed at
// creation; else only gpu_copy_engine runs.
bool kernels_allowed(const GpuWorkspace& ws);
// The settings ws was made with.
const Settings& settings_of(const GpuWorkspace& ws);
// The workspace's internal stream (a cudaStream_t).
void* internal_stream(const GpuWorkspace& ws);

// Buffer registration (MPIX_Comm_register_buffer; registered.cpp). Collective over ctx.comm:
// every rank registers its own buffer of `bytes` bytes (device memory; the sizes may differ),
// the ranks exchange CUDA IPC handles once and each maps every peer's buffer, pinned, so that
// GPU collectives on the communicator whose buffers lie inside registrations (gpu_one_shot and
// gpu_two_shot with WEFT_GPU_FUSED, blocking or enqueued) read and write them in place, with no
// host exchange per call. Every rank gets a registration or none (agreed; *token 0 then, and
// the status says why). Bounded: kMaxRegistrations live per communicator.
constexpr int kMaxRegistrations = 64;
Status register_buffer(const CollContext& ctx, const void* buf, size_t bytes, uint64_t* token);
// Local: waits for this process's device work, then unpins the peers' mappings. A token not of
// c's live registrations is Status::invalid_arg.
Status deregister_buffer(const Comm& c, uint64_t token);
// Registers each distinct buffer of bufs (bytes each; null ones skipped alike on every rank)
// for a call that runs many times (a persistent collective's init): collective. The result
// keeps them registered; dropping it deregisters them here. Null when none could be made (the
// call then runs through the workspace; logged at INFO by register_buffer).
std::shared_ptr<const void> register_for_call(const CollContext& ctx, std::initializer_list<const void*> bufs,
                                              size_t bytes);
// For a stream-ordered call that runs as fused pieces (every rank enqueues the same calls):
// registers the whole allocations that hold send and recv (one where both lie in one; in
// place: send only; recv null: send only, a reduce_scatter_block's input), each unless every
// rank has it registered already, so that calls on other parts of them find them registered
// and the call's fused pieces (and, captured into a CUDA graph, each
// replay's) read and write the peers' user buffers in place. Collective: one host agreement
// (uncaptured: on the calls AgreementSchedule names, the others return at once), then
// register_buffer as needed; capturing: no IPC mapping is evicted meanwhile, and only
// mappings of memory a peer freed are closed (cuda_ipc_pin), so a peer's buffer under another
// mapping the driver objects to fails that registration. The
// registrations are a cache: a later registration drops those whose memory was freed, and the
// user's evicts uncaptured ones when no id is free (registered.cpp); one that cannot be made
// leaves the call on the slots, and (uncaptured) ends automatic registration on the
// communicator: later calls make no agreement.
void register_call_buffers(const CollContext& ctx, const void* send, const void* recv, size_t bytes, bool capturing);
// Which of those calls (uncaptured) make the host agreement: every one until kQuiet agreements
// in a row registered nothing, then calls further and further apart (the gap doubles up to
// kMaxGap); a registration brings back every call. Every rank counts the same calls and sees
// the same agreed outcome, so all ranks skip and agree alike, and a settled program's enqueue
// calls do not wait for their peers on the host.
struct AgreementSchedule {
  static constexpr uint64_t kQuiet = 64, kMaxGap = 1024;
  uint64_t calls = 0;  // calls counted so far
  uint64_t next = 0;   // the number of the next call that agrees
  uint64_t gap = 1;
  uint64_t quiet = 0;  // agreements in a row that registered nothing
  // Counts a call; whether it agrees.
  bool due() { return calls++ >= next; }
  // After an agreeing call: true when this one settled the schedule (gap first above 1).
  bool agreed(bool registered) {
    quiet = registered ? 0 : quiet + 1;
    const bool settles = quiet == kQuiet;
    gap = quiet < kQuiet ? 1 : std::min(gap * 2, kMaxGap);
    next = calls - 1 + gap;
    return settles;
  }
};
// Live registrations of c on this rank (0 without a workspace).
int registrations(const Comm& c);
// This rank's registration counters since MPI_Init (MPI_T performance variables): made,
// dropped because a rank freed their memory, evicted (a stream-ordered call's, for the
// user's or a persistent call's), dropped here by the IPC cache's release hook; live now.
struct RegistrationStats {
  uint64_t made = 0, dropped_stale = 0, evicted = 0, released_here = 0, live = 0;
};
RegistrationStats registration_stats();

// Whether the kernels reduce (op, type).
bool supports(ReduceOp op, BasicType type);

// Enqueues an allreduce of `count` elements on `stream` (a cudaStream_t) without waiting:
// copies into this rank's slot, flag barriers through IPC memory, reduction kernels. Messages
// larger than a slot run in slot-sized pieces. send == recv means in place. Every rank must
// enqueue the same calls in the same order. Status::not_supported in a build without CUDA.
Status allreduce_enqueue(GpuWorkspace& ws, AllreduceAlgo algo, const void* send, void* recv, size_t count,
                         BasicType type, ReduceOp op, void* stream);
// Whether such a call of `bytes` runs as fused pieces (WEFT_GPU_FUSED; false without CUDA).
bool allreduce_runs_fused(const GpuWorkspace& ws, AllreduceAlgo algo, size_t bytes);
// Whether a reduce_scatter_block of `input_bytes` (all blocks) runs as fused pieces: kernels
// allowed, WEFT_GPU_FUSED not off, from WEFT_GPU_REDUCE_SCATTER_FUSED_MIN (0: never) and above
// the one launch's size (WEFT_GPU_REDUCE_SCATTER_KERNEL_MAX); false without CUDA.
bool scatter_runs_fused(const GpuWorkspace& ws, size_t input_bytes);

// The other collectives, enqueued alike (kernels allowed only; Status::not_supported in the
// copy-engine variant and in a build without CUDA). Every rank enqueues the same calls in the
// same order, with the same counts and root.
// Bcast of `bytes` bytes of buf from root.
Status bcast_enqueue(GpuWorkspace& ws, void* buf, size_t bytes, int root, void* stream);
// Allgather of `block` bytes per rank: rank q's block lands at recv + q * block. send ==
// recv + rank * block means in place.
Status allgather_enqueue(GpuWorkspace& ws, const void* send, void* recv, size_t block, void* stream);
// Reduce_scatter_block: send holds size * count elements; rank r gets the reduction of block
// r in recv (count elements). send == recv means in place (MPI_IN_PLACE: the input in recv).
Status reduce_scatter_block_enqueue(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type,
                                    ReduceOp op, void* stream);
// Reduce to root: recv is significant at the root only; send == recv there means in place.
Status reduce_enqueue(GpuWorkspace& ws, const void* send, void* recv, size_t count, BasicType type, ReduceOp op,
                      int root, void* stream);

// Stream-native point-to-point (MPIX_Send/Recv_enqueue) through the workspace's flags area
// (layout in workspace.h); every call only enqueues on `stream`. Sequence numbers start at 1
// and grow by one per message from one rank to another; the host agrees them (pt2pt/stream_p2p.cpp).
// Kernels allowed only; Status::not_supported in a build without CUDA.
constexpr int kP2pSlots = 16;  // done slots per sender: unwaited sends to one peer, at most
// Sender: publishes ready[peer] = seq after the stream's preceding work.
Status p2p_ready_enqueue(GpuWorkspace& ws, int peer, uint64_t seq, void* stream);
// Sender: waits until `peer` has copied message seq (its buffer may then be reused).
Status p2p_wait_done_enqueue(GpuWorkspace& ws, int peer, uint64_t seq, void* stream);
// Receiver: waits until `peer` made message seq ready, copies `bytes` from src (the sender's
// buffer, mapped here) to dst, publishes done. bytes 0: no copy.
Status p2p_recv_enqueue(GpuWorkspace& ws, int peer, uint64_t seq, const void* src, void* dst, size_t bytes,
                        void* stream);

// The same for calls captured into a CUDA graph: the words count messages on the device, so
// every replay counts on. Captured messages of one pair are received in send order.
// Sender: graph_ready[peer] += 1 after the stream's preceding work.
Status p2p_graph_ready_enqueue(GpuWorkspace& ws, int peer, void* stream);
// Sender: waits until `peer` has copied the message made ready `back` captured sends to it
// ago (0: the last one).
Status p2p_graph_wait_done_enqueue(GpuWorkspace& ws, int peer, uint64_t back, void* stream);
// Receiver: waits until `peer` made its next captured message ready, copies `bytes` (0: none),
// then graph_done[peer] += 1.
Status p2p_graph_recv_enqueue(GpuWorkspace& ws, int peer, const void* src, void* dst, size_t bytes, void* stream);

// Whether the call's buffers are CUDA device memory (send and recv; bcast: the buffer).
bool device_call(const CollArgs& a);
// Whether coll/gpu has an algorithm for this collective (allreduce, bcast, allgather,
// reduce_scatter, reduce); the others never see device memory in the selector.
bool has_algorithms(Collective coll);
// Whether an algorithm is one of coll/gpu's (the selector keeps them apart from host ones).
bool is_gpu_algorithm(const Algorithm& a);
// The rule for device-memory calls (not a measured model), which every GPU algorithm's
// estimate_us carries: the algorithm the rule picks adds nothing to its modelled estimate, every
// other adds kRuleDeclinesUs, so the selector's argmin picks the rule's choice wherever it can
// run the call. What the rule looks at, beyond the call's buffers:
struct RuleCall {
  Collective coll;
  size_t bytes;
  bool blocking;
  bool spans_nodes;
  bool kernels;     // the workspace allows flag kernels (kernels_allowed)
  bool block_form;  // reduce_scatter with equal shares (gpu_reduce_scatter_block supports it)
};
constexpr double kRuleDeclinesUs = 1e9;
// Across nodes gpu_hier; allreduce: gpu_copy_engine where kernels are not allowed, else
// gpu_direct from WEFT_GPU_ALLREDUCE_DIRECT_MIN bytes (blocking calls), gpu_two_shot from
// WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN bytes and gpu_one_shot below; the other collectives their
// one-shot. *why: the reason, for the log. Pure: a function of r and s alone.
const Algorithm* rule_pick(const RuleCall& r, const Settings& s, std::string* why);
RuleCall rule_call(const CollArgs& a, const Comm& c);
// gpu_reduce_scatter_block's supports(): a block form its kernels run (never without CUDA).
bool block_form_supported(const CollArgs& a, const Comm& c);
// 0 where the rule picks self, else kRuleDeclinesUs.
double rule_penalty_us(const Algorithm& self, const RuleCall& r, const Settings& s);
double rule_penalty_us(const Algorithm& self, const CollArgs& a, const Comm& c);
// The settings the rule reads for c: its workspace's, or the defaults where it has none.
const Settings& rule_settings(const Comm& c);
// A GPU algorithm's Algorithm::estimate_us: its modelled time plus the rule's penalty.
template <auto modelled, const Algorithm& self>
double ruled_estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  return modelled(a, ctx, m) + rule_penalty_us(self, a, ctx.comm);
}
// The INFO log's reason for a device-memory choice: "rule, not a measured model: ..." where the
// rule picked `chosen`, else "lowest estimate".
std::string rule_reason(const Algorithm& chosen, const CollArgs& a, const Comm& c);

// Where a call whose buffers are `bufs` (each at its first byte, contiguous; a reduction's
// `red`; `bytes` the size of the vector) runs, decided alike on every rank that passes device
// memory: host (not device memory, or mixed: left to staging, which warns or errs), native
// (one node: the communicator's workspace is made here, collectively), hier (across nodes: the
// node levels are made here, collectively; blocking calls only) or staged (*why says why).
enum class Gate : uint8_t { host, native, hier, staged };
Gate gate(const CollContext& ctx, bool blocking, std::initializer_list<const void*> bufs, const Reduction* red,
          size_t bytes, std::string* why);
// Whether gate() made ready the node levels of c for gpu_hier (every node's workspace usable);
// the same from c's state.
bool hier_ready(const Comm& c);
bool hier_ready(const CommState& st);

// Closes every peer mapping and frees every workspace still alive (MPI_Finalize, after its
// barrier). A communicator freed earlier releases its own.
void release_all();

}  // namespace weft::coll::gpu
