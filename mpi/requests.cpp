// Completion (wait/test families), request management, probe and matched receives.
#include <cstring>

#include "datatype_api.h"
#include "pt2pt/tag.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "state.h"

namespace weft::mpi {

namespace {

// An inactive persistent request or MPI_REQUEST_NULL: completes at once with an empty status.
bool is_inert(MPI_Request h, Request* r) { return h == MPI_REQUEST_NULL || (r && r->persistent && !r->active); }

// Hands a completed request's result to the user and frees or deactivates it.
int retire(MPI_Request* h, Request* r, MPI_Status* status) {
  run_finish(r);
  fill_status(status, r->status);
  Status err = r->status.error;
  int owner = r->owner;
  if (r->persistent) {
    r->active = false;
  } else {
    g_state->requests.release(r);
    *h = MPI_REQUEST_NULL;
  }
  if (err != Status::ok) {
    int code = make_error_code(error_class_of(err), error_detail().empty() ? status_name(err) : error_detail());
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = code;
    return raise_status(owner ? owner : MPI_COMM_WORLD, err, "request completion");
  }
  return MPI_SUCCESS;
}

int bad_request(const char* fn, MPI_Request h) {
  return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x", unsigned(h));
}

// Resolves an array entry: false for an invalid handle.
bool resolve(MPI_Request h, Request** r) {
  *r = h == MPI_REQUEST_NULL ? nullptr : lookup_request(h);
  return h == MPI_REQUEST_NULL || *r != nullptr;
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// Completes every finished request in [0, count) into statuses; returns MPI_ERR_IN_STATUS if
// any failed (with per-request codes in MPI_ERROR).
int retire_all(int count, MPI_Request reqs[], MPI_Status* statuses) {
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    Request* r;
    (void)resolve(reqs[i], &r);
    MPI_Status* st = status_at(statuses, i);
    if (is_inert(reqs[i], r)) {
      set_status_empty(st);
      if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_SUCCESS;
      continue;
    }
    run_finish(r);
    fill_status(st, r->status);
    Status err = r->status.error;
    if (st != MPI_STATUS_IGNORE)
      st->MPI_ERROR = err == Status::ok ? MPI_SUCCESS : make_error_code(error_class_of(err), error_detail());
    failed |= err != Status::ok;
    if (r->persistent) r->active = false;
    else {
      g_state->requests.release(r);
      reqs[i] = MPI_REQUEST_NULL;
    }
  }
  if (failed) return raise(MPI_COMM_NULL, MPI_ERR_IN_STATUS, "multiple completion", "a request failed; see the statuses");
  return MPI_SUCCESS;
}

int check_array(const char* fn, int count, MPI_Request reqs[]) {
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  if (count > 0 && !reqs) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "array_of_requests is NULL");
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (!resolve(reqs[i], &r)) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x at index %d", unsigned(reqs[i]), i);
  }
  return MPI_SUCCESS;
}

// Finished or inert.
bool done(MPI_Request h) {
  Request* r = h == MPI_REQUEST_NULL ? nullptr : lookup_request(h);
  return is_inert(h, r) || r->complete;
}

// Completes the ones that are done among the active, writing their indices.
int collect_some(int count, MPI_Request reqs[], int* outcount, int indices[], MPI_Status* statuses) {
  int n = 0;
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    Request* r;
    (void)resolve(reqs[i], &r);
    if (is_inert(reqs[i], r) || !r->complete) continue;
    MPI_Status* st = status_at(statuses, n);
    run_finish(r);
    fill_status(st, r->status);
    Status err = r->status.error;
    if (st != MPI_STATUS_IGNORE)
      st->MPI_ERROR = err == Status::ok ? MPI_SUCCESS : make_error_code(error_class_of(err), error_detail());
    failed |= err != Status::ok;
    if (r->persistent) r->active = false;
    else {
      g_state->requests.release(r);
      reqs[i] = MPI_REQUEST_NULL;
    }
    indices[n++] = i;
  }
  *outcount = n;
  if (failed) return raise(MPI_COMM_NULL, MPI_ERR_IN_STATUS, "MPI_Waitsome/Testsome", "a request failed; see the statuses");
  return MPI_SUCCESS;
}

bool all_inert(int count, MPI_Request reqs[]) {
  for (int i = 0; i < count; ++i) {
    Request* r;
    (void)resolve(reqs[i], &r);
    if (!is_inert(reqs[i], r)) return false;
  }
  return true;
}

// Fails the incomplete requests of the set whose peer, or a member of whose communicator, is
// known to have failed (failure is contagious within a communicator); true if any was.
bool fail_requests_on_failures(int count, MPI_Request reqs[]) {
  g_state->boot->poll_local_liveness();
  if (g_state->boot->failures_seen() == 0) [[likely]] return false;
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    Request* r = reqs[i] == MPI_REQUEST_NULL ? nullptr : lookup_request(reqs[i]);
    if (r && !is_inert(reqs[i], r) && !r->complete && g_state->transport->check_failure(r, failure_scope(r)))
      failed = true;
  }
  return failed;
}

// Waits until an active request of the set completes (or fails).
void wait_any_of(int count, MPI_Request reqs[]) {
  g_state->progress.wait([&] {
    for (int i = 0; i < count; ++i) {
      Request* r = reqs[i] == MPI_REQUEST_NULL ? nullptr : lookup_request(reqs[i]);
      if (!is_inert(reqs[i], r) && r->complete) return true;
    }
    return fail_requests_on_failures(count, reqs);
  });
}

struct ProbeArgs {
  Comm* comm = nullptr;
  uint64_t tag = 0, mask = 0;
  bool proc_null = false;
};

int check_probe(const char* fn, int source, int tag, MPI_Comm comm, ProbeArgs* a) {
  a->comm = lookup_comm(comm);
  if (!a->comm) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= a->comm->size))
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'source'; %s has %d ranks)", source,
                 a->comm->label().c_str(), a->comm->size);
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag))
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag')", tag);
  a->proc_null = source == MPI_PROC_NULL;
  bool any_src = source == MPI_ANY_SOURCE, any_tag = tag == MPI_ANY_TAG;
  a->tag = tag::make(a->comm->pt2pt_context(), any_src ? 0u : uint32_t(source), any_tag ? 0u : uint32_t(tag));
  a->mask = tag::recv_mask(any_src, any_tag);
  return MPI_SUCCESS;
}

void fill_probe_status(MPI_Status* status, const MatchInfo& info) {
  RequestStatus rs;
  rs.source = info.source;
  rs.tag = info.tag;
  rs.bytes = info.bytes;
  fill_status(status, rs);
}

// A matched message (MPI_Mprobe) is a receive request that holds UCX's message handle.
MPI_Message make_message(const MatchInfo& info, void* msg, MPI_Comm comm) {
  Request* r = g_state->requests.alloc(RequestKind::recv);
  r->transport_handle = msg;
  r->status.source = info.source;
  r->status.tag = info.tag;
  r->status.bytes = info.bytes;
  r->owner = comm;
  return request_handle(r);
}

// A blocking probe must not wait forever: true (with the error detail set) once a member of
// the communicator is known to have failed (the source, or another: failure is contagious).
bool peer_lost(const Comm& c, int source) {
  Bootstrap& b = *g_state->boot;
  b.poll_local_liveness();
  if (b.failures_seen() == 0) return false;
  if (source != MPI_ANY_SOURCE && b.peer_failed(c.world_rank(source))) {
    set_error_detail(Transport::failure_detail(&c, c.world_rank(source)) + " while being probed");
    return true;
  }
  const int dead = g_state->transport->failed_member(c);
  if (dead < 0) return false;
  set_error_detail(Transport::failure_detail(&c, c.world_rank(dead)) + " while probing: every operation on " +
                   c.label() + " fails");
  return true;
}

// The probe family. flag == nullptr: block until a match (or the source dies); message !=
// nullptr: take the matched message out of matching (MPI_Mprobe / MPI_Improbe).
int probe_common(const char* fn, int source, int tag, MPI_Comm comm, int* flag,
                 MPI_Message* message, MPI_Status* status) {
  ProbeArgs a;
  int rc = check_probe(fn, source, tag, comm, &a);
  if (rc != MPI_SUCCESS) return rc;
  if (a.proc_null) {
    if (flag) *flag = 1;
    if (message) *message = MPI_MESSAGE_NO_PROC;
    set_status_proc_null(status);
    return MPI_SUCCESS;
  }
  MatchInfo info;
  void* msg = nullptr;
  const bool remove = message != nullptr;
  bool found = false;
  if (flag) {
    found = g_state->transport->probe(a.tag, a.mask, remove, &info, &msg);
    *flag = found;
  } else {
    g_state->progress.wait([&] {
      found = g_state->transport->probe(a.tag, a.mask, remove, &info, &msg);
      return found || peer_lost(*a.comm, source);
    });
    if (!found) return raise(comm, MPIX_ERR_PROC_FAILED, fn, "%s", error_detail().c_str());
  }
  if (found) {
    if (message) *message = make_message(info, msg, comm);
    fill_probe_status(status, info);
  }
  return MPI_SUCCESS;
}

size_t status_bytes(const MPI_Status* st) {
  return size_t(uint32_t(st->count_lo)) | (size_t(uint32_t(st->count_hi_and_cancelled) >> 1) << 32);
}

}  // namespace
}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Wait");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
  Request* r;
  if (!resolve(*request, &r)) return bad_request("MPI_Wait", *request);
  if (is_inert(*request, r)) {
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  if (!r->complete) g_state->transport->wait(r, failure_scope(r));
  return retire(request, r, status);
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Test");
  if (!request || !flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Test", "request or flag is NULL");
  Request* r;
  if (!resolve(*request, &r)) return bad_request("MPI_Test", *request);
  if (is_inert(*request, r)) {
    *flag = 1;
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  if (!r->complete) {
    g_state->progress.poll();
    (void)fail_requests_on_failures(1, request);
  }
  *flag = r->complete;
  return r->complete ? retire(request, r, status) : MPI_SUCCESS;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  WEFT_REQUIRE_INIT("MPI_Waitall");
  int rc = check_array("MPI_Waitall", count, reqs);
  if (rc != MPI_SUCCESS) return rc;
  for (int i = 0; i < count; ++i) {
    Request* r;
    (void)resolve(reqs[i], &r);
    if (!is_inert(reqs[i], r) && !r->complete) g_state->transport->wait(r, failure_scope(r));
  }
  return retire_all(count, reqs, statuses);
}

int PMPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  WEFT_REQUIRE_INIT("MPI_Testall");
  if (!flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
  int rc = check_array("MPI_Testall", count, reqs);
  if (rc != MPI_SUCCESS) return rc;
  g_state->progress.poll();
  (void)fail_requests_on_failures(count, reqs);
  for (int i = 0; i < count; ++i) {
    if (!done(reqs[i])) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return retire_all(count, reqs, statuses);
}

int PMPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Waitany");
  if (!index) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
  int rc = check_array("MPI_Waitany", count, reqs);
  if (rc != MPI_SUCCESS) return rc;
  if (all_inert(count, reqs)) {
    *index = MPI_UNDEFINED;
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  for (;;) {
    for (int i = 0; i < count; ++i) {
      Request* r;
      (void)resolve(reqs[i], &r);
      if (!is_inert(reqs[i], r) && r->complete) {
        *index = i;
        return retire(&reqs[i], r, status);
      }
    }
    wait_any_of(count, reqs);
  }
}

int PMPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Testany");
  if (!index || !flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testany", "index or flag is NULL");
  int rc = check_array("MPI_Testany", count, reqs);
  if (rc != MPI_SUCCESS) return rc;
  if (all_inert(count, reqs)) {
    *flag = 1;
    *index = MPI_UNDEFINED;
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  g_state->progress.poll();
  (void)fail_requests_on_failures(count, reqs);
  for (int i = 0; i < count; ++i) {
    Request* r;
    (void)resolve(reqs[i], &r);
    if (!is_inert(reqs[i], r) && r->complete) {
      *flag = 1;
      *index = i;
      return retire(&reqs[i], r, status);
    }
  }
  *flag = 0;
  *index = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  WEFT_REQUIRE_INIT("MPI_Waitsome");
  if (!outcount || (incount > 0 && !indices)) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Waitsome", "outcount or indices is NULL");
  int rc = check_array("MPI_Waitsome", incount, reqs);
  if (rc != MPI_SUCCESS) return rc;
  if (all_inert(incount, reqs)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  for (;;) {
    rc = collect_some(incount, reqs, outcount, indices, statuses);
    if (*outcount > 0 || rc != MPI_SUCCESS) return rc;
    wait_any_of(incount, reqs);
  }
}

int PMPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  WEFT_REQUIRE_INIT("MPI_Testsome");
  if (!outcount || (incount > 0 && !indices)) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testsome", "outcount or indices is NULL");
  int rc = check_array("MPI_Testsome", incount, reqs);
  if (rc != MPI_SUCCESS) return rc;
  if (all_inert(incount, reqs)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  g_state->progress.poll();
  (void)fail_requests_on_failures(incount, reqs);
  return collect_some(incount, reqs, outcount, indices, statuses);
}

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Request_get_status");
  if (!flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
  Request* r;
  if (!resolve(request, &r)) return bad_request("MPI_Request_get_status", request);
  if (is_inert(request, r)) {
    *flag = 1;
    set_status_empty(status);
    return MPI_SUCCESS;
  }
  if (!r->complete) {
    g_state->progress.poll();
    (void)fail_requests_on_failures(1, &request);
  }
  *flag = r->complete;
  if (r->complete) {
    run_finish(r);  // the data is the user's once the status says complete
    fill_status(status, r->status);
  }
  return MPI_SUCCESS;
}

int PMPI_Request_free(MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Request_free");
  if (!request || *request == MPI_REQUEST_NULL)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Request_free", "request is MPI_REQUEST_NULL");
  Request* r = lookup_request(*request);
  if (!r) return bad_request("MPI_Request_free", *request);
  bool in_flight = !r->complete && (!r->persistent || r->active);
  if (in_flight) {
    r->user_freed = true;
    g_state->orphans.push_back(r);
  } else {
    g_state->requests.release(r);
  }
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Cancel");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Cancel", "request is NULL");
  Request* r = lookup_request(*request);
  if (!r) return bad_request("MPI_Cancel", *request);
  // Sends cannot be recalled once handed to UCX: the standard lets cancellation of a send fail
  // (MPI_Test_cancelled then reports false). Receives are cancelled if still unmatched.
  if (r->kind == RequestKind::recv && !r->complete) {
    Status s = g_state->transport->cancel(r);
    if (s != Status::ok) return raise_status(MPI_COMM_NULL, s, "MPI_Cancel");
  }
  return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Probe");
  return probe_common("MPI_Probe", source, tag, comm, nullptr, nullptr, status);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Iprobe");
  if (!flag) return raise(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
  return probe_common("MPI_Iprobe", source, tag, comm, flag, nullptr, status);
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Mprobe");
  if (!message) return raise(comm, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
  return probe_common("MPI_Mprobe", source, tag, comm, nullptr, message, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  WEFT_REQUIRE_INIT("MPI_Improbe");
  if (!flag || !message) return raise(comm, MPI_ERR_ARG, "MPI_Improbe", "flag or message is NULL");
  return probe_common("MPI_Improbe", source, tag, comm, flag, message, status);
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Imrecv");
  if (!message || !request) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Imrecv", "message or request is NULL");
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Imrecv", "negative count %d", count);
  const Datatype* d;
  if (int rc = check_datatype(MPI_COMM_NULL, "MPI_Imrecv", dt, &d)) return rc;
  if (*message == MPI_MESSAGE_NO_PROC) {
    Request* r = g_state->requests.alloc(RequestKind::recv);
    r->complete = true;
    r->status.source = MPI_PROC_NULL;
    r->status.tag = MPI_ANY_TAG;
    *request = request_handle(r);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  Request* r = lookup_request(*message);
  if (!r || !r->transport_handle || r->complete)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Imrecv", "invalid message 0x%x", unsigned(*message));
  size_t bytes = packed_size(d, size_t(count));
  if (!buf && bytes && d->predefined) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, "MPI_Imrecv", "NULL buffer with count %d", count);
  const MemInfo kind = bytes && memkind_device_possible() ? memkind_query(buf) : MemInfo{};
  if (kind.kind == MemKind::unsupported_device) return raise_unsupported_device(r->owner, "MPI_Imrecv", buf);
  void* msg = r->transport_handle;
  r->transport_handle = nullptr;
  ptrdiff_t offset = 0;
  void* target;
  const bool contiguous = contiguous_span(d, size_t(count), &offset);
  const bool device = !host_accessible(kind);
  if (device && !contiguous)
    return raise(r->owner, MPI_ERR_TYPE, "MPI_Imrecv", "non-contiguous datatypes on GPU device buffers are not supported yet");
  if (device && g_state->transport->device_direct(-1)) {  // CUDA IPC, or pipelined over UCX
    target = static_cast<char*>(buf) + offset;
    r->device_buffer = true;
  } else if (device) {  // received into host memory, copied to the device when the user completes it
    r->owned_buffer = staging_buffer(bytes);
    target = r->owned_buffer.get();
    char* dst = static_cast<char*>(buf) + offset;
    r->finish = [dst](Request& q) {
      if (q.status.error != Status::ok && q.status.error != Status::truncated) return;
      if (Status s = memkind_copy(dst, q.owned_buffer.get(), q.status.bytes); s != Status::ok) q.status.error = s;
    };
  } else if (contiguous) {
    target = static_cast<char*>(buf) + offset;
  } else {  // received into a staging buffer, unpacked when the user completes the request
    r->owned_buffer = staging_buffer(bytes);
    target = r->owned_buffer.get();
    retain(d);
    size_t n = size_t(count);
    r->finish = [d, buf, n](Request& q) {
      if (q.status.error == Status::ok || q.status.error == Status::truncated)
        unpack(d, q.owned_buffer.get(), q.status.bytes, buf, n);
      release(d);
    };
  }
  Status s = g_state->transport->mrecv(target, bytes, msg, r);
  if (s != Status::ok) return raise_status(r->owner, s, "MPI_Imrecv");
  *request = request_handle(r);
  *message = MPI_MESSAGE_NULL;
  return MPI_SUCCESS;
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status) {
  MPI_Request req;
  int rc = PMPI_Imrecv(buf, count, dt, message, &req);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Wait(&req, status);
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype dt, int* count) {
  if (!status || status == MPI_STATUS_IGNORE || !count)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_count", "status or count is NULL");
  const Datatype* d = lookup_datatype(dt);
  if (!d) return raise(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype 0x%x", unsigned(dt));
  long long n = count_elements(d, status_bytes(status));  // packed bytes per element
  *count = n < 0 || n > INT32_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype dt, int* count) {
  if (!count) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_elements", "count is NULL");
  MPI_Count n = 0;
  int rc = PMPI_Get_elements_x(status, dt, &n);
  if (rc != MPI_SUCCESS) return rc;
  *count = n == MPI_UNDEFINED || n > INT32_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIAS(Wait)
WEFT_PMPI_ALIAS(Test)
WEFT_PMPI_ALIAS(Waitall)
WEFT_PMPI_ALIAS(Testall)
WEFT_PMPI_ALIAS(Waitany)
WEFT_PMPI_ALIAS(Testany)
WEFT_PMPI_ALIAS(Waitsome)
WEFT_PMPI_ALIAS(Testsome)
WEFT_PMPI_ALIAS(Request_get_status)
WEFT_PMPI_ALIAS(Request_free)
WEFT_PMPI_ALIAS(Cancel)
WEFT_PMPI_ALIAS(Probe)
WEFT_PMPI_ALIAS(Iprobe)
WEFT_PMPI_ALIAS(Mprobe)
WEFT_PMPI_ALIAS(Improbe)
WEFT_PMPI_ALIAS(Imrecv)
WEFT_PMPI_ALIAS(Mrecv)
WEFT_PMPI_ALIAS(Get_count)
WEFT_PMPI_ALIAS(Get_elements)

extern "C" {

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  if (!status || status == MPI_STATUS_IGNORE)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL or MPI_STATUS_IGNORE");
  status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
  return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (!status || status == MPI_STATUS_IGNORE || !flag)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "status or flag is NULL");
  *flag = status->count_hi_and_cancelled & 1;
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIAS(Status_set_cancelled)
WEFT_PMPI_ALIAS(Test_cancelled)
