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
//   - Stream-native (enqueued on the user's stream, no host wait): MPIX_Allreduce_enqueue on
//     contiguous device buffers, a predefined op on a type the GPU kernels reduce, every rank
//     on one node and the workspace's flag kernels allowed (coll::gpu::allreduce_enqueue); and
//     on a communicator of one rank, a cudaMemcpyAsync.
//   - Everything else synchronises the stream and makes the ordinary host call: one WARN per
//     call (and reason), an MPI_ERR_UNSUPPORTED_OPERATION under WEFT_REQUIRE_FAST_PATH=1, and
//     an error while the stream is being captured into a CUDA graph.
// The GPU workspace of the stream communicator is made in MPIX_Stream_comm_create (collective;
// a cudaMalloc, which stream capture forbids), when every rank passed a GPU stream.
//
// A build without CUDA has CPU streams only: "cudaStream_t" and every *_enqueue call fail with
// MPI_ERR_UNSUPPORTED_OPERATION.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if WEFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "coll/gpu/gpu_coll.h"
#include "coll_call.h"
#include "datatype_api.h"
#include "runtime/core/log.h"
#include "runtime/core/memkind.h"
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
  std::string native_why;       // why Allreduce_enqueue cannot run stream-native, if it cannot
  mutable bool enqueued = false;  // stream-native work was enqueued on the stream
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

// Stream-ordered copy (a communicator of one rank).
int enqueue_copy(const char* fn, MPI_Comm comm, const StreamComm& sc, void* dst, const void* src, size_t bytes) {
  const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cuda_stream(sc));
  if (err == cudaSuccess) return MPI_SUCCESS;
  (void)cudaGetLastError();
  return raise(comm, MPI_ERR_OTHER, fn, "cudaMemcpyAsync on the communicator's stream: %s", cudaGetErrorString(err));
}
#endif

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
    if (!ws) sc->native_why = "GPU collectives not usable on " + c->name + ": " + why;
    else if (!coll::gpu::kernels_allowed(*ws))
      sc->native_why = coll::gpu::settings().mode == coll::gpu::Mode::copy_engine
                           ? "WEFT_GPU_COLL_MODE=copy_engine"
                           : "ranks share a GPU without MPS: the stream-native kernels would take turns";
  }
  WEFT_INFO(Subsys::gpu, "stream communicator %s: %s", c->name.c_str(),
            !sc->every_rank_gpu        ? "no gpu stream on every rank"
            : sc->native_why.empty()   ? "allreduce_enqueue runs stream-native"
                                       : ("allreduce_enqueue falls back: " + sc->native_why).c_str());
  return MPI_SUCCESS;
}

// MPIX_Wait(all)_enqueue: every request must come from a communicator with a GPU stream;
// each stream is waited for once, then the requests from the host.
int wait_enqueue(const char* fn, int count, MPI_Request* requests, MPI_Status* statuses, bool single) {
  if (!cuda_state().compiled) return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  if (count > 0 && !requests) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_requests is NULL");
  std::vector<std::pair<const StreamComm*, MPI_Comm>> seen;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    const Request* r = lookup_request(requests[i]);
    if (!r) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x (index %d)", unsigned(requests[i]), i);
    const StreamComm* sc = stream_comm_of(r->owner);
    if (!sc || !sc->stream->gpu)
      return raise(lookup_comm(r->owner) ? r->owner : MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
                   "request 0x%x (index %d) does not come from MPIX_Isend_enqueue or MPIX_Irecv_enqueue on a "
                   "communicator with a GPU stream", unsigned(requests[i]), i);
    bool known = false;
    for (const auto& [s, c] : seen) known = known || s->stream->cuda == sc->stream->cuda;
    if (!known) seen.emplace_back(sc, r->owner);
  }
  for (const auto& [sc, comm] : seen) {
    const int rc = fallback(fn, comm, *sc, "waits from the host");
    if (rc != MPI_SUCCESS) return rc;
  }
  return single ? PMPI_Wait(requests, statuses) : PMPI_Waitall(count, requests, statuses);
}

// ---------------------------------------------------------------------------- allreduce

// Enqueues the allreduce on the stream when it can run stream-native (*done set); otherwise
// leaves *why for the fallback's warning.
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
  if (!sc.native_why.empty()) {
    *why = sc.native_why;
    return MPI_SUCCESS;
  }
  ptrdiff_t offset = 0;
  if (!contiguous_span(lay.type, size_t(count), &offset)) {
    *why = "non-contiguous datatype";
    return MPI_SUCCESS;
  }
  const char* in = static_cast<const char*>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf) + offset;
  char* out = static_cast<char*>(recvbuf) + offset;
  const MemKind out_kind = memkind_query(out).kind;
  const MemKind in_kind = in == out ? out_kind : memkind_query(in).kind;
  if (c->size == 1) {  // the result is the input: a copy on the stream
    if (in_kind == MemKind::host || out_kind == MemKind::host) {
      *why = "pageable host buffers";
      return MPI_SUCCESS;
    }
#if WEFT_HAVE_CUDA
    if (in != out && (rc = enqueue_copy(fn, comm, sc, out, in, packed_size(lay.type, size_t(count)))) != MPI_SUCCESS)
      return rc;
#endif
    *done = true;
    return MPI_SUCCESS;
  }
  if (out_kind != MemKind::cuda_device || in_kind != MemKind::cuda_device) {
    *why = "buffers not in CUDA device memory";
    return MPI_SUCCESS;
  }
  if (red.user || !lay.type->predefined) {
    *why = "user-defined operation or derived datatype";
    return MPI_SUCCESS;
  }
  if (!coll::gpu::supports(red.op, red.type)) {
    *why = std::string("no GPU kernel for ") + reduce_op_name(red.op) + " on " + basic_type_name(red.type);
    return MPI_SUCCESS;
  }
  std::string ws_why;
  coll::gpu::GpuWorkspace* ws = coll::gpu::workspace(coll_context(*c), &ws_why);  // made at creation
  if (!ws || !coll::gpu::kernels_allowed(*ws)) {
    *why = ws ? "GPU flag kernels not allowed" : ws_why;
    return MPI_SUCCESS;
  }
  coll::CollArgs a{coll::Collective::allreduce};
  a.send = in;
  a.recv = out;
  a.count = lay.reduce_count;
  a.bytes = a.count * red.elem_size;
  a.red = red;
  std::string choice;
  const coll::Algorithm* algo = coll::gpu::choose_allreduce(a, *c, &choice);
  coll::gpu::AllreduceAlgo which;
  if (algo && !strcmp(algo->name, "gpu_one_shot")) which = coll::gpu::AllreduceAlgo::one_shot;
  else if (algo && !strcmp(algo->name, "gpu_two_shot")) which = coll::gpu::AllreduceAlgo::two_shot;
  else {
    *why = algo ? std::string("the rule chose ") + algo->name : "no GPU algorithm";
    return MPI_SUCCESS;
  }
  if (log_first_time("stream-allreduce:" + c->name + ":" + algo->name))
    WEFT_INFO(Subsys::gpu, "MPIX_Allreduce_enqueue on %s: %s on the user's stream (%s)", c->name.c_str(),
              algo->name, choice.c_str());
#if WEFT_HAVE_CUDA
  sc.enqueued = true;
  const Status s = coll::gpu::allreduce_enqueue(*ws, which, in, out, a.count, red.type, red.op, sc.stream->cuda);
  if (s != Status::ok) return raise_status(comm, s, fn);
#else
  (void)which;
#endif
  *done = true;
  return MPI_SUCCESS;
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

int PMPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Send_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "sends");
  return rc == MPI_SUCCESS ? PMPI_Send(buf, count, datatype, dest, tag, comm) : rc;
}

int PMPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Status* status) {
  constexpr const char* fn = "MPIX_Recv_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "receives");
  return rc == MPI_SUCCESS ? PMPI_Recv(buf, count, datatype, source, tag, comm, status) : rc;
}

int PMPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  constexpr const char* fn = "MPIX_Isend_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "starts a non-blocking send");
  return rc == MPI_SUCCESS ? PMPI_Isend(buf, count, datatype, dest, tag, comm, request) : rc;
}

int PMPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  constexpr const char* fn = "MPIX_Irecv_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "starts a non-blocking receive");
  return rc == MPI_SUCCESS ? PMPI_Irecv(buf, count, datatype, source, tag, comm, request) : rc;
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
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "broadcasts with MPI_Bcast");
  return rc == MPI_SUCCESS ? PMPI_Bcast(buffer, count, datatype, root, comm) : rc;
}

int PMPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Allgather_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "gathers with MPI_Allgather");
  return rc == MPI_SUCCESS ? PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) : rc;
}

int PMPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Reduce_scatter_block_enqueue";
  WEFT_REQUIRE_INIT(fn);
  const StreamComm* sc;
  int rc = resolve(fn, comm, &sc);
  if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "reduces with MPI_Reduce_scatter_block");
  return rc == MPI_SUCCESS ? PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm) : rc;
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
