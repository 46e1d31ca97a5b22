// Completion (wait/test families), request management, probe and matched receives: the
// bindings over pt2pt/completion.h and pt2pt/p2p.h.
#include <cstring>

#include "pt2pt/completion.h"
#include "runtime/profiler.h"
#include "pt2pt/process_setup.h"
#include "pt2pt/tag.h"
#include "runtime/typemap.h"
#include "pt2pt_call.h"
#include "state.h"

namespace weft::mpi {

namespace {

// An inactive persistent request or MPI_REQUEST_NULL: completes at once with an empty status.
bool is_inert(MPI_Request h, Request* r) { return h == MPI_REQUEST_NULL || (r && r->persistent && !r->active); }

// An inert request's completion: *flag (if given) true, the status empty.
int inert_done(MPI_Status* status, int* flag = nullptr) {
  if (flag) *flag = 1;
  set_status_empty(status);
  return MPI_SUCCESS;
}

// Hands a completed request's result to *st and frees or deactivates it; the error, if any.
Status complete_into(MPI_Request* h, Request* r, MPI_Status* st) {
  RequestStatus rs;
  if (retire_request(g_state->requests, r, &rs)) *h = MPI_REQUEST_NULL;
  fill_status(st, rs);
  return rs.error;
}

// One request to the user: its error raised on its communicator.
int retire(MPI_Request* h, Request* r, MPI_Status* status) {
  if (r->kind == RequestKind::generalized) {
    const int code = grequest_retire(h, r, status);
    if (code == MPI_SUCCESS) return MPI_SUCCESS;
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = code;
    return raise_code(MPI_COMM_NULL, code, "request completion");
  }
  const int owner = r->owner;
  Status err = complete_into(h, r, status);
  if (err != Status::ok) {
    int code = make_error_code(error_class_of(err), error_detail().empty() ? status_name(err) : error_detail());
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = code;
    return raise_status(owner ? owner : MPI_COMM_WORLD, err, "request completion");
  }
  return MPI_SUCCESS;
}

// A request whose completion is its status alone: not generalized or persistent, no finish step.
inline bool is_plain(const Request* r) {
  return r->kind != RequestKind::generalized && !r->persistent && !r->finish;
}

// One request of a set: its error in its status only. True if it failed.
bool retire_in_set(MPI_Request* h, Request* r, MPI_Status* st) {
  if (r->kind == RequestKind::generalized) {
    const int code = grequest_retire(h, r, st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = code;
    return code != MPI_SUCCESS;
  }
  Status err = complete_into(h, r, st);
  if (st != MPI_STATUS_IGNORE)
    st->MPI_ERROR = err == Status::ok ? MPI_SUCCESS : make_error_code(error_class_of(err), error_detail());
  return err != Status::ok;
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

// The count and the array of a multiple-completion call (before its RequestSet is made).
int check_count(const char* fn, int count, MPI_Request reqs[]) {
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  if (count > 0 && !reqs) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "array_of_requests is NULL");
  return MPI_SUCCESS;
}

// Checks the array's handles and fills *set with its active requests (see RequestSet).
int check_array(const char* fn, int count, MPI_Request reqs[], RequestSet* set) {
  for (int i = 0; i < count; ++i) {
    Request* r;
    if (!resolve(reqs[i], &r)) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request 0x%x at index %d", unsigned(reqs[i]), i);
    if (!is_inert(reqs[i], r)) (*set)[size_t(i)] = r;
  }
  return MPI_SUCCESS;
}

// Completes every request of the set into statuses; MPI_ERR_IN_STATUS if any failed.
int retire_all(int count, MPI_Request reqs[], const RequestSet& active, MPI_Status* statuses) {
  bool failed = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = status_at(statuses, i);
    if (Request* r = active[size_t(i)]) {
      // The usual request (a send or receive that worked, with no step left and nothing
      // owned) straight back to the pool.
      if (is_plain(r) && r->status.error == Status::ok) [[likely]] {
        fill_status(st, r->status);
        if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_SUCCESS;
        g_state->requests.release(r);
        reqs[i] = MPI_REQUEST_NULL;
        continue;
      }
      failed |= retire_in_set(&reqs[i], r, st);
    } else {
      set_status_empty(st);
    }
  }
  if (failed) return raise(MPI_COMM_NULL, MPI_ERR_IN_STATUS, "multiple completion", "a request failed; see the statuses");
  return MPI_SUCCESS;
}

// The probe family. flag == nullptr: block until a match (or the source dies); message !=
// nullptr: take the matched message out of matching (MPI_Mprobe / MPI_Improbe).
int probe_common(const char* fn, int source, int tag, MPI_Comm comm, int* flag,
                 MPI_Message* message, MPI_Status* status) {
  Comm* c = lookup_comm(comm);
  if (!c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL && (source < 0 || source >= c->peer_count()))
    return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'source'; %s has %d ranks)", source,
                 c->label().c_str(), c->peer_count());
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > tag::kMaxUserTag))
    return raise(comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag')", tag);
  if (source == MPI_PROC_NULL) {
    if (flag) *flag = 1;
    if (message) *message = MPI_MESSAGE_NO_PROC;
    set_status_proc_null(status);
    return MPI_SUCCESS;
  }
  RequestStatus rs;
  Request* matched = nullptr;
  const bool found = probe_message(*g_state->transport, g_state->requests, *c, comm,
                                   source == MPI_ANY_SOURCE ? -1 : source, tag == MPI_ANY_TAG ? -1 : tag,
                                   flag == nullptr, &rs, message ? &matched : nullptr);
  if (flag) *flag = found;
  else if (!found) return raise(comm, MPIX_ERR_PROC_FAILED, fn, "%s", error_detail().c_str());
  if (found) {
    if (message) *message = request_handle(matched);
    fill_status(status, rs);
  }
  return MPI_SUCCESS;
}

// MPI_Waitany and MPI_Testany; flag == nullptr: wait.
int any_of(const char* fn, int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (int rc = check_count(fn, count, reqs)) return rc;
  RequestSet active{size_t(count)};
  if (int rc = check_array(fn, count, reqs, &active)) return rc;
  *index = MPI_UNDEFINED;
  if (flag) *flag = 1;
  if (active.none_active()) return inert_done(status);
  const int i = any_complete(*g_state->transport, active, failure_scope, !flag);
  if (i < 0) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *index = i;
  return retire(&reqs[i], active[size_t(i)], status);
}

// MPI_Waitsome and MPI_Testsome.
int some_of(const char* fn, bool wait, int incount, MPI_Request reqs[], int* outcount, int indices[],
            MPI_Status statuses[]) {
  if (!outcount || (incount > 0 && !indices)) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "outcount or indices is NULL");
  if (int rc = check_count(fn, incount, reqs)) return rc;
  RequestSet active{size_t(incount)};
  if (int rc = check_array(fn, incount, reqs, &active)) return rc;
  if (active.none_active()) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  const int n = some_complete(*g_state->transport, active, failure_scope, wait, indices);
  bool failed = false;
  for (int k = 0; k < n; ++k)
    failed |= retire_in_set(&reqs[indices[k]], active[size_t(indices[k])], status_at(statuses, k));
  *outcount = n;
  if (failed) return raise(MPI_COMM_NULL, MPI_ERR_IN_STATUS, "MPI_Waitsome/Testsome", "a request failed; see the statuses");
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Wait");
  profiler::ApiScope api("MPI_Wait");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
  Request* r;
  if (!resolve(*request, &r)) return bad_request("MPI_Wait", *request);
  if (is_inert(*request, r)) return inert_done(status);
  if (!r->complete) g_state->transport->wait(r, failure_scope(r));
  return retire(request, r, status);
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Test");
  profiler::ApiScope api("MPI_Test");
  if (!request || !flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Test", "request or flag is NULL");
  Request* r;
  if (!resolve(*request, &r)) return bad_request("MPI_Test", *request);
  if (is_inert(*request, r)) return inert_done(status, flag);
  if (!r->complete) poll_once(*g_state->transport, &r, 1, failure_scope);
  *flag = r->complete;
  return r->complete ? retire(request, r, status) : MPI_SUCCESS;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Waitall");
  profiler::ApiScope api("MPI_Waitall");
  if (int rc = check_count("MPI_Waitall", count, reqs)) return rc;
  RequestSet active{size_t(count)};
  if (int rc = check_array("MPI_Waitall", count, reqs, &active)) return rc;
  wait_all(*g_state->transport, active, failure_scope);
  return retire_all(count, reqs, active, statuses);
}

int PMPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Testall");
  profiler::ApiScope api("MPI_Testall");
  if (!flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
  if (int rc = check_count("MPI_Testall", count, reqs)) return rc;
  RequestSet active{size_t(count)};
  if (int rc = check_array("MPI_Testall", count, reqs, &active)) return rc;
  poll_once(*g_state->transport, active.data(), active.size(), failure_scope);
  *flag = active.all_complete();
  return *flag ? retire_all(count, reqs, active, statuses) : MPI_SUCCESS;
}

int PMPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Waitany");
  profiler::ApiScope api("MPI_Waitany");
  if (!index) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
  return any_of("MPI_Waitany", count, reqs, index, nullptr, status);
}

int PMPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Testany");
  profiler::ApiScope api("MPI_Testany");
  if (!index || !flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Testany", "index or flag is NULL");
  return any_of("MPI_Testany", count, reqs, index, flag, status);
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Waitsome");
  profiler::ApiScope api("MPI_Waitsome");
  return some_of("MPI_Waitsome", true, incount, reqs, outcount, indices, statuses);
}

int PMPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Testsome");
  profiler::ApiScope api("MPI_Testsome");
  return some_of("MPI_Testsome", false, incount, reqs, outcount, indices, statuses);
}

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Request_get_status");
  if (!flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
  Request* r;
  if (!resolve(request, &r)) return bad_request("MPI_Request_get_status", request);
  if (is_inert(request, r)) return inert_done(status, flag);
  if (!r->complete) poll_once(*g_state->transport, &r, 1, failure_scope);
  *flag = r->complete;
  if (!r->complete) return MPI_SUCCESS;
  if (r->kind == RequestKind::generalized) {
    const int code = grequest_status(r, status);
    return code == MPI_SUCCESS ? code : raise_code(MPI_COMM_NULL, code, "MPI_Request_get_status");
  }
  run_finish(r);  // the data is the user's once the status says complete
  fill_status(status, r->status);
  return MPI_SUCCESS;
}

int PMPI_Request_free(MPI_Request* request) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Request_free");
  if (!request || *request == MPI_REQUEST_NULL)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Request_free", "request is MPI_REQUEST_NULL");
  Request* r = lookup_request(*request);
  if (!r) return bad_request("MPI_Request_free", *request);
  if (r->kind == RequestKind::generalized) {
    // An incomplete one goes when MPI_Grequest_complete is called.
    *request = MPI_REQUEST_NULL;
    if (!r->complete) {
      r->user_freed = true;
      return MPI_SUCCESS;
    }
    const int code = grequest_free(r);
    return code == MPI_SUCCESS ? code : raise_code(MPI_COMM_NULL, code, "MPI_Request_free");
  }
  g_state->free_request(r);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* request) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Cancel");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Cancel", "request is NULL");
  Request* r = lookup_request(*request);
  if (!r) return bad_request("MPI_Cancel", *request);
  if (r->kind == RequestKind::generalized) {
    const int code = grequest_cancel(r);
    return code == MPI_SUCCESS ? code : raise_code(MPI_COMM_NULL, code, "MPI_Cancel");
  }
  // Receives are cancelled if still unmatched. A send is recalled if its receiver has not
  // matched it (weft shared memory; over UCX it completes as sent: the standard lets
  // cancellation of a send fail, and MPI_Test_cancelled then reports false); a buffered send
  // recalls its copy. An inactive persistent request has nothing to cancel.
  Status s = Status::ok;
  if (r->kind == RequestKind::recv && !r->complete) s = g_state->transport->cancel(r);
  else if (r->kind == RequestKind::send && (!r->persistent || r->active))
    s = r->buffered ? cancel_buffered(*g_state->transport, buffered_sends_of(r->owner), r) : g_state->transport->cancel(r);
  if (s != Status::ok) return raise_status(MPI_COMM_NULL, s, "MPI_Cancel");
  return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Probe");
  return probe_common("MPI_Probe", source, tag, comm, nullptr, nullptr, status);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Iprobe");
  if (!flag) return raise(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
  return probe_common("MPI_Iprobe", source, tag, comm, flag, nullptr, status);
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Mprobe");
  if (!message) return raise(comm, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
  return probe_common("MPI_Mprobe", source, tag, comm, nullptr, message, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Improbe");
  if (!flag || !message) return raise(comm, MPI_ERR_ARG, "MPI_Improbe", "flag or message is NULL");
  return probe_common("MPI_Improbe", source, tag, comm, flag, message, status);
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Request* request) {
  WEFT_ENTRY;
  const char* fn = "MPI_Imrecv";
  WEFT_REQUIRE_INIT(fn);
  if (!message || !request) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "message or request is NULL");
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
  const Datatype* d;
  if (int rc = check_datatype(MPI_COMM_NULL, fn, dt, &d)) return rc;
  if (*message == MPI_MESSAGE_NO_PROC) {
    *request = request_handle(completed_request(g_state->requests, RequestKind::recv, proc_null_status()));
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  Request* r = lookup_request(*message);
  if (!r || !r->transport_handle || r->complete)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid message 0x%x", unsigned(*message));
  Message m;
  switch (describe_message(lookup_comm(r->owner), d, size_t(count), buf, &m)) {
    case Status::ok: break;
    case Status::invalid_buffer: return raise_unsupported_device(r->owner, fn, buf);
    default: return raise(r->owner, MPI_ERR_TYPE, fn, "%s", error_detail().c_str());
  }
  if (!buf && m.bytes && d->predefined) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  Status s = mrecv(*g_state->transport, m, buf, r);
  if (s != Status::ok) return raise_status(r->owner, s, fn);
  *request = request_handle(r);
  *message = MPI_MESSAGE_NULL;
  return MPI_SUCCESS;
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype dt, MPI_Message* message, MPI_Status* status) {
  WEFT_ENTRY;
  MPI_Request req;
  int rc = PMPI_Imrecv(buf, count, dt, message, &req);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Wait(&req, status);
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype dt, int* count) {
  WEFT_ENTRY;
  if (!status || status == MPI_STATUS_IGNORE || !count)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_count", "status or count is NULL");
  const Datatype* d = lookup_datatype(dt);
  if (!d) return raise(MPI_COMM_NULL, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype 0x%x", unsigned(dt));
  long long n = type_count_elements(d, status_bytes(status));  // packed bytes per element
  *count = n < 0 || n > INT32_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype dt, int* count) {
  WEFT_ENTRY;
  if (!count) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_elements", "count is NULL");
  MPI_Count n = 0;
  int rc = PMPI_Get_elements_x(status, dt, &n);
  if (rc != MPI_SUCCESS) return rc;
  *count = n == MPI_UNDEFINED || n > INT32_MAX ? MPI_UNDEFINED : int(n);
  return MPI_SUCCESS;
}

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  WEFT_ENTRY;
  if (!status || status == MPI_STATUS_IGNORE)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL or MPI_STATUS_IGNORE");
  status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
  return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  WEFT_ENTRY;
  if (!status || status == MPI_STATUS_IGNORE || !flag)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "status or flag is NULL");
  *flag = status->count_hi_and_cancelled & 1;
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Wait, Test, Waitall, Testall, Waitany, Testany, Waitsome, Testsome,
                  Request_get_status, Request_free, Cancel, Probe, Iprobe, Mprobe, Improbe, Imrecv,
                  Mrecv, Get_count, Get_elements, Status_set_cancelled, Test_cancelled)
