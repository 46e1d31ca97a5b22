// Stream-ordered operations, with MPICH's names (MPIX_Stream_*, MPIX_*_enqueue) and
// MPIX_Info_set_hex: argument checks, handles and error classes. The work is done below: the
// stream-native point-to-point protocol and the calls on the user's stream in pt2pt/stream.h,
// the stream-ordered collectives and the stream communicator's agreement in
// coll/gpu/stream_exec.h.
//
// A stream object wraps a cudaStream_t given through info keys "type" = "cudaStream_t" and
// "value" = the handle's bytes in hex (MPIX_Info_set_hex), or nothing (MPI_INFO_NULL: a "CPU
// stream"). MPIX_Stream_comm_create duplicates a communicator and hangs the stream on the
// duplicate through an internal attribute, so MPI_Comm_free of the duplicate drops it and a
// reused communicator handle never carries a stale stream. MPIX_Stream_free invalidates the
// handle at once (MPICH allows freeing a GPU stream that communicators still use).
//
// The *_enqueue calls run in the order of the communicator's GPU stream: after the work
// enqueued on it before them; work enqueued after them sees their result. Each runs
// stream-native where the layers below allow it; else (a fallback) it synchronises the stream
// and makes the ordinary host call: one WARN per call and reason, an
// MPI_ERR_UNSUPPORTED_OPERATION under WEFT_REQUIRE_FAST_PATH=1, and an error while the stream is
// being captured into a CUDA graph. A build without CUDA has CPU streams only: "cudaStream_t"
// and every *_enqueue call fail with MPI_ERR_UNSUPPORTED_OPERATION.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll/gpu/stream_exec.h"
#include "coll_call.h"
#include "datatype_api.h"
#include "pt2pt/stream.h"
#include "pt2pt/tag.h"
#include "runtime/hex.h"
#include "runtime/memkind.h"
#include "state.h"

// MPICH puts the stream object type (0xf) in bits 26-29: MPIX_STREAM_NULL is 0x3c000000.
#define WEFT_PMPIX_ALIAS(name) _Pragma(WEFT_STR_(weak MPIX_##name = PMPIX_##name))

namespace weft::mpi {

namespace {

using coll::gpu::StreamComm;

constexpr uint32_t kStreamObj = 0xf;
static_assert(((uint32_t(MPIX_STREAM_NULL) >> handle::kObjShift) & 0xf) == kStreamObj);
constexpr const char* kNoCuda = "not supported: weft was built without CUDA";

// Stream handles, and the attribute keyval that hangs a StreamComm on a communicator.
struct StreamTable {
  HandleTable<UserStream> objects{1};  // [0] reserved
  int keyval = MPI_KEYVAL_INVALID;
};
StreamTable& streams() {
  static StreamTable t;
  return t;
}

MPIX_Stream stream_handle(uint32_t index) { return handle::make(handle::direct, handle::Obj(kStreamObj), index); }

const UserStream* lookup_stream(MPIX_Stream h) {
  if (handle::kind_of(h) != handle::direct || uint32_t(handle::obj_of(h)) != kStreamObj) return nullptr;
  return streams().objects.get(handle::index_of(h));
}

// MPI_Comm_free of a stream communicator: before its GPU workspace is released (attributes go
// first), wait for the kernels enqueued on the stream that still use it. So the communicator
// must be freed before its cudaStream_t is destroyed.
int delete_stream_comm(MPI_Comm, int, void* value, void*) {
  auto* sc = static_cast<StreamComm*>(value);
  stream_drain(sc->stream);
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

// A lower layer's status as the binding returns it.
int mapped(MPI_Comm comm, Status s, const char* fn) {
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
}

// ---------------------------------------------------------------------------- *_enqueue calls

// How an *_enqueue call goes: on the stream, through the fallback, or straight to the host call
// (arguments it rejects, MPI_PROC_NULL: nothing to order on the stream).
enum class Path : uint8_t { native, fallback, host };

// One *_enqueue call: its stream communicator, and where its native step sends it.
struct Call {
  const StreamComm& sc;
  const Comm& c;
  Path path = Path::host;
  std::string why;  // why it falls back
};

// Before an *_enqueue call's host fallback.
int fallback(const char* fn, MPI_Comm comm, const StreamComm& sc, const char* what, const std::string& why) {
  return mapped(comm, stream_host_fallback(sc.stream.cuda, fn, what, why, g_state->coll_settings.require_fast_path), fn);
}

// Runs an *_enqueue call (after the initialisation check) on a communicator that carries a GPU
// stream: `native` checks the arguments and runs the call on the stream where it can (else sets
// the path); the fallback and the host path end in `host`, the ordinary call (`what` it does from
// the host, for logs).
template <class Native, class Host>
int enqueue_call(const char* fn, MPI_Comm comm, const char* what, Native&& native, Host&& host) {
  WEFT_REQUIRE_INIT(fn);
  if (!cuda_state().compiled) return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (!lookup_comm(comm))
    return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  const StreamComm* sc = stream_comm_of(comm);
  if (!sc || !sc->stream.gpu)
    return raise(comm, MPI_ERR_ARG, fn,
                 "communicator 0x%x carries no GPU stream: *_enqueue calls need a communicator made by "
                 "MPIX_Stream_comm_create from a stream with info type cudaStream_t%s",
                 unsigned(comm), sc ? " (this one has a stream without a GPU stream)" : "");
  Call k{*sc, *lookup_comm(comm), Path::host, {}};
  int rc = native(k);
  if (rc != MPI_SUCCESS || k.path == Path::native) return rc;
  if (k.path == Path::fallback && (rc = fallback(fn, comm, *sc, what, k.why)) != MPI_SUCCESS) return rc;
  return host();
}

// `count` elements of d at buf as they travel: one run of `bytes` bytes from `at`, if contiguous.
struct Span {
  char* at;
  size_t bytes;
  bool contiguous;
};
Span span_of(const Datatype* d, const void* buf, size_t count) {
  ptrdiff_t offset = 0;
  const bool contiguous = contiguous_span(d, count, &offset);
  return {static_cast<char*>(const_cast<void*>(buf)) + offset, packed_size(d, count), contiguous};
}

// MPIX_Send_enqueue / MPIX_Isend_enqueue (nonblocking: request is set).
int send_native(const char* fn, MPI_Comm comm, Call& k, const void* buf, int count, MPI_Datatype dt, int dest,
                int tag, MPI_Request* request, bool nonblocking) {
  if (nonblocking && !request) return raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
  if (count < 0 || dest < 0 || dest >= k.c.size || tag < 0 || tag > tag::kMaxUserTag) return MPI_SUCCESS;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(comm, fn, dt, &d)) return rc;
  const Span m = span_of(d, buf, size_t(count));
  k.why = k.sc.p2p.native_why(fn, k.c, dest, false, m.contiguous, m.at, m.bytes);
  k.path = k.why.empty() ? Path::native : Path::fallback;
  if (k.path == Path::fallback) return MPI_SUCCESS;
  Request* r = nullptr;
  const Status s =
      k.sc.p2p.send(*g_state->transport, k.c, k.sc.stream, m.at, m.bytes, dest, tag, nonblocking ? &r : nullptr);
  if (r) *request = request_handle(r);
  return mapped(comm, s, fn);
}

// MPIX_Recv_enqueue / MPIX_Irecv_enqueue (nonblocking: request is set).
int recv_native(const char* fn, MPI_Comm comm, Call& k, void* buf, int count, MPI_Datatype dt, int source, int tag,
                MPI_Status* status, MPI_Request* request, bool nonblocking) {
  if (nonblocking && !request) return raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
  if (count < 0 || source == MPI_PROC_NULL || (source != MPI_ANY_SOURCE && (source < 0 || source >= k.c.size)) ||
      (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag)))
    return MPI_SUCCESS;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(comm, fn, dt, &d)) return rc;
  const Span m = span_of(d, buf, size_t(count));
  const bool wildcard = source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG;
  k.why = k.sc.p2p.native_why(fn, k.c, source, wildcard, m.contiguous, m.at, m.bytes);
  k.path = k.why.empty() ? Path::native : Path::fallback;
  if (k.path == Path::fallback) return MPI_SUCCESS;
  Transport& t = *g_state->transport;
  if (nonblocking) {
    Request* r = nullptr;
    const Status s = k.sc.p2p.irecv(t, k.c, k.sc.stream, m.at, m.bytes, source, tag, &r);
    if (r) *request = request_handle(r);
    return mapped(comm, s, fn);
  }
  RequestStatus rs;
  const Status s = k.sc.p2p.recv(t, k.c, k.sc.stream, m.at, m.bytes, source, tag, &rs);
  if (status) fill_status(status, rs);
  return mapped(comm, s, fn);
}

// The point-to-point *_enqueue calls: stream-native when the protocol allows it, else the host
// call (after the fallback's stream synchronisation, unless the host call rejects the arguments
// or has nothing to order: MPI_PROC_NULL). `what` the host call does, for the logs.
int send_enqueue(const char* fn, const char* what, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request = nullptr, bool nonblocking = false) {
  return enqueue_call(
      fn, comm, what,
      [&](Call& k) { return send_native(fn, comm, k, buf, count, dt, dest, tag, request, nonblocking); },
      [&] {
        return nonblocking ? PMPI_Isend(buf, count, dt, dest, tag, comm, request)
                           : PMPI_Send(buf, count, dt, dest, tag, comm);
      });
}

int recv_enqueue(const char* fn, const char* what, void* buf, int count, MPI_Datatype dt, int source, int tag,
                 MPI_Comm comm, MPI_Status* status, MPI_Request* request = nullptr, bool nonblocking = false) {
  return enqueue_call(
      fn, comm, what,
      [&](Call& k) { return recv_native(fn, comm, k, buf, count, dt, source, tag, status, request, nonblocking); },
      [&] {
        return nonblocking ? PMPI_Irecv(buf, count, dt, source, tag, comm, request)
                           : PMPI_Recv(buf, count, dt, source, tag, comm, status);
      });
}

// MPIX_Wait(all)_enqueue: every request must come from a communicator with a GPU stream.
// Stream-native requests complete in pt2pt (StreamP2p::complete). For the others each stream
// is waited for once, then the requests from the host.
int wait_enqueue(const char* fn, int count, MPI_Request* requests, MPI_Status* statuses, bool single) {
  if (!cuda_state().compiled) return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  if (count > 0 && !requests) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_requests is NULL");
  std::vector<std::pair<const StreamComm*, MPI_Comm>> seen;  // the host requests' streams, once each
  bool native = false;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    Request* r = lookup_request(requests[i]);
    if (!r)
      return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x (index %d)", unsigned(requests[i]), i);
    const StreamComm* sc = stream_comm_of(r->owner);
    if (!sc || !sc->stream.gpu)
      return raise(lookup_comm(r->owner) ? r->owner : MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
                   "request 0x%x (index %d) does not come from MPIX_Isend_enqueue or MPIX_Irecv_enqueue on a "
                   "communicator with a GPU stream", unsigned(requests[i]), i);
    if (StreamP2p::is_native(*r)) {
      native = true;
      continue;
    }
    bool known = false;
    for (const auto& [s, c] : seen) known = known || s->stream.cuda == sc->stream.cuda;
    if (!known) seen.emplace_back(sc, r->owner);
  }
  auto status_at = [&](int i) { return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i; };
  std::vector<std::pair<int, RequestStatus>> done;  // the stream-native requests, completed here
  int first_error = MPI_SUCCESS;
  for (int i = 0; native && i < count; ++i) {
    Request* r = requests[i] == MPI_REQUEST_NULL ? nullptr : lookup_request(requests[i]);
    if (!r || !StreamP2p::is_native(*r)) continue;
    const MPI_Comm owner = r->owner;
    const StreamComm* sc = stream_comm_of(owner);
    done.emplace_back(i, RequestStatus{});
    const Status s = sc->p2p.complete(*g_state->transport, *lookup_comm(owner), sc->stream, r, &done.back().second);
    if (const int rc = mapped(owner, s, fn); rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
    requests[i] = MPI_REQUEST_NULL;
  }
  int rc = MPI_SUCCESS;
  for (const auto& [sc, comm] : seen)
    if (rc == MPI_SUCCESS) rc = fallback(fn, comm, *sc, "waits from the host", "");
  const bool synchronised = rc == MPI_SUCCESS;  // the rest (and the null requests) from the host
  if (synchronised) rc = single ? PMPI_Wait(requests, statuses) : PMPI_Waitall(count, requests, statuses);
  for (const auto& [i, rs] : done) fill_status(status_at(i), rs);
  return synchronised && first_error != MPI_SUCCESS ? first_error : rc;
}

// The collectives' native step: a call with nothing to move is done; else coll/gpu runs it on
// the stream or leaves the fallback's reason.
int collective_native(const char* fn, MPI_Comm comm, Call& k, const coll::gpu::StreamCall& call, bool nothing) {
  bool native = nothing;
  const Status s = nothing ? Status::ok : coll::gpu::stream_collective(fn, k.sc, k.c, call, &native, &k.why);
  k.path = native ? Path::native : Path::fallback;
  return mapped(comm, s, fn);
}

// Allreduce (ranks 1) and Reduce_scatter_block (ranks: the communicator's size): checks the
// reduction of count x ranks elements, `count` of them each rank's result (`count_arg` names
// it), and its buffers. In place, the input is in recvbuf.
int reduction_native(const char* fn, MPI_Comm comm, Call& k, const void* sendbuf, void* recvbuf, int count,
                     const char* count_arg, size_t ranks, MPI_Datatype dt, MPI_Op op) {
  if (int rc = check_count(fn, comm, count, count_arg)) return rc;
  const size_t total = size_t(count) * ranks;
  UserOpCall user;
  coll::gpu::StreamCall call;
  ReductionLayout lay;
  if (int rc = make_reduction(fn, comm, op, dt, total, &user, &call.red, &lay)) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (total > 0 && lay.type->predefined && (!recvbuf || (!in_place && !sendbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with %s %d", count_arg, count);
  ptrdiff_t in_offset = 0, out_offset = 0;
  call.coll = ranks == 1 ? coll::Collective::allreduce : coll::Collective::reduce_scatter;
  call.contiguous =
      contiguous_span(lay.type, total, &in_offset) && contiguous_span(lay.type, size_t(count), &out_offset);
  call.send = static_cast<const char*>(in_place ? recvbuf : sendbuf) + in_offset;
  call.recv = static_cast<char*>(recvbuf) + out_offset;
  call.bytes = packed_size(lay.type, size_t(count));
  call.count = lay.reduce_count / ranks;
  call.reduction = true;
  call.predefined_type = lay.type->predefined;
  return collective_native(fn, comm, k, call, total == 0);
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
  return PMPI_Info_set(info, key, hex_encode(value, size_t(value_size)).c_str());
}

int PMPIX_Stream_create(MPI_Info info, MPIX_Stream* stream) {
  constexpr const char* fn = "MPIX_Stream_create";
  WEFT_REQUIRE_INIT(fn);
  if (!stream) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "stream is NULL");
  auto obj = std::make_unique<UserStream>();
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
      if (!hex_decode(*value, &bytes) || bytes.size() != sizeof(void*))
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, fn,
                     "info 'value' '%.64s' is not the %zu bytes of a cudaStream_t in hex (as MPIX_Info_set_hex "
                     "writes them)", value->c_str(), sizeof(void*));
      if (!cuda_state().usable)
        return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                     "a cudaStream_t needs CUDA, which is not usable in this process (%s)",
                     cuda_state().reason.c_str());
      obj->gpu = true;
      memcpy(&obj->cuda, bytes.data(), sizeof(void*));
      std::string why;
      if (!stream_valid(obj->cuda, &why))
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "info 'value' %p is not a usable cudaStream_t (%s)", obj->cuda,
                     why.c_str());
    }
  }
  const uint32_t index = streams().objects.add(std::move(obj));
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
  // Communicators made with the stream keep their own copy.
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
  const UserStream* obj = nullptr;
  if (stream != MPIX_STREAM_NULL && !(obj = lookup_stream(stream)))
    return raise(comm, MPI_ERR_ARG, fn, "invalid or freed stream 0x%x (argument 'stream')", unsigned(stream));
  MPI_Comm dup = MPI_COMM_NULL;
  int rc = PMPI_Comm_dup(comm, &dup);
  if (rc != MPI_SUCCESS) return rc;
  auto sc = std::make_unique<StreamComm>();
  if (obj) sc->stream = UserStream{obj->gpu, obj->cuda};
  if (cuda_state().compiled) {
    rc = mapped(dup, coll::gpu::prepare_stream_comm(coll_context(*lookup_comm(dup)), sc.get()), fn);
  }
  StreamTable& t = streams();
  if (rc == MPI_SUCCESS && obj && t.keyval == MPI_KEYVAL_INVALID)
    rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_stream_comm, &t.keyval, nullptr);
  if (rc == MPI_SUCCESS && obj && (rc = PMPI_Comm_set_attr(dup, t.keyval, sc.get())) == MPI_SUCCESS)
    (void)sc.release();  // owned by the attribute now: deleted with the communicator
  if (rc != MPI_SUCCESS) {
    (void)PMPI_Comm_free(&dup);
    return rc;
  }
  *newcomm = dup;
  return MPI_SUCCESS;
}

int PMPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send_enqueue("MPIX_Send_enqueue", "sends", buf, count, datatype, dest, tag, comm);
}

int PMPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Status* status) {
  return recv_enqueue("MPIX_Recv_enqueue", "receives", buf, count, datatype, source, tag, comm, status);
}

int PMPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  return send_enqueue("MPIX_Isend_enqueue", "starts a non-blocking send", buf, count, datatype, dest, tag, comm,
                      request, true);
}

int PMPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  return recv_enqueue("MPIX_Irecv_enqueue", "starts a non-blocking receive", buf, count, datatype, source, tag,
                      comm, nullptr, request, true);
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

// The collective *_enqueue calls: stream-native when coll/gpu's shared check passes (every rank
// decides alike), else the host call after the fallback's stream synchronisation.

int PMPIX_Allreduce_enqueue(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Allreduce_enqueue";
  return enqueue_call(
      fn, comm, "reduces with MPI_Allreduce",
      [&](Call& k) {
        return reduction_native(fn, comm, k, sendbuf, recvbuf, count, "count", 1, datatype, op);
      },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

int PMPIX_Bcast_enqueue(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Bcast_enqueue";
  return enqueue_call(
      fn, comm, "broadcasts with MPI_Bcast",
      [&](Call& k) {
        const Datatype* d = nullptr;
        int rc = check_count(fn, comm, count, "count");
        if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, datatype, &d, "datatype");
        if (rc == MPI_SUCCESS) rc = check_root(fn, comm, k.c, root);
        if (rc != MPI_SUCCESS) return rc;
        if (!buffer && count > 0 && d->predefined)
          return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
        const Span m = span_of(d, buffer, size_t(count));
        coll::gpu::StreamCall call;
        call.coll = coll::Collective::bcast;
        call.send = call.recv = m.at;
        call.bytes = m.bytes;
        call.contiguous = m.contiguous;
        call.root = root;
        return collective_native(fn, comm, k, call, call.bytes == 0);
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

// In place (MPI_IN_PLACE), this rank's block is already in recvbuf: coll/gpu's in-place form is
// send == recv + rank * block.
int PMPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Allgather_enqueue";
  return enqueue_call(
      fn, comm, "gathers with MPI_Allgather",
      [&](Call& k) {
        const bool in_place = sendbuf == MPI_IN_PLACE;
        const Datatype *rd = nullptr, *sd = nullptr;
        int rc = check_count(fn, comm, recvcount, "recvcount");
        if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, recvtype, &rd, "recvtype");
        if (rc == MPI_SUCCESS && !in_place) rc = check_count(fn, comm, sendcount, "sendcount");
        if (rc == MPI_SUCCESS && !in_place) rc = check_datatype(comm, fn, sendtype, &sd, "sendtype");
        if (rc != MPI_SUCCESS) return rc;
        coll::gpu::StreamCall call;
        call.coll = coll::Collective::allgather;
        call.bytes = packed_size(rd, size_t(recvcount));
        if (!in_place && packed_size(sd, size_t(sendcount)) != call.bytes)
          return raise(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends %zu bytes but its receive block holds %zu", k.c.rank,
                       packed_size(sd, size_t(sendcount)), call.bytes);
        if (call.bytes > 0 && ((!recvbuf && rd->predefined) || (!in_place && !sendbuf && sd->predefined)))
          return raise(comm, MPI_ERR_BUFFER, fn, "NULL %s with a non-zero count", recvbuf ? "sendbuf" : "recvbuf");
        const Span all = span_of(rd, recvbuf, size_t(recvcount) * size_t(k.c.size));
        call.recv = all.at;
        call.send = all.at + size_t(k.c.rank) * call.bytes;
        call.contiguous = all.contiguous;
        if (!in_place) {
          const Span mine = span_of(sd, sendbuf, size_t(sendcount));
          call.send = mine.at;
          call.contiguous = call.contiguous && mine.contiguous;
        }
        return collective_native(fn, comm, k, call, call.bytes == 0);
      },
      [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

// In place (MPI_IN_PLACE), the input is in recvbuf and the result overwrites its first block:
// coll/gpu's in-place form is send == recv.
int PMPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm) {
  constexpr const char* fn = "MPIX_Reduce_scatter_block_enqueue";
  return enqueue_call(
      fn, comm, "reduces with MPI_Reduce_scatter_block",
      [&](Call& k) {
        return reduction_native(fn, comm, k, sendbuf, recvbuf, recvcount, "recvcount", size_t(k.c.size), datatype,
                                op);
      },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
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
