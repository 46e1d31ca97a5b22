// Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): requests whose operation the
// program runs itself. weft keeps the program's three callbacks per request; the completion calls
// (requests.cpp) ask the query function for the status and free the request through the free
// function, MPI_Cancel calls the cancel function.
#include <unordered_map>

#include "state.h"

namespace weft::mpi {

namespace {

struct Callbacks {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra_state = nullptr;
};

// The callbacks of each live generalized request, by pool index.
std::unordered_map<uint32_t, Callbacks>& table() {
  static std::unordered_map<uint32_t, Callbacks> t;
  return t;
}

const Callbacks* callbacks_of(const Request* r) {
  auto it = table().find(r->index);
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace

int grequest_status(Request* r, MPI_Status* status) {
  MPI_Status st;
  set_status_empty(&st);
  const Callbacks* cb = callbacks_of(r);
  const int rc = cb && cb->query ? cb->query(cb->extra_state, &st) : MPI_SUCCESS;
  if (status != MPI_STATUS_IGNORE) {
    const int error = status->MPI_ERROR;
    *status = st;
    status->MPI_ERROR = error;
  }
  return rc;
}

int grequest_free(Request* r) {
  auto it = table().find(r->index);
  int rc = MPI_SUCCESS;
  if (it != table().end()) {
    const Callbacks cb = it->second;
    table().erase(it);
    if (cb.free) rc = cb.free(cb.extra_state);
  }
  g_state->requests.release(r);
  return rc;
}

int grequest_cancel(Request* r) {
  const Callbacks* cb = callbacks_of(r);
  return cb && cb->cancel ? cb->cancel(cb->extra_state, r->complete ? 1 : 0) : MPI_SUCCESS;
}

int grequest_retire(MPI_Request* h, Request* r, MPI_Status* status) {
  const int rc = grequest_status(r, status);
  const int free_rc = grequest_free(r);
  *h = MPI_REQUEST_NULL;
  return rc != MPI_SUCCESS ? rc : free_rc;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Grequest_start");
  if (!request) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Grequest_start", "request is NULL");
  Request* r = g_state->requests.alloc(RequestKind::generalized);
  table()[r->index] = Callbacks{query_fn, free_fn, cancel_fn, extra_state};
  *request = request_handle(r);
  return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Grequest_complete");
  Request* r = lookup_request(request);
  if (!r || r->kind != RequestKind::generalized || r->complete)
    return raise(MPI_COMM_NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                 "request 0x%x is no pending generalized request", unsigned(request));
  r->complete = true;
  // Freed by MPI_Request_free before completing: it goes now.
  if (r->user_freed) {
    if (int rc = grequest_free(r)) return raise_code(MPI_COMM_NULL, rc, "MPI_Grequest_complete");
  }
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Grequest_start, Grequest_complete)
