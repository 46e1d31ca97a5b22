// Stream-ordered operations, with MPICH's names (MPIX_Stream_*, MPIX_*_enqueue) and
// MPIX_Info_set_hex: argument checks, handles and error classes. The work is done below: the
// stream communicators, the point-to-point calls and the fallback in pt2pt/stream_comm.h, the
// collectives and the stream communicator's agreement in coll/gpu/stream_exec.h.
//
// A stream object wraps a cudaStream_t given through info keys "type" = "cudaStream_t" and
// "value" = the handle's bytes in hex (MPIX_Info_set_hex), or nothing (MPI_INFO_NULL: a "CPU
// stream"). MPIX_Stream_comm_create duplicates a communicator and hangs a copy of the stream on
// the duplicate until MPI_Comm_free; MPIX_Stream_free invalidates the handle at once (MPICH
// allows freeing a GPU stream that communicators still use). The *_enqueue calls run in the
// order of the communicator's GPU stream, stream-native or through the fallback (a stream
// synchronisation and the ordinary host call). A build without CUDA has CPU streams only:
// "cudaStream_t" and every *_enqueue call fail with MPI_ERR_UNSUPPORTED_OPERATION.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll/gpu/gpu_coll.h"
#include "coll/gpu/stream_exec.h"
#include "coll_call.h"
#include "pt2pt/stream_comm.h"
#include "pt2pt/tag.h"
#include "runtime/capture_mode.h"
#include "runtime/hex.h"
#include "runtime/memkind.h"
#include "runtime/typemap.h"
#include "state.h"

namespace weft::mpi {

namespace {

// MPICH puts the stream object type (0xf) in bits 26-29: MPIX_STREAM_NULL is 0x3c000000.
constexpr uint32_t kStreamObj = 0xf;
static_assert(((uint32_t(MPIX_STREAM_NULL) >> handle::kObjShift) & 0xf) == kStreamObj);
constexpr const char* kNoCuda = "not supported: weft was built without CUDA";

HandleTable<UserStream>& streams() {
  static HandleTable<UserStream> t{1};  // [0] reserved
  return t;
}

MPIX_Stream stream_handle(uint32_t index) { return handle::make(handle::direct, handle::Obj(kStreamObj), index); }

const UserStream* lookup_stream(MPIX_Stream h) {
  if (handle::kind_of(h) != handle::direct || uint32_t(handle::obj_of(h)) != kStreamObj) return nullptr;
  return streams().get(handle::index_of(h));
}

int mapped(MPI_Comm comm, Status s, const char* fn) {
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
}

// Runs an *_enqueue call (after the initialisation check) on a communicator that carries a GPU
// stream: `native` checks the arguments and sets the route (running the call on the stream
// where it can); the fallback and the host route end in `host`, the ordinary call (`what` it
// does from the host, for logs).
template <class Native, class Host>
int enqueue_call(const char* fn, MPI_Comm comm, const char* what, Native&& native, Host&& host) {
  WEFT_REQUIRE_INIT(fn);
  if (!cuda_state().compiled) return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  const Comm* c = lookup_comm(comm);
  if (!c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  const StreamComm* sc = find_stream_comm(*c);
  if (!sc || !sc->stream.gpu)
    return raise(comm, MPI_ERR_ARG, fn,
                 "communicator 0x%x carries no GPU stream: *_enqueue calls need a communicator made by "
                 "MPIX_Stream_comm_create from a stream with info type cudaStream_t%s",
                 unsigned(comm), sc ? " (this one has a stream without a GPU stream)" : "");
  StreamRoute route;
  bool host_call = false;
  const RelaxedCaptureScope relaxed(stream_capturing(sc->stream.cuda));
  int rc = native(*sc, *c, &route);
  if (rc == MPI_SUCCESS)
    rc = mapped(comm, stream_route_end(fn, what, *sc, route, g_state->coll_settings.require_fast_path, &host_call), fn);
  return rc == MPI_SUCCESS && host_call ? host() : rc;
}

// The point-to-point *_enqueue calls (nonblocking: request is set). Arguments the host call
// rejects, and MPI_PROC_NULL, go straight to it.
int send_enqueue(const char* fn, const char* what, const void* buf, int count, MPI_Datatype dt, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request = nullptr, bool nonblocking = false) {
  auto native = [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
    if (nonblocking && !request) return raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
    if (count < 0 || dest < 0 || dest >= c.size || tag < 0 || tag > tag::kMaxUserTag) return MPI_SUCCESS;
    const Datatype* d = nullptr;
    if (int rc = check_datatype(comm, fn, dt, &d)) return rc;
    Request* r = nullptr;
    const Status s = stream_send(fn, *g_state->transport, c, sc, stream_span(d, buf, size_t(count)), dest, tag,
                                 nonblocking ? &r : nullptr, route);
    if (r) *request = request_handle(r);
    return mapped(comm, s, fn);
  };
  return enqueue_call(fn, comm, what, native, [&] {
    return nonblocking ? PMPI_Isend(buf, count, dt, dest, tag, comm, request)
                       : PMPI_Send(buf, count, dt, dest, tag, comm);
  });
}

int recv_enqueue(const char* fn, const char* what, void* buf, int count, MPI_Datatype dt, int source, int tag,
                 MPI_Comm comm, MPI_Status* status, MPI_Request* request = nullptr, bool nonblocking = false) {
  auto native = [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
    if (nonblocking && !request) return raise(comm, MPI_ERR_REQUEST, fn, "request is NULL");
    if (count < 0 || source == MPI_PROC_NULL || (source != MPI_ANY_SOURCE && (source < 0 || source >= c.size)) ||
        (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag)))
      return MPI_SUCCESS;
    const Datatype* d = nullptr;
    if (int rc = check_datatype(comm, fn, dt, &d)) return rc;
    Request* r = nullptr;
    RequestStatus rs;
    const Status s = stream_recv(fn, *g_state->transport, c, sc, stream_span(d, buf, size_t(count)), source, tag,
                                 source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG, &rs, nonblocking ? &r : nullptr, route);
    if (r) *request = request_handle(r);
    if (!nonblocking && route->path == StreamPath::native && status) fill_status(status, rs);
    return mapped(comm, s, fn);
  };
  return enqueue_call(fn, comm, what, native, [&] {
    return nonblocking ? PMPI_Irecv(buf, count, dt, source, tag, comm, request)
                       : PMPI_Recv(buf, count, dt, source, tag, comm, status);
  });
}

// MPIX_Wait(all)_enqueue: every request must come from a communicator with a GPU stream.
// pt2pt completes the stream-native ones and synchronises the others' streams; then the host
// waits for the rest.
int wait_enqueue(const char* fn, int count, MPI_Request* requests, MPI_Status* statuses, bool single) {
  if (!cuda_state().compiled) return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  if (count > 0 && !requests) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "array_of_requests is NULL");
  std::vector<StreamWait> waits;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    Request* r = lookup_request(requests[i]);
    if (!r)
      return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x (index %d)", unsigned(requests[i]), i);
    const Comm* c = lookup_comm(r->owner);
    const StreamComm* sc = c ? find_stream_comm(*c) : nullptr;
    if (!sc || !sc->stream.gpu)
      return raise(c ? r->owner : MPI_COMM_NULL, MPI_ERR_REQUEST, fn,
                   "request 0x%x (index %d) does not come from MPIX_Isend_enqueue or MPIX_Irecv_enqueue on a "
                   "communicator with a GPU stream", unsigned(requests[i]), i);
    waits.push_back({i, r, r->owner, c, sc});
  }
  int first_error = MPI_SUCCESS;
  const RelaxedCaptureScope relaxed(
      std::any_of(waits.begin(), waits.end(), [](const StreamWait& w) { return stream_capturing(w.sc->stream.cuda); }));
  complete_stream_native(*g_state->transport, &waits, [&](const StreamWait& w) {
    const int rc = mapped(w.owner, w.status, fn);
    if (rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
    requests[w.index] = MPI_REQUEST_NULL;
  });
  const StreamWait* failed = nullptr;
  const Status s = sync_host_streams(fn, waits, g_state->coll_settings.require_fast_path, &failed);
  int rc = failed ? mapped(failed->owner, s, fn) : MPI_SUCCESS;
  const bool synchronised = rc == MPI_SUCCESS;  // the rest (and the null requests) from the host
  if (synchronised) rc = single ? PMPI_Wait(requests, statuses) : PMPI_Waitall(count, requests, statuses);
  for (const StreamWait& w : waits)
    if (w.native && statuses != MPI_STATUSES_IGNORE) fill_status(statuses + w.index, w.rs);
  return synchronised && first_error != MPI_SUCCESS ? first_error : rc;
}

// Allreduce (ranks 1) and Reduce_scatter_block (ranks: the communicator's size): checks the
// reduction of count x ranks elements, `count` of them each rank's result (`count_arg` names
// it), and its buffers. In place, the input is in recvbuf.
// root >= 0: a reduce to root (recvbuf significant there only; MPI_IN_PLACE at the root only).
int reduction_native(const char* fn, MPI_Comm comm, const StreamComm& sc, const Comm& c, StreamRoute* route,
                     const void* sendbuf, void* recvbuf, int count, const char* count_arg, size_t ranks,
                     MPI_Datatype dt, MPI_Op op, int root = -1) {
  if (int rc = check_count(fn, comm, count, count_arg)) return rc;
  if (root >= 0 && c.rank != root && sendbuf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE at rank %d, which is not the root (%d)", c.rank, root);
  const size_t total = size_t(count) * ranks;
  UserOpCall user;
  coll::Reduction red;
  ReductionLayout lay;
  if (int rc = make_reduction(fn, comm, op, dt, total, &user, &red, &lay)) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE, receives = root < 0 || c.rank == root;
  if (total > 0 && lay.type->predefined && ((receives && !recvbuf) || (!in_place && !sendbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with %s %d", count_arg, count);
  coll::gpu::StreamCall call = coll::gpu::stream_reduction(in_place ? recvbuf : sendbuf, recvbuf, lay.type,
                                                           size_t(count), ranks, lay.reduce_count, red);
  if (root >= 0) call = coll::gpu::stream_reduce(call, root, c.rank);
  return mapped(comm, coll::gpu::stream_collective(fn, sc, coll_context(c), call, route), fn);
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPIX_Info_set_hex(MPI_Info info, const char* key, const void* value, int value_size) {
  WEFT_ENTRY;
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
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Stream_create";
  WEFT_REQUIRE_INIT(fn);
  if (!stream) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "stream is NULL");
  auto obj = std::make_unique<UserStream>();
  if (info != MPI_INFO_NULL) {
    InfoEntries* e = lookup_info(info);
    if (!e) return raise(MPI_COMM_NULL, MPI_ERR_INFO, fn, "invalid info 0x%x (argument 'info')", unsigned(info));
    const std::string* type = e->find("type");
    const std::string* value = e->find("value");
    if (type && *type != "cudaStream_t")
      return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                   "stream type '%s' is not supported (info key 'type': only cudaStream_t)", type->c_str());
    if (type) {
      if (!cuda_state().compiled) return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
      std::vector<unsigned char> bytes;
      if (!value)
        return raise(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, fn,
                     "info type cudaStream_t needs the key 'value' (set it with MPIX_Info_set_hex)");
      if (!hex_decode(*value, &bytes, sizeof(void*)) || bytes.size() != sizeof(void*))
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
  const uint32_t index = streams().add(std::move(obj));
  *stream = stream_handle(index);
  return MPI_SUCCESS;
}

int PMPIX_Stream_free(MPIX_Stream* stream) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Stream_free";
  WEFT_REQUIRE_INIT(fn);
  if (!stream) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "stream is NULL");
  if (!lookup_stream(*stream))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "invalid or freed stream 0x%x (argument 'stream')",
                 unsigned(*stream));
  // Communicators made with the stream keep their own copy.
  streams().remove(handle::index_of(*stream));
  *stream = MPIX_STREAM_NULL;
  return MPI_SUCCESS;
}

int PMPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm* newcomm) {
  WEFT_ENTRY;
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
  const Comm& c = *lookup_comm(dup);
  auto sc = std::make_unique<StreamComm>();
  if (obj) sc->stream = UserStream{obj->gpu, obj->cuda};
  if (cuda_state().compiled) rc = mapped(dup, coll::gpu::prepare_stream_comm(coll_context(c), sc.get()), fn);
  if (rc != MPI_SUCCESS) {
    (void)PMPI_Comm_free(&dup);
    return rc;
  }
  if (obj) add_stream_comm(c, std::move(sc));  // released by MPI_Comm_free
  *newcomm = dup;
  return MPI_SUCCESS;
}

int PMPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  WEFT_ENTRY;
  return send_enqueue("MPIX_Send_enqueue", "sends", buf, count, datatype, dest, tag, comm);
}

int PMPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Status* status) {
  WEFT_ENTRY;
  return recv_enqueue("MPIX_Recv_enqueue", "receives", buf, count, datatype, source, tag, comm, status);
}

int PMPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  WEFT_ENTRY;
  return send_enqueue("MPIX_Isend_enqueue", "starts a non-blocking send", buf, count, datatype, dest, tag, comm,
                      request, true);
}

int PMPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                        MPI_Request* request) {
  WEFT_ENTRY;
  return recv_enqueue("MPIX_Irecv_enqueue", "starts a non-blocking receive", buf, count, datatype, source, tag,
                      comm, nullptr, request, true);
}

int PMPIX_Wait_enqueue(MPI_Request* request, MPI_Status* status) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Wait_enqueue";
  WEFT_REQUIRE_INIT(fn);
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "request is NULL");
  return wait_enqueue(fn, 1, request, status, true);
}

int PMPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[], MPI_Status* array_of_statuses) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Waitall_enqueue";
  WEFT_REQUIRE_INIT(fn);
  return wait_enqueue(fn, count, array_of_requests, array_of_statuses, false);
}

// The collective *_enqueue calls: stream-native when coll/gpu's shared check passes (every rank
// decides alike), else the host call after the fallback's stream synchronisation.

int PMPIX_Allreduce_enqueue(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Allreduce_enqueue";
  return enqueue_call(
      fn, comm, "reduces with MPI_Allreduce",
      [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
        return reduction_native(fn, comm, sc, c, route, sendbuf, recvbuf, count, "count", 1, datatype, op);
      },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); });
}

int PMPIX_Bcast_enqueue(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Bcast_enqueue";
  return enqueue_call(
      fn, comm, "broadcasts with MPI_Bcast",
      [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
        const Datatype* d = nullptr;
        int rc = check_count(fn, comm, count, "count");
        if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, datatype, &d, "datatype");
        if (rc == MPI_SUCCESS) rc = check_root(fn, comm, c, root);
        if (rc != MPI_SUCCESS) return rc;
        if (!buffer && count > 0 && d->predefined)
          return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
        const coll::gpu::StreamCall call = coll::gpu::stream_bcast(d, buffer, size_t(count), root);
        return mapped(comm, coll::gpu::stream_collective(fn, sc, coll_context(c), call, route), fn);
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

int PMPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Allgather_enqueue";
  return enqueue_call(
      fn, comm, "gathers with MPI_Allgather",
      [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
        const bool in_place = sendbuf == MPI_IN_PLACE;
        const Datatype *rd = nullptr, *sd = nullptr;
        int rc = check_count(fn, comm, recvcount, "recvcount");
        if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, recvtype, &rd, "recvtype");
        if (rc == MPI_SUCCESS && !in_place) rc = check_count(fn, comm, sendcount, "sendcount");
        if (rc == MPI_SUCCESS && !in_place) rc = check_datatype(comm, fn, sendtype, &sd, "sendtype");
        if (rc != MPI_SUCCESS) return rc;
        const size_t bytes = type_packed_size(rd, size_t(recvcount));
        if (!in_place && type_packed_size(sd, size_t(sendcount)) != bytes)
          return raise(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends %zu bytes but its receive block holds %zu", c.rank,
                       type_packed_size(sd, size_t(sendcount)), bytes);
        if (bytes > 0 && ((!recvbuf && rd->predefined) || (!in_place && !sendbuf && sd->predefined)))
          return raise(comm, MPI_ERR_BUFFER, fn, "NULL %s with a non-zero count", recvbuf ? "sendbuf" : "recvbuf");
        const coll::gpu::StreamCall call =
            coll::gpu::stream_allgather(rd, recvbuf, size_t(recvcount), sd, sendbuf, size_t(sendcount), c);
        return mapped(comm, coll::gpu::stream_collective(fn, sc, coll_context(c), call, route), fn);
      },
      [&] { return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); });
}

int PMPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Reduce_scatter_block_enqueue";
  return enqueue_call(
      fn, comm, "reduces with MPI_Reduce_scatter_block",
      [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
        return reduction_native(fn, comm, sc, c, route, sendbuf, recvbuf, recvcount, "recvcount", size_t(c.size),
                                datatype, op);
      },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); });
}

int PMPIX_Reduce_scatter_enqueue(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Reduce_scatter_enqueue";
  return enqueue_call(
      fn, comm, "reduces with MPI_Reduce_scatter",
      [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
        if (!recvcounts) return raise(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
        for (int q = 0; q < c.size; ++q)
          if (int rc = check_count(fn, comm, recvcounts[q], "recvcounts[]")) return rc;
        // Equal shares run as the block form; others take the fallback (every rank sees the same
        // counts, so every rank takes the same route).
        for (int q = 1; q < c.size; ++q) {
          if (recvcounts[q] != recvcounts[0]) {
            route->path = StreamPath::fallback;
            route->why = "unequal recvcounts (stream-native for equal shares only)";
            return MPI_SUCCESS;
          }
        }
        return reduction_native(fn, comm, sc, c, route, sendbuf, recvbuf, recvcounts[0], "recvcounts[0]",
                                size_t(c.size), datatype, op);
      },
      [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); });
}

int PMPIX_Reduce_enqueue(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                         MPI_Comm comm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Reduce_enqueue";
  return enqueue_call(
      fn, comm, "reduces with MPI_Reduce",
      [&](const StreamComm& sc, const Comm& c, StreamRoute* route) {
        if (int rc = check_root(fn, comm, c, root)) return rc;
        return reduction_native(fn, comm, sc, c, route, sendbuf, recvbuf, count, "count", 1, datatype, op, root);
      },
      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); });
}

int PMPIX_Comm_register_buffer(MPI_Comm comm, const void* buf, MPI_Aint size, void** handle) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Comm_register_buffer";
  WEFT_REQUIRE_INIT(fn);
  CommEntry* e;
  if (int rc = comm_entry_of(fn, comm, &e)) return rc;
  if (!cuda_state().compiled) return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", kNoCuda);
  if (handle) *handle = nullptr;
  // Bad arguments still take part (as a registration of 0 bytes), so the peers' call fails too
  // instead of waiting for this rank.
  const size_t bytes = handle && size > 0 ? size_t(size) : 0;
  uint64_t token = 0;
  const Status s = coll::gpu::register_buffer(coll_context(e->comm), buf, bytes, &token);
  if (!handle) return raise(comm, MPI_ERR_ARG, fn, "handle is NULL");
  if (size <= 0) return raise(comm, MPI_ERR_ARG, fn, "size %lld: a registration needs at least one byte", (long long)size);
  if (s != Status::ok) return mapped(comm, s, fn);
  *handle = reinterpret_cast<void*>(uintptr_t(token));
  return MPI_SUCCESS;
}

int PMPIX_Comm_deregister_buffer(MPI_Comm comm, void* handle) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Comm_deregister_buffer";
  WEFT_REQUIRE_INIT(fn);
  CommEntry* e;
  if (int rc = comm_entry_of(fn, comm, &e)) return rc;
  return mapped(comm, coll::gpu::deregister_buffer(e->comm, uint64_t(reinterpret_cast<uintptr_t>(handle))), fn);
}

}  // extern "C"

WEFT_PMPIX_ALIASES(Comm_register_buffer, Comm_deregister_buffer, Info_set_hex, Stream_create, Stream_free, Stream_comm_create, Send_enqueue, Recv_enqueue,
                   Isend_enqueue, Irecv_enqueue, Wait_enqueue, Waitall_enqueue, Allreduce_enqueue, Bcast_enqueue,
                   Allgather_enqueue, Reduce_scatter_block_enqueue, Reduce_scatter_enqueue, Reduce_enqueue)
