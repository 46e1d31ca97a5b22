// Stream-ordered operations, with MPICH's names (MPIX_Stream_*, MPIX_*_enqueue) and
// MPIX_Info_set_hex.
//
// A stream object wraps a cudaStream_t given through info keys "type" = "cudaStream_t" and
// "value" = the handle's bytes in hex (MPIX_Info_set_hex), or nothing (MPI_INFO_NULL: a "CPU
// stream"). MPIX_Stream_comm_create duplicates a communicator and hangs the stream on the
// duplicate through an internal attribute, so MPI_Comm_free of the duplicate drops it and a
// reused communicator handle never carries a stale stream. The duplicate keeps the stream
// object alive: MPIX_Stream_free invalidates the handle at once (MPICH allows freeing a GPU
// stream that communicators still use).
//
// The *_enqueue calls run in the order of the communicator's GPU stream: after the work
// enqueued on it before them; work enqueued after them sees their result.
//   - Stream-native (enqueued on the user's stream, no host wait): the collectives
//     MPIX_Allreduce_enqueue, MPIX_Bcast_enqueue, MPIX_Allgather_enqueue and
//     MPIX_Reduce_scatter_block_enqueue (coll::gpu::allreduce_enqueue, bcast_enqueue,
//     allgather_enqueue, reduce_scatter_block_enqueue), when stream_native() says so: every
//     rank on one node with the workspace usable and its flag kernels allowed (agreed when the
//     communicator was made), contiguous datatypes, device buffers, and for the two reductions
//     a predefined op on a predefined type the GPU kernels reduce. On a communicator of one
//     rank they are a cudaMemcpyAsync (or nothing).
//   - Stream-native point-to-point: MPIX_Send/Recv/Isend/Irecv_enqueue and the
//     MPIX_Wait(all)_enqueue of their requests, on a communicator that passes the same agreed
//     check with CUDA IPC usable on every rank, to or from another rank, a receive naming its
//     source and tag, contiguous device buffers (a 0-byte side needs none). The sender sends a
//     host header {IPC descriptor, bytes, seq} on the collective context (user tag | bit 23)
//     and enqueues "ready[receiver] = seq" (and, blocking, the wait for the receiver's done
//     slot; non-blocking: at the wait). The receiver takes the header on the host (a host wait
//     for the sender's enqueue call, not for the GPU; MPIX_Irecv_enqueue defers it to its
//     wait), maps the sender's buffer and enqueues "wait ready >= seq, copy, done slot = seq".
//     Words in coll/gpu/workspace.h. Each side decides alone: both sides of a message must
//     take the same path (device memory in contiguous datatypes on both, or a fallback).
//   - Everything else (the point-to-point calls and collectives that fail those conditions,
//     and the waits of their requests) synchronises the stream and makes the ordinary host call: one
//     WARN per call (and reason), an MPI_ERR_UNSUPPORTED_OPERATION under
//     WEFT_REQUIRE_FAST_PATH=1, and an error while the stream is being captured into a CUDA
//     graph.
// Every rank must make the same native-or-fallback choice for a collective call, or the flag
// barriers of those that enqueued it wait for ranks that never arrive. The communicator's part
// is agreed in MPIX_Stream_comm_create; the call's part rests on arguments MPI requires to
// match (op, datatype of a reduction, type signature, counts) and on the rule blocking
// GPU-native collectives have too: every rank passes device memory, in contiguous datatypes.
// The GPU workspace of the stream communicator is made in MPIX_Stream_comm_create (collective;
// a cudaMalloc, which stream capture forbids), when every rank passed a GPU stream.
//
// A build without CUDA has CPU streams only: "cudaStream_t" and every *_enqueue call fail with
// MPI_ERR_UNSUPPORTED_OPERATION.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#if WEFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "coll/gpu/gpu_coll.h"
#include "coll_call.h"
#include "datatype_api.h"
#include "pt2pt/tag.h"
#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "state.h"

// MPICH puts the stream object type (0xf) in bits 26-29: MPIX_STREAM_NULL is 0x3c000000.
#define WEFT_PMPIX_ALIAS(name) _Pragma(WEFT_STR_(weak MPIX_##name = PMPIX_##name))

namespace weft::mpi {

namespace {

constexpr uint32_t kStreamObj = 0xf;
static_assert(((uint32_t(MPIX_STREAM_NULL) >> handle::kObjShift) & 0xf) == kStreamObj);
constexpr const char* kNoCuda = "not supported: weft was built without CUDA";

struct StreamObj {
  bool gpu = false;         // wraps a cudaStream_t
  void* cuda = nullptr;     // the cudaStream_t
};

// What a communicator made by MPIX_Stream_comm_create carries (the attribute's value).
struct StreamComm {
  std::shared_ptr<const StreamObj> stream;
  bool every_rank_gpu = false;  // agreed at creation: every rank passed a GPU stream
  std::string native_why;       // why the collective *_enqueue calls cannot run stream-native
  std::string p2p_why;          // why Send/Recv_enqueue cannot run stream-native (agreed too)
  mutable bool enqueued = false;  // stream-native work was enqueued on the stream
  // Stream-native sends: the last sequence number sent to each rank, and per rank those of
  // the MPIX_Isend_enqueue calls whose wait is not enqueued yet (at most kP2pSlots - 1 back).
  mutable std::vector<uint64_t> send_seq;
  mutable std::vector<std::vector<uint64_t>> unwaited;
};

// Stream handles, and the attribute keyval that hangs a StreamComm on a communicator.
struct StreamTable {
  HandleTable<std::shared_ptr<const StreamObj>> objects{1};  // [0] reserved
  int keyval = MPI_KEYVAL_INVALID;
};
StreamTable& streams() {
  static StreamTable t;
  return t;
}

MPIX_Stream stream_handle(uint32_t index) {
  return int((uint32_t(handle::direct) << handle::kKindShift) | (kStreamObj << handle::kObjShift) |
             (index & handle::kIndexMask));
}

std::shared_ptr<const StreamObj>* lookup_stream(MPIX_Stream h) {
  if (handle::kind_of(h) != handle::direct || uint32_t(handle::obj_of(h)) != kStreamObj) return nullptr;
  return streams().objects.get(handle::index_of(h));
}

// MPI_Comm_free of a stream communicator: before its GPU workspace is released (attributes go
// first), wait for the kernels enqueued on the stream that still use it. So the communicator
// must be freed before its cudaStream_t is destroyed.
int delete_stream_comm(MPI_Comm, int, void* value, void*) {
  auto* sc = static_cast<StreamComm*>(value);
#if WEFT_HAVE_CUDA
  if (sc->enqueued) {
    const auto s = static_cast<cudaStream_t>(sc->stream->cuda);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusNone) {
      const cudaError_t err = cudaStreamSynchronize(s);
      if (err != cudaSuccess)
        WEFT_WARN(Subsys::gpu, "freeing a stream communicator: cudaStreamSynchronize: %s", cudaGetErrorString(err));
    }
    (void)cudaGetLastError();
  }
#endif
  delete sc;
  return MPI_SUCCESS;
}

// The StreamComm of a communicator; nullptr when it has none (or comm is invalid).
const StreamComm* stream_comm_of(MPI_Comm comm) {
  const int keyval = streams().keyval;
  if (keyval == MPI_KEYVAL_INVALID) return nullptr;
  CommEntry* e = lookup_comm_entry(comm);
  if (!e) return nullptr;
  auto it = e->attrs.find(keyval);
  return it == e->attrs.end() ? nullptr : static_cast<const StreamComm*>(it->second);
}

// ---------------------------------------------------------------------------- hex values

char hex_digit(unsigned v) { return char(v < 10 ? '0' + v : 'A' + v - 10); }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes MPIX_Info_set_hex's text: two hex digits per byte, in memory order, where newer
// MPICH also writes "[N]" for a run of N zero bytes. False if malformed.
bool decode_hex(const std::string& text, std::vector<unsigned char>* out) {
  out->clear();
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '[') {
      const size_t close = text.find(']', i);
      if (close == std::string::npos || close == i + 1 || close - i > 8) return false;
      size_t n = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (text[k] < '0' || text[k] > '9') return false;
        n = n * 10 + size_t(text[k] - '0');
      }
      out->insert(out->end(), n, 0);
      i = close + 1;
      continue;
    }
    if (i + 1 >= text.size()) return false;
    const int hi = hex_value(text[i]), lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<unsigned char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

// ---------------------------------------------------------------------------- CUDA calls

#if WEFT_HAVE_CUDA
cudaStream_t cuda_stream(const StreamComm& sc) { return static_cast<cudaStream_t>(sc.stream->cuda); }

// Whether a cudaStream_t names a live stream (cudaStreamQuery answers for it).
bool stream_valid(void* s, std::string* why) {
  const cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(s));
  (void)cudaGetLastError();
  if (err == cudaSuccess || err == cudaErrorNotReady) return true;
  *why = std::string("cudaStreamQuery: ") + cudaGetErrorString(err);
  return false;
}

// Before a host fallback: refuses under WEFT_REQUIRE_FAST_PATH and during stream capture,
// warns once per call and reason, and waits for the work enqueued on the stream so far.
int synchronise_for_fallback(const char* fn, MPI_Comm comm, const StreamComm& sc, const char* what,
                             const std::string& why) {
  const std::string reason = why.empty() ? "" : " (" + why + ")";
  if (g_state->require_fast_path)
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "not stream-ordered yet%s: it would synchronise the stream and %s from the host, "
                 "and WEFT_REQUIRE_FAST_PATH forbids slower paths", reason.c_str(), what);
  const cudaStream_t s = cuda_stream(sc);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t err = cudaStreamIsCapturing(s, &capture);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return raise(comm, MPI_ERR_OTHER, fn, "cudaStreamIsCapturing on the communicator's stream: %s",
                 cudaGetErrorString(err));
  }
  if (capture != cudaStreamCaptureStatusNone)
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "cannot be captured in a CUDA graph: it is not stream-ordered yet%s and would "
                 "synchronise the stream", reason.c_str());
  if (log_first_time(std::string("stream-fallback:") + fn + why))
    WEFT_WARN(Subsys::gpu, "%s is not stream-ordered yet%s: it synchronises the stream and %s from the host",
              fn, reason.c_str(), what);
  err = cudaStreamSynchronize(s);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return raise(comm, MPI_ERR_OTHER, fn, "cudaStreamSynchronize on the communicator's stream: %s",
                 cudaGetErrorString(err));
  }
  return MPI_SUCCESS;
}

#endif

// Stream-ordered copy (a communicator of one rank); nothing when dst is src (in place).
int enqueue_copy(const char* fn, MPI_Comm comm, const StreamComm& sc, void* dst, const void* src, size_t bytes) {
  if (dst == src || bytes == 0) return MPI_SUCCESS;
#if WEFT_HAVE_CUDA
  const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda_stream(sc));
  if (err == cudaSuccess) return MPI_SUCCESS;
  (void)cudaGetLastError();
  return raise(comm, MPI_ERR_OTHER, fn, "cudaMemcpyAsync on the communicator's stream: %s", cudaGetErrorString(err));
#else
  (void)sc;
  return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
#endif
}

// ---------------------------------------------------------------------------- checks

// The stream communicator of an *_enqueue call: it must carry a GPU stream.
int resolve(const char* fn, MPI_Comm comm, const StreamComm** out) {
  if (!cuda_state().compiled) return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (!lookup_comm(comm))
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  const StreamComm* sc = stream_comm_of(comm);
  if (!sc || !sc->stream->gpu)
    return raise(comm, MPI_ERR_ARG, fn,
                 "communicator 0x%x carries no GPU stream: *_enqueue calls need a communicator made by "
                 "MPIX_Stream_comm_create from a stream with info type cudaStream_t%s",
                 unsigned(comm), sc ? " (this one has a stream without a GPU stream)" : "");
  *out = sc;
  return MPI_SUCCESS;
}

// Before an *_enqueue call's host fallback (CUDA builds only reach it).
int fallback(const char* fn, MPI_Comm comm, const StreamComm& sc, const char* what, const std::string& why = "") {
#if WEFT_HAVE_CUDA
  return synchronise_for_fallback(fn, comm, sc, what, why);
#else
  (void)sc, (void)what, (void)why;
  return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
#endif
}

// After the duplicate is made: agree whether every rank passed a GPU stream, and if so (on one
// node) make the communicator's GPU workspace now, collectively.
int agree_and_prepare(const char* fn, MPI_Comm newcomm, const StreamObj* obj, StreamComm* sc) {
  Comm* c = lookup_comm(newcomm);
  int32_t gpu = obj && obj->gpu ? 1 : 0;
  const coll::Reduction min{ReduceOp::min, BasicType::i32, sizeof(int32_t)};
  Status s = coll::allreduce(coll_context(*c), &gpu, &gpu, 1, min);
  if (s != Status::ok) return raise_status(newcomm, s, fn);
  sc->every_rank_gpu = gpu == 1;
  if (!sc->every_rank_gpu) {
    sc->native_why = "not every rank passed a GPU stream to MPIX_Stream_comm_create";
  } else if (c->size < 2) {
    sc->native_why.clear();  // one rank: a stream-ordered copy
  } else if (!c->single_node) {
    sc->native_why = "GPU-native collectives need every rank on one node";
  } else {
    configure_gpu_collectives();
    std::string why;
    coll::gpu::GpuWorkspace* ws = coll::gpu::workspace(coll_context(*c), &why);
    if (!ws) sc->native_why = "GPU collectives not usable on " + c->label() + ": " + why;
    else if (!coll::gpu::kernels_allowed(*ws))
      sc->native_why = coll::gpu::settings().mode == coll::gpu::Mode::copy_engine
                           ? "WEFT_GPU_COLL_MODE=copy_engine"
                           : "ranks share a GPU without MPS: the stream-native kernels would take turns";
  }
  WEFT_INFO(Subsys::gpu, "stream communicator %s: %s", c->label().c_str(),
            !sc->every_rank_gpu        ? "no gpu stream on every rank"
            : sc->native_why.empty()   ? "the collective *_enqueue calls may run stream-native"
                                       : ("the collective *_enqueue calls fall back: " + sc->native_why).c_str());
  // Point-to-point: the same conditions, and CUDA IPC of user buffers usable on every rank.
  sc->p2p_why = sc->native_why;
  if (sc->every_rank_gpu && sc->native_why.empty() && c->size < 2) {
    sc->p2p_why = "a communicator of one rank";
  } else if (sc->every_rank_gpu && sc->native_why.empty()) {
    const char* ipc_why = nullptr;
    int32_t ipc = cuda_ipc_usable(&ipc_why) ? 1 : 0;
    s = coll::allreduce(coll_context(*c), &ipc, &ipc, 1, min);
    if (s != Status::ok) return raise_status(newcomm, s, fn);
    if (ipc != 1) sc->p2p_why = "CUDA IPC of user buffers not usable on every rank";
    sc->send_seq.assign(size_t(c->size), 0);
    sc->unwaited.assign(size_t(c->size), {});
  }
  if (sc->every_rank_gpu)
    WEFT_INFO(Subsys::gpu, "stream communicator %s: %s", c->label().c_str(),
              sc->p2p_why.empty() ? "Send/Recv_enqueue on device buffers may run stream-native"
                                  : ("Send/Recv_enqueue fall back: " + sc->p2p_why).c_str());
  return MPI_SUCCESS;
}

// ---------------------------------------------------------------------------- stream-native point-to-point

// A stream-native send announces itself with a host message to the receiver: on the
// communicator's collective context (user receives, MPI_ANY_SOURCE and MPI_ANY_TAG included,
// match only the point-to-point context), under the user's tag with bit 23 set (reserved for
// internal protocols; the collectives' sequence tags stay below it for 2^23 collective calls).
constexpr uint32_t kP2pTagBit = 1u << 23;

struct P2pHeader {
  IpcDescriptor desc;  // the sender's buffer (bytes > 0)
  uint64_t bytes = 0;
  uint64_t seq = 0;     // the sender's sequence number for this receiver (from 1)
  int32_t failed = 0;   // the sender could not describe its buffer: nothing was made ready
  uint32_t reserved = 0;
};

uint64_t p2p_tag(const Comm& c, int source, int tag) {
  return tag::make(c.coll_context(), uint32_t(source), kP2pTagBit | uint32_t(tag));
}

// What a stream-native MPIX_Isend_enqueue / MPIX_Irecv_enqueue request carries (as its finish
// step, which does nothing: std::function::target finds it, and it goes with the request).
// A send's request is complete on the host; MPIX_Wait(all)_enqueue enqueues its wait for the
// receiver's copy. A receive's request is the transport's receive of the sender's header;
// MPIX_Wait(all)_enqueue waits for it on the host (for the sender's enqueue call, not for the
// GPU) and enqueues the copy. Complete such requests with those calls only.
struct NativeP2p {
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = -1;  // communicator rank
  int tag = 0;
  uint64_t seq = 0;  // send
  bool send = false;
  std::shared_ptr<P2pHeader> header;  // receive: where the header lands
  char* buf = nullptr;                // receive: the contiguous buffer and its capacity
  size_t capacity = 0;
  void operator()(Request&) const {}
};

// Why one side of a message cannot run stream-native (empty: it can). peer: the other side's
// communicator rank; bytes: the message (send) or the buffer's capacity (receive); a 0-byte
// side needs no buffer. Sender and receiver decide alone: the rule (documented in the header
// comment) is that both sides of a message on such a communicator pass device memory in
// contiguous datatypes, or both take the fallback.
std::string p2p_native_why(const StreamComm& sc, const Comm& c, int peer, bool contiguous, const void* buf,
                           size_t bytes, coll::gpu::GpuWorkspace** ws) {
  *ws = nullptr;
  if (!sc.p2p_why.empty()) return sc.p2p_why;
  if (peer == c.rank) return "a message to or from the calling rank";
  if (bytes > 0 && !contiguous) return "non-contiguous datatype";
  if (bytes > 0 && memkind_query(buf).kind != MemKind::cuda_device) return "buffer not in CUDA device memory";
  coll::gpu::GpuWorkspace* w = coll::gpu::existing_workspace(c);
  if (!w) return "no GPU workspace on " + c.label();
  if (!coll::gpu::kernels_allowed(*w)) return "GPU flag kernels not allowed";
  *ws = w;
  return "";
}

void log_p2p_choice(const char* fn, const Comm& c, const std::string& why) {
  if (log_first_time(std::string("stream-p2p:") + c.label() + ":" + fn + ":" + why)) {
    if (why.empty())
      WEFT_INFO(Subsys::gpu, "%s on %s: stream-native (flag kernels and a CUDA IPC copy)", fn, c.label().c_str());
    else WEFT_INFO(Subsys::gpu, "%s on %s: falls back (%s)", fn, c.label().c_str(), why.c_str());
  }
}

// How an enqueue call goes: on the stream, through the fallback, or straight to the host call
// (arguments it rejects, MPI_PROC_NULL: nothing to order on the stream).
enum class P2pPath : uint8_t { native, fallback, host };

// MPIX_Send_enqueue / MPIX_Isend_enqueue (request null: blocking).
int send_native(const char* fn, MPI_Comm comm, const StreamComm& sc, const void* buf, int count, MPI_Datatype dt,
                int dest, int tag, MPI_Request* request, P2pPath* path, std::string* why) {
  *path = P2pPath::host;
  Comm* c = lookup_comm(comm);
  if (count < 0 || dest < 0 || dest >= c->size || tag < 0 || tag > tag::kMaxUserTag) return MPI_SUCCESS;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(comm, fn, dt, &d)) return rc;
  const size_t bytes = packed_size(d, size_t(count));
  ptrdiff_t offset = 0;
  const bool contiguous = contiguous_span(d, size_t(count), &offset);
  const char* at = static_cast<const char*>(buf) + offset;
  coll::gpu::GpuWorkspace* ws;
  *why = p2p_native_why(sc, *c, dest, contiguous, at, bytes, &ws);
  log_p2p_choice(fn, *c, *why);
  if (!why->empty()) {
    *path = P2pPath::fallback;
    return MPI_SUCCESS;
  }
  *path = P2pPath::native;
  const uint64_t seq = sc.send_seq[size_t(dest)] + 1;
  for (uint64_t old : sc.unwaited[size_t(dest)])
    if (old + coll::gpu::kP2pSlots <= seq)
      return raise(comm, MPI_ERR_OTHER, fn,
                   "%d stream-native sends to rank %d are not waited for: enqueue the wait of the oldest "
                   "(MPIX_Wait_enqueue) before more sends to that rank",
                   coll::gpu::kP2pSlots - 1, dest);
  P2pHeader h;
  h.bytes = bytes;
  h.seq = seq;
  Status st = bytes > 0 ? cuda_ipc_describe(at, &h.desc) : Status::ok;
  h.failed = st != Status::ok;
  // The header goes out even when the buffer could not be described, so the receiver fails too.
  const Status sent = g_state->transport->send(&h, sizeof h, c->world_rank(dest), p2p_tag(*c, c->rank, tag),
                                               SendMode::standard);
  if (st != Status::ok) return raise_status(comm, st, fn);
  if (sent != Status::ok) return raise_status(comm, sent, fn);
  sc.send_seq[size_t(dest)] = seq;
  sc.enqueued = true;  // the communicator's free waits for the stream
  void* stream = sc.stream->cuda;
  st = coll::gpu::p2p_ready_enqueue(*ws, dest, seq, stream);
  if (st == Status::ok && !request) st = coll::gpu::p2p_wait_done_enqueue(*ws, dest, seq, stream);
  if (st != Status::ok) return raise_status(comm, st, fn);
  if (request) {
    Request* r = g_state->requests.alloc(RequestKind::send);
    r->complete = true;
    r->owner = comm;
    r->peer = c->world_rank(dest);
    r->finish = NativeP2p{comm, dest, tag, seq, true, nullptr, nullptr, 0};
    sc.unwaited[size_t(dest)].push_back(seq);
    *request = request_handle(r);
  }
  return MPI_SUCCESS;
}

// Once the sender's header has arrived: maps its buffer and enqueues the receive (wait for
// ready, copy, publish done). A message larger than the buffer: MPI_ERR_TRUNCATE, no copy, but
// done is still published, so the sender completes. *rs: the receive's status.
int enqueue_native_recv(const char* fn, MPI_Comm comm, const StreamComm& sc, const Comm& c,
                        coll::gpu::GpuWorkspace& ws, int source, int tag, const P2pHeader& h, char* at,
                        size_t capacity, RequestStatus* rs) {
  rs->source = source;
  rs->tag = tag;
  rs->bytes = std::min<uint64_t>(h.bytes, capacity);
  if (h.failed)
    return raise(comm, MPI_ERR_OTHER, fn, "rank %d could not describe its send buffer (tag %d) for CUDA IPC",
                 source, tag);
  const bool truncated = h.bytes > capacity;
  void* src = nullptr;
  Status st = Status::ok;
  if (h.bytes > 0 && !truncated && (st = cuda_ipc_map(c.world_rank(source), h.desc, &src)) != Status::ok)
    return raise_status(comm, st, fn);
  sc.enqueued = true;  // the communicator's free waits for the stream
  st = coll::gpu::p2p_recv_enqueue(ws, source, h.seq, src, at, truncated ? 0 : h.bytes, sc.stream->cuda);
  if (st != Status::ok) return raise_status(comm, st, fn);
  if (truncated)
    return raise(comm, MPI_ERR_TRUNCATE, fn, "message of %llu bytes from rank %d (tag %d) into a buffer of %zu bytes",
                 (unsigned long long)h.bytes, source, tag, capacity);
  return MPI_SUCCESS;
}

// MPIX_Recv_enqueue / MPIX_Irecv_enqueue (request null: blocking). MPIX_Recv_enqueue waits on
// the host until the sender has made its enqueue call (its header), never for the GPU;
// MPIX_Irecv_enqueue only posts the header's receive, and its wait does the rest.
int recv_native(const char* fn, MPI_Comm comm, const StreamComm& sc, void* buf, int count, MPI_Datatype dt,
                int source, int tag, MPI_Status* status, MPI_Request* request, P2pPath* path, std::string* why) {
  *path = P2pPath::host;
  Comm* c = lookup_comm(comm);
  if (count < 0 || source == MPI_PROC_NULL || (source != MPI_ANY_SOURCE && (source < 0 || source >= c->size)) ||
      (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag)))
    return MPI_SUCCESS;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(comm, fn, dt, &d)) return rc;
  *path = P2pPath::fallback;
  if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) {
    *why = "MPI_ANY_SOURCE or MPI_ANY_TAG";
    log_p2p_choice(fn, *c, *why);
    return MPI_SUCCESS;
  }
  const size_t capacity = packed_size(d, size_t(count));
  ptrdiff_t offset = 0;
  const bool contiguous = contiguous_span(d, size_t(count), &offset);
  char* at = static_cast<char*>(buf) + offset;
  coll::gpu::GpuWorkspace* ws;
  *why = p2p_native_why(sc, *c, source, contiguous, at, capacity, &ws);
  log_p2p_choice(fn, *c, *why);
  if (!why->empty()) return MPI_SUCCESS;
  *path = P2pPath::native;
  if (request) {  // the header's receive now, the copy at the wait
    Request* r = g_state->requests.alloc(RequestKind::recv);
    r->owner = comm;
    r->peer = c->world_rank(source);
    NativeP2p n{comm, source, tag, 0, false, std::make_shared<P2pHeader>(), at, capacity};
    P2pHeader* h = n.header.get();
    r->finish = std::move(n);
    const Status st = g_state->transport->irecv(h, sizeof *h, r->peer, p2p_tag(*c, source, tag), ~0ull, r);
    if (st != Status::ok) {
      g_state->requests.release(r);
      return raise_status(comm, st, fn);
    }
    *request = request_handle(r);
    return MPI_SUCCESS;
  }
  P2pHeader h;
  MatchInfo info;
  const Status st = g_state->transport->recv(&h, sizeof h, c->world_rank(source), p2p_tag(*c, source, tag), ~0ull,
                                             &info);
  if (st != Status::ok) return raise_status(comm, st, fn);
  RequestStatus rs;
  const int rc = enqueue_native_recv(fn, comm, sc, *c, *ws, source, tag, h, at, capacity, &rs);
  if (status) fill_status(status, rs);
  return rc;
}

// MPIX_Wait(all)_enqueue: every request must come from a communicator with a GPU stream.
// Stream-native requests (NativeP2p) complete here: a send enqueues its wait for the
// receiver's copy on its communicator's stream, a receive has nothing left to enqueue. For the
// others each stream is waited for once, then the requests from the host.
int wait_enqueue(const char* fn, int count, MPI_Request* requests, MPI_Status* statuses, bool single) {
  if (!cuda_state().compiled) return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  if (count > 0 && !requests) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_requests is NULL");
  std::vector<std::pair<const StreamComm*, MPI_Comm>> seen;
  std::vector<int> host;  // indices of the requests the host completes
  bool native = false;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    Request* r = lookup_request(requests[i]);
    if (!r) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x (index %d)", unsigned(requests[i]), i);
    const StreamComm* sc = stream_comm_of(r->owner);
    if (!sc || !sc->stream->gpu)
      return raise(lookup_comm(r->owner) ? r->owner : MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
                   "request 0x%x (index %d) does not come from MPIX_Isend_enqueue or MPIX_Irecv_enqueue on a "
                   "communicator with a GPU stream", unsigned(requests[i]), i);
    if (r->finish.target<NativeP2p>()) {
      native = true;
      continue;
    }
    host.push_back(i);
    bool known = false;
    for (const auto& [s, c] : seen) known = known || s->stream->cuda == sc->stream->cuda;
    if (!known) seen.emplace_back(sc, r->owner);
  }
  if (!native) {
    for (const auto& [sc, comm] : seen) {
      const int rc = fallback(fn, comm, *sc, "waits from the host");
      if (rc != MPI_SUCCESS) return rc;
    }
    return single ? PMPI_Wait(requests, statuses) : PMPI_Waitall(count, requests, statuses);
  }
  auto status_at = [&](int i) { return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i; };
  int first_error = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) {
      if (statuses != MPI_STATUSES_IGNORE) set_status_empty(status_at(i));
      continue;
    }
    Request* r = lookup_request(requests[i]);
    const NativeP2p* n = r->finish.target<NativeP2p>();
    if (!n) continue;
    const StreamComm* sc = stream_comm_of(r->owner);
    Comm* c = lookup_comm(r->owner);
    int rc = MPI_SUCCESS;
    if (n->send) {
      auto& list = sc->unwaited[size_t(n->peer)];
      for (size_t k = 0; k < list.size(); ++k)
        if (list[k] == n->seq) {
          list.erase(list.begin() + ptrdiff_t(k));
          break;
        }
      coll::gpu::GpuWorkspace* ws = c ? coll::gpu::existing_workspace(*c) : nullptr;
      const Status st = ws ? coll::gpu::p2p_wait_done_enqueue(*ws, n->peer, n->seq, sc->stream->cuda)
                           : Status::internal;
      if (st != Status::ok) rc = raise_status(r->owner, st, fn);
    } else {
      g_state->transport->wait(r);  // the sender's header: its enqueue call, not the GPU
      coll::gpu::GpuWorkspace* ws = c ? coll::gpu::existing_workspace(*c) : nullptr;
      RequestStatus rs;
      if (r->status.error != Status::ok) rc = raise_status(r->owner, r->status.error, fn);
      else if (!ws) rc = raise_status(r->owner, Status::internal, fn);
      else rc = enqueue_native_recv(fn, r->owner, *sc, *c, *ws, n->peer, n->tag, *n->header, n->buf, n->capacity, &rs);
      r->status = rs;
    }
    if (rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
    fill_status(status_at(i), r->status);
    r->finish = nullptr;
    g_state->requests.release(r);
    requests[i] = MPI_REQUEST_NULL;
  }
  if (host.empty()) return first_error;
  for (const auto& [sc, comm] : seen) {
    const int rc = fallback(fn, comm, *sc, "waits from the host");
    if (rc != MPI_SUCCESS) return rc;
  }
  std::vector<MPI_Request> rest;
  std::vector<MPI_Status> rest_status(host.size());
  for (int i : host) rest.push_back(requests[i]);
  const int rc = PMPI_Waitall(int(rest.size()), rest.data(), rest_status.data());
  for (size_t k = 0; k < host.size(); ++k) {
    requests[host[k]] = rest[k];
    if (statuses != MPI_STATUSES_IGNORE) statuses[host[k]] = rest_status[k];
  }
  return first_error != MPI_SUCCESS ? first_error : rc;
}

// ---------------------------------------------------------------------------- stream-native collectives

// Whether a collective *_enqueue call can run stream-native: the one decision the four
// collective calls share. `contiguous`: each of the call's datatypes lays its data out as one
// run (bufs: those runs' first bytes); `red` and `red_type`: the reduction and its datatype,
// for the calls that reduce. True: *ws is the communicator's workspace, or null on a
// communicator of one rank (nothing spins there, so pinned and managed host memory do too:
// the call is a cudaMemcpyAsync or nothing). False: *why says why, for the fallback.
//
// Every rank must answer alike, or the ranks that enqueue flag barriers wait on the GPU for
// ranks that took the fallback. sc.native_why (every rank passed a GPU stream, one node, the
// workspace usable on every rank, flag kernels allowed) was agreed by every rank in
// MPIX_Stream_comm_create; the op and a reduction's datatype are the same on every rank (MPI
// requires it); contiguity and memory kinds rest on the documented rule, as for the blocking
// GPU-native collectives: every rank passes device memory, in contiguous datatypes.
bool stream_native(const StreamComm& sc, const Comm& c, bool contiguous, std::initializer_list<const void*> bufs,
                   const coll::Reduction* red, const Datatype* red_type, coll::gpu::GpuWorkspace** ws,
                   std::string* why) {
  *ws = nullptr;
  if (!sc.native_why.empty()) {
    *why = sc.native_why;
    return false;
  }
  if (!contiguous) {
    *why = "non-contiguous datatype";
    return false;
  }
  const void* last = nullptr;
  for (const void* b : bufs) {
    if (b && b == last) continue;  // in place: one query
    const MemKind kind = b ? memkind_query(b).kind : MemKind::host;
    if (c.size == 1 ? kind == MemKind::host : kind != MemKind::cuda_device) {
      *why = c.size == 1 ? "pageable host buffers" : "buffers not in CUDA device memory";
      return false;
    }
    last = b;
  }
  if (c.size == 1) return true;
  if (red && (red->user || !red_type->predefined)) {
    *why = "user-defined operation or derived datatype";
    return false;
  }
  if (red && !coll::gpu::supports(red->op, red->type)) {
    *why = std::string("no GPU kernel for ") + reduce_op_name(red->op) + " on " + basic_type_name(red->type);
    return false;
  }
  coll::gpu::GpuWorkspace* w = coll::gpu::existing_workspace(c);  // made at creation
  if (!w || !coll::gpu::kernels_allowed(*w)) {
    *why = w ? "GPU flag kernels not allowed" : "no GPU workspace on " + c.label();
    return false;
  }
  *ws = w;
  return true;
}

// Enqueues a stream-native collective on the user's stream (stream_native said yes, on more
// than one rank), logging the choice at INFO once per communicator, call and algorithm.
template <class Enqueue>
int enqueue_native(const char* fn, MPI_Comm comm, const StreamComm& sc, const Comm& c, const char* algo,
                   const std::string& detail, Enqueue&& enqueue) {
  if (log_first_time(std::string("stream-native:") + c.label() + ":" + fn + ":" + algo)) {
    const std::string why = detail.empty() ? "" : " (" + detail + ")";
    WEFT_INFO(Subsys::gpu, "%s on %s: %s on the user's stream%s", fn, c.label().c_str(), algo, why.c_str());
  }
  sc.enqueued = true;  // the communicator's free waits for the stream
  const Status s = enqueue(sc.stream->cuda);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
}

// Each *_native below validates the call's arguments, then enqueues it on the stream when
// stream_native allows (*done set), or leaves *why for the fallback's warning (the fallback's
// host call validates again).

int allreduce_native(const char* fn, MPI_Comm comm, const StreamComm& sc, const void* sendbuf, void* recvbuf,
                     int count, MPI_Datatype dt, MPI_Op op, bool* done, std::string* why) {
  *done = false;
  Comm* c = lookup_comm(comm);
  UserOpCall user;
  coll::Reduction red;
  ReductionLayout lay;
  int rc = make_reduction(fn, comm, op, dt, size_t(count), &user, &red, &lay);
  if (rc != MPI_SUCCESS) return rc;
  if (count > 0 && lay.type->predefined && (!recvbuf || (!sendbuf && sendbuf != MPI_IN_PLACE)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  if (count == 0) {
    *done = true;
    return MPI_SUCCESS;
  }
  ptrdiff_t offset = 0;
  const bool contiguous = contiguous_span(lay.type, size_t(count), &offset);
  const char* in = static_cast<const char*>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf) + offset;
  char* out = static_cast<char*>(recvbuf) + offset;
  coll::gpu::GpuWorkspace* ws;
  if (!stream_native(sc, *c, contiguous, {in, out}, &red, lay.type, &ws, why)) return MPI_SUCCESS;
  if (!ws) {  // one rank: the result is the input
    *done = true;
    return enqueue_copy(fn, comm, sc, out, in, packed_size(lay.type, size_t(count)));
  }
  coll::CollArgs a{coll::Collective::allreduce};
  a.send = in;
  a.recv = out;
  a.count = lay.reduce_count;
  a.bytes = a.count * red.elem_size;
  a.red = red;
  std::string choice;
  const coll::Algorithm* algo = coll::gpu::choose_allreduce(a, *c, &choice);
  const char* name = algo ? algo->name : "";
  coll::gpu::AllreduceAlgo which;
  if (!strcmp(name, "gpu_one_shot")) which = coll::gpu::AllreduceAlgo::one_shot;
  else if (!strcmp(name, "gpu_two_shot")) which = coll::gpu::AllreduceAlgo::two_shot;
  else if (!strcmp(name, "gpu_direct")) {  // blocking calls only: the rule's next choice
    which = coll::gpu::AllreduceAlgo::two_shot;
    name = "gpu_two_shot";
    choice = "gpu_direct runs in blocking calls only; " + choice;
  } else {
    *why = algo ? std::string("the rule chose ") + name : "no GPU algorithm";
    return MPI_SUCCESS;
  }
  *done = true;
  return enqueue_native(fn, comm, sc, *c, name, choice, [&](void* stream) {
    return coll::gpu::allreduce_enqueue(*ws, which, in, out, a.count, red.type, red.op, stream);
  });
}

int bcast_native(const char* fn, MPI_Comm comm, const StreamComm& sc, void* buffer, int count, MPI_Datatype dt,
                 int root, bool* done, std::string* why) {
  *done = false;
  Comm* c = lookup_comm(comm);
  const Datatype* d = nullptr;
  int rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, dt, &d, "datatype");
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  if (!buffer && count > 0 && d->predefined) return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  const size_t bytes = packed_size(d, size_t(count));
  if (bytes == 0) {
    *done = true;
    return MPI_SUCCESS;
  }
  ptrdiff_t offset = 0;
  const bool contiguous = contiguous_span(d, size_t(count), &offset);
  char* at = static_cast<char*>(buffer) + offset;
  coll::gpu::GpuWorkspace* ws;
  if (!stream_native(sc, *c, contiguous, {at}, nullptr, nullptr, &ws, why)) return MPI_SUCCESS;
  *done = true;
  if (!ws) return MPI_SUCCESS;  // one rank: nothing moves
  return enqueue_native(fn, comm, sc, *c, "gpu_bcast", "", [&](void* stream) {
    return coll::gpu::bcast_enqueue(*ws, at, bytes, root, stream);
  });
}

// In place (MPI_IN_PLACE), this rank's block is already in recvbuf: coll/gpu's in-place form is
// send == recv + rank * block.
int allgather_native(const char* fn, MPI_Comm comm, const StreamComm& sc, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, bool* done,
                     std::string* why) {
  *done = false;
  Comm* c = lookup_comm(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Datatype *rd = nullptr, *sd = nullptr;
  int rc = check_count(fn, comm, recvcount, "recvcount");
  if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, recvtype, &rd, "recvtype");
  if (rc == MPI_SUCCESS && !in_place) rc = check_count(fn, comm, sendcount, "sendcount");
  if (rc == MPI_SUCCESS && !in_place) rc = check_datatype(comm, fn, sendtype, &sd, "sendtype");
  if (rc != MPI_SUCCESS) return rc;
  const size_t block = packed_size(rd, size_t(recvcount));
  if (!in_place && packed_size(sd, size_t(sendcount)) != block)
    return raise(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends %zu bytes but its receive block holds %zu", c->rank,
                 packed_size(sd, size_t(sendcount)), block);
  if (block == 0) {
    *done = true;
    return MPI_SUCCESS;
  }
  if ((!recvbuf && rd->predefined) || (!in_place && !sendbuf && sd->predefined))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL %s with a non-zero count", recvbuf ? "sendbuf" : "recvbuf");
  ptrdiff_t offset = 0, send_offset = 0;
  bool contiguous = contiguous_span(rd, size_t(recvcount) * size_t(c->size), &offset);
  char* at = static_cast<char*>(recvbuf) + offset;
  const char* mine = at + size_t(c->rank) * block;
  if (!in_place) {
    contiguous = contiguous && contiguous_span(sd, size_t(sendcount), &send_offset);
    mine = static_cast<const char*>(sendbuf) + send_offset;
  }
  coll::gpu::GpuWorkspace* ws;
  if (!stream_native(sc, *c, contiguous, {mine, at}, nullptr, nullptr, &ws, why)) return MPI_SUCCESS;
  *done = true;
  if (!ws) return enqueue_copy(fn, comm, sc, at, mine, block);  // one rank
  return enqueue_native(fn, comm, sc, *c, "gpu_allgather", "", [&](void* stream) {
    return coll::gpu::allgather_enqueue(*ws, mine, at, block, stream);
  });
}

// In place (MPI_IN_PLACE), the input is in recvbuf and the result overwrites its first block:
// coll/gpu's in-place form is send == recv.
int reduce_scatter_block_native(const char* fn, MPI_Comm comm, const StreamComm& sc, const void* sendbuf,
                                void* recvbuf, int recvcount, MPI_Datatype dt, MPI_Op op, bool* done,
                                std::string* why) {
  *done = false;
  Comm* c = lookup_comm(comm);
  int rc = check_count(fn, comm, recvcount, "recvcount");
  if (rc != MPI_SUCCESS) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const size_t p = size_t(c->size), total = size_t(recvcount) * p;
  UserOpCall user;
  coll::Reduction red;
  ReductionLayout lay;
  if ((rc = make_reduction(fn, comm, op, dt, total, &user, &red, &lay)) != MPI_SUCCESS) return rc;
  if (total > 0 && lay.type->predefined && (!recvbuf || (!in_place && !sendbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with recvcount %d", recvcount);
  if (total == 0) {
    *done = true;
    return MPI_SUCCESS;
  }
  ptrdiff_t in_offset = 0, out_offset = 0;
  const bool contiguous = contiguous_span(lay.type, total, &in_offset) &&
                          contiguous_span(lay.type, size_t(recvcount), &out_offset);
  const char* in = static_cast<const char*>(in_place ? recvbuf : sendbuf) + in_offset;
  char* out = static_cast<char*>(recvbuf) + out_offset;
  coll::gpu::GpuWorkspace* ws;
  if (!stream_native(sc, *c, contiguous, {in, out}, &red, lay.type, &ws, why)) return MPI_SUCCESS;
  *done = true;
  if (!ws) return enqueue_copy(fn, comm, sc, out, in, packed_size(lay.type, size_t(recvcount)));  // one rank
  const size_t count = lay.reduce_count / p;  // elements of red.type in each rank's block
  return enqueue_native(fn, comm, sc, *c, "gpu_reduce_scatter_block", "", [&](void* stream) {
    return coll::gpu::reduce_scatter_block_enqueue(*ws, in, out, count, red.type, red.op, stream);
  });
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPIX_Info_set_hex(MPI_Info info, const char* key, const void* value, int value_size) {
  constexpr const char* fn = "MPIX_Info_set_hex";
  WEFT_REQUIRE_INIT(fn);
  if (!lookup_info(info) || info == MPI_INFO_ENV)
    return raise(MPI_COMM_NULL, MPI_ERR_INFO, fn, "invalid info 0x%x (argument 'info')", unsigned(info));
  if (value_size < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative value_size %d", value_size);
  if (!value && value_size > 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "value is NULL");
  if (2 * size_t(value_size) > MPI_MAX_INFO_VAL)
    return raise(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, fn, "%d bytes do not fit in MPI_MAX_INFO_VAL (%d) hex digits",
                 value_size, MPI_MAX_INFO_VAL);
  std::string text;
  text.reserve(2 * size_t(value_size));
  const auto* bytes = static_cast<const unsigned char*>(value);
  for (int i = 0; i < value_size; ++i) {
    text.push_back(hex_digit(bytes[i] >> 4));
    text.push_back(hex_digit(bytes[i] & 0xf));
  }
  return PMPI_Info_set(info, key, text.c_str());
}

int PMPIX_Stream_create(MPI_Info info, MPIX_Stream* stream) {
  constexpr const char* fn = "MPIX_Stream_create";
  WEFT_REQUIRE_INIT(fn);
  if (!stream) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "stream is NULL");
  auto obj = std::make_shared<StreamObj>();
  if (info != MPI_INFO_NULL) {
    InfoEntries* e = lookup_info(info);
    if (!e) return raise(MPI_COMM_NULL, MPI_ERR_INFO, fn, "invalid info 0x%x (argument 'info')", unsigned(info));
    const std::string* type = nullptr;
    const std::string* value = nullptr;
    for (const auto& [k, v] : *e) {
      if (k == "type") type = &v;
      if (k == "value") value = &v;
    }
    if (type && *type != "cudaStream_t")
      return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                   "stream type '%s' is not supported (info key 'type': only cudaStream_t)", type->c_str());
    if (type) {
      if (!cuda_state().compiled) return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
      std::vector<unsigned char> bytes;
      if (!value)
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, fn,
                     "info type cudaStream_t needs the key 'value' (set it with MPIX_Info_set_hex)");
      if (!decode_hex(*value, &bytes) || bytes.size() != sizeof(void*))
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, fn,
                     "info 'value' '%.64s' is not the %zu bytes of a cudaStream_t in hex (as MPIX_Info_set_hex "
                     "writes them)", value->c_str(), sizeof(void*));
      if (!cuda_state().usable)
        return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                     "a cudaStream_t needs CUDA, which is not usable in this process (%s)",
                     cuda_state().reason.c_str());
      obj->gpu = true;
      memcpy(&obj->cuda, bytes.data(), sizeof(void*));
#if WEFT_HAVE_CUDA
      std::string why;
      if (!stream_valid(obj->cuda, &why))
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "info 'value' %p is not a usable cudaStream_t (%s)", obj->cuda,
                     why.c_str());
#endif
    }
  }
  const uint32_t index = streams().objects.add(std::make_unique<std::shared_ptr<const StreamObj>>(std::move(obj)));
  *stream = stream_handle(index);
  return MPI_SUCCESS;
}

int PMPIX_Stream_free(MPIX_Stream* stream) {
  constexpr const char* fn = "MPIX_Stream_free";
  WEFT_REQUIRE_INIT(fn);
  if (!stream) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "stream is NULL");
  if (!lookup_stream(*stream))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "invalid or freed stream 0x%x (argument 'stream')",
                 unsigned(*stream));
  // Communicators made with the stream keep the object itself alive.
  streams().objects.remove(handle::index_of(*stream));
  *stream = MPIX_STREAM_NULL;
  return MPI_SUCCESS;
}

int PMPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm* newcomm) {
  constexpr const char* fn = "MPIX_Stream_comm_create";
  WEFT_REQUIRE_INIT(fn);
  if (!lookup_comm(comm))
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  if (!newcomm) return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
  std::shared_ptr<const StreamObj> obj;
  if (stream != MPIX_STREAM_NULL) {
    const auto* found = lookup_stream(stream);
    if (!found)
      return raise(comm, MPI_ERR_ARG, fn, "invalid or freed stream 0x%x (argument 'stream')", unsigned(stream));
    obj = *found;
  }
  MPI_Comm dup = MPI_COMM_NULL;
  int rc = PMPI_Comm_dup(comm, &dup);
  if (rc != MPI_SUCCESS) return rc;
  auto sc = std::make_unique<StreamComm>();
  if (cuda_state().compiled && (rc = agree_and_prepare(fn, dup, obj.get(), sc.get())) != MPI_SUCCESS) {
    (void)PMPI_Comm_free(&dup);
    return rc;
  }
  if (obj) {
    StreamTable& t = streams();
    if (t.keyval == MPI_KEYVAL_INVALID &&
        (rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_stream_comm, &t.keyval, nullptr)) != MPI_SUCCESS) {
      (void)PMPI_Comm_free(&dup);
      return rc;
    }
    sc->stream = std::move(obj);
    if ((rc = PMPI_Comm_set_attr(dup, t.keyval, sc.get())) != MPI_SUCCESS) {
      (void)PMPI_Comm_free(&dup);
      return rc;
    }
    (void)sc.release();  // owned by the attribute now: deleted with the communicator
  }
  *newcomm = dup;
  return MPI_SUCCESS;
}

// The point-to-point *_enqueue calls: stream-native when send_native / recv_native allow it,
// else the host call (after the fallback's stream synchronisation, unless the host call
// rejects the arguments or has nothing to order: MPI_PROC_NULL).

int PMPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Send_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  std::string why;
  P2pPath path;
  rc = send_native(fn, comm, *sc, buf, count, datatype, dest, tag, nullptr, &path, &why);
  if (rc != MPI_SUCCESS || path == P2pPath::native) return rc;
  if (path == P2pPath::fallback && (rc = fallback(fn, comm, *sc, "sends", why)) != MPI_SUCCESS) return rc;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int PMPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Status* status) {
  constexpr const char* fn = "MPIX_Recv_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  std::string why;
  P2pPath path;
  rc = recv_native(fn, comm, *sc, buf, count, datatype, source, tag, status, nullptr, &path, &why);
  if (rc != MPI_SUCCESS || path == P2pPath::native) return rc;
  if (path == P2pPath::fallback && (rc = fallback(fn, comm, *sc, "receives", why)) != MPI_SUCCESS) return rc;
  return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int PMPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  constexpr const char* fn = "MPIX_Isend_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
  std::string why;
  P2pPath path;
  rc = send_native(fn, comm, *sc, buf, count, datatype, dest, tag, request, &path, &why);
  if (rc != MPI_SUCCESS || path == P2pPath::native) return rc;
  if (path == P2pPath::fallback && (rc = fallback(fn, comm, *sc, "starts a non-blocking send", why)) != MPI_SUCCESS)
    return rc;
  return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

int PMPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  constexpr const char* fn = "MPIX_Irecv_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  if (!request) return raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
  std::string why;
  P2pPath path;
  rc = recv_native(fn, comm, *sc, buf, count, datatype, source, tag, nullptr, request, &path, &why);
  if (rc != MPI_SUCCESS || path == P2pPath::native) return rc;
  if (path == P2pPath::fallback && (rc = fallback(fn, comm, *sc, "starts a non-blocking receive", why)) != MPI_SUCCESS)
    return rc;
  return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
}

int PMPIX_Wait_enqueue(MPI_Request* request, MPI_Status* status) {
  constexpr const char* fn = "MPIX_Wait_enqueue";
  WEFT_REQUIRE_INIT(fn);
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "request is NULL");
  return wait_enqueue(fn, 1, request, status, true);
}

int PMPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[], MPI_Status* array_of_statuses) {
  constexpr const char* fn = "MPIX_Waitall_enqueue";
  WEFT_REQUIRE_INIT(fn);
  return wait_enqueue(fn, count, array_of_requests, array_of_statuses, false);
}

int PMPIX_Allreduce_enqueue(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Allreduce_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument 'count')", count);
  bool done = false;
  std::string why;
  if ((rc = allreduce_native(fn, comm, *sc, sendbuf, recvbuf, count, datatype, op, &done, &why)) != MPI_SUCCESS)
    return rc;
  if (done) return MPI_SUCCESS;
  if ((rc = fallback(fn, comm, *sc, "reduces with MPI_Allreduce", why)) != MPI_SUCCESS) return rc;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int PMPIX_Bcast_enqueue(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Bcast_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  bool done = false;
  std::string why;
  if ((rc = bcast_native(fn, comm, *sc, buffer, count, datatype, root, &done, &why)) != MPI_SUCCESS) return rc;
  if (done) return MPI_SUCCESS;
  if ((rc = fallback(fn, comm, *sc, "broadcasts with MPI_Bcast", why)) != MPI_SUCCESS) return rc;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int PMPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Allgather_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  bool done = false;
  std::string why;
  if ((rc = allgather_native(fn, comm, *sc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, &done,
                             &why)) != MPI_SUCCESS)
    return rc;
  if (done) return MPI_SUCCESS;
  if ((rc = fallback(fn, comm, *sc, "gathers with MPI_Allgather", why)) != MPI_SUCCESS) return rc;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int PMPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Reduce_scatter_block_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc != MPI_SUCCESS) return rc;
  bool done = false;
  std::string why;
  if ((rc = reduce_scatter_block_native(fn, comm, *sc, sendbuf, recvbuf, recvcount, datatype, op, &done, &why)) !=
      MPI_SUCCESS)
    return rc;
  if (done) return MPI_SUCCESS;
  if ((rc = fallback(fn, comm, *sc, "reduces with MPI_Reduce_scatter_block", why)) != MPI_SUCCESS) return rc;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

}  // extern "C"

WEFT_PMPIX_ALIAS(Info_set_hex)
WEFT_PMPIX_ALIAS(Stream_create)
WEFT_PMPIX_ALIAS(Stream_free)
WEFT_PMPIX_ALIAS(Stream_comm_create)
WEFT_PMPIX_ALIAS(Send_enqueue)
WEFT_PMPIX_ALIAS(Recv_enqueue)
WEFT_PMPIX_ALIAS(Isend_enqueue)
WEFT_PMPIX_ALIAS(Irecv_enqueue)
WEFT_PMPIX_ALIAS(Wait_enqueue)
WEFT_PMPIX_ALIAS(Waitall_enqueue)
WEFT_PMPIX_ALIAS(Allreduce_enqueue)
WEFT_PMPIX_ALIAS(Bcast_enqueue)
WEFT_PMPIX_ALIAS(Allgather_enqueue)
WEFT_PMPIX_ALIAS(Reduce_scatter_block_enqueue)
