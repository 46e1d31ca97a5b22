// Error classes, error codes that carry a message, error handlers.
#include <cstdio>
#include <cstring>

#include "runtime/error_codes.h"
#include "runtime/log.h"
#include "state.h"
#include "window_entry.h"

namespace weft::mpi {

namespace {

constexpr int kMaxUserClasses = 4096;

const char* predefined_class_string(int c) {
  switch (c) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer pointer";
    case MPI_ERR_COUNT: return "invalid count argument";
    case MPI_ERR_TYPE: return "invalid datatype";
    case MPI_ERR_TAG: return "invalid tag";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_ROOT: return "invalid root";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimension argument";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_IN_STATUS: return "error code is in status";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_REQUEST: return "invalid request";
    case MPI_ERR_ACCESS: return "permission denied";
    case MPI_ERR_AMODE: return "invalid file access mode";
    case MPI_ERR_BAD_FILE: return "invalid file name";
    case MPI_ERR_CONVERSION: return "data conversion error";
    case MPI_ERR_DUP_DATAREP: return "data representation already defined";
    case MPI_ERR_FILE_EXISTS: return "file exists";
    case MPI_ERR_FILE_IN_USE: return "file in use";
    case MPI_ERR_FILE: return "invalid file handle";
    case MPI_ERR_INFO: return "invalid info object";
    case MPI_ERR_INFO_KEY: return "invalid info key";
    case MPI_ERR_INFO_VALUE: return "invalid info value";
    case MPI_ERR_INFO_NOKEY: return "info key not defined";
    case MPI_ERR_IO: return "i/o error";
    case MPI_ERR_NAME: return "invalid service name";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_NOT_SAME: return "collective arguments not identical";
    case MPI_ERR_NO_SPACE: return "no space left";
    case MPI_ERR_NO_SUCH_FILE: return "no such file";
    case MPI_ERR_PORT: return "invalid port name";
    case MPI_ERR_QUOTA: return "quota exceeded";
    case MPI_ERR_READ_ONLY: return "read-only file or file system";
    case MPI_ERR_SERVICE: return "invalid service";
    case MPI_ERR_SPAWN: return "spawn error";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "unsupported data representation";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_KEYVAL: return "invalid attribute key";
    case MPI_ERR_RMA_CONFLICT: return "conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC: return "wrong synchronisation of RMA calls";
    case MPI_ERR_SIZE: return "invalid size argument";
    case MPI_ERR_DISP: return "invalid displacement argument";
    case MPI_ERR_ASSERT: return "invalid assert argument";
    case MPI_ERR_RMA_RANGE: return "target memory is outside the window";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR: return "wrong window flavor";
    case MPI_ERR_SESSION: return "invalid session";
    case MPI_ERR_PROC_ABORTED: return "communication with an aborted process";
    case MPI_ERR_VALUE_TOO_LARGE: return "value too large to store";
    case MPIX_ERR_PROC_FAILED: return "process failed";
    case MPIX_ERR_PROC_FAILED_PENDING: return "process failure left the request pending";
    case MPIX_ERR_REVOKED: return "communication object revoked";
    case MPIX_ERR_EAGAIN: return "operation could not be issued";
    case MPIX_ERR_NOREQ: return "cannot allocate request";
    case MPIX_ERR_TIMEOUT: return "operation timed out";
    default: break;
  }
  if (c >= MPI_T_ERR_MEMORY && c <= MPI_T_ERR_NOT_SUPPORTED) return "tool interface error";
  return nullptr;
}

ErrorCodes& codes() {
  static ErrorCodes c(predefined_class_string, MPI_ERR_LASTCODE, kMaxUserClasses);
  return c;
}

// Invokes error handler eh for an error on the object `object` (described by `label`).
void invoke_errhandler(MPI_Errhandler eh, int object, const char* label, int code, const std::string& message) {
  if (eh == MPI_ERRORS_RETURN) return;
  if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) {
    int rank = g_state && g_state->boot ? g_state->boot->rank() : 0;
    fprintf(stderr, "weft: rank %d: fatal error on %s: %s\n", rank, label, message.c_str());
    fflush(stderr);
    if (g_state && g_state->boot) g_state->boot->abort(code & 0xff ? code & 0xff : 1, message.c_str());
    _exit(1);
  }
  if (handle::kind_of(eh) == handle::direct && g_state) {
    uint32_t idx = handle::index_of(eh);
    const Errhandler* h = idx < g_state->errhandlers.size() ? g_state->errhandlers[idx].get() : nullptr;
    if (h && h->fn) {
      int target = object;
      int err = code;
      h->fn(&target, &err);
    }
  }
}

// comm's handler (MPI_ERRORS_ARE_FATAL without one). A window's handler is set on the window's
// communicator, and called with the window.
void invoke_handler(Comm* comm, MPI_Comm comm_handle, int code, const std::string& message) {
  int eh = comm ? comm->errhandler : MPI_ERRORS_ARE_FATAL;
  int object = comm_handle;
  if (handle::kind_of(eh) == handle::direct && g_state) {
    uint32_t idx = handle::index_of(eh);
    const Errhandler* h = idx < g_state->errhandlers.size() ? g_state->errhandlers[idx].get() : nullptr;
    if (h && h->for_windows) object = window_of_comm(comm_handle);
  }
  invoke_errhandler(eh, object, comm ? comm->label().c_str() : "MPI_COMM_WORLD", code, message);
}

// Logs message and hands code to comm's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL or
// a freed communicator); returns code.
int deliver(MPI_Comm comm, int code, const std::string& message) {
  WEFT_INFO(Subsys::core, "%s", message.c_str());
  Comm* c = g_state ? lookup_comm(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm) : nullptr;
  if (!c && g_state) c = lookup_comm(MPI_COMM_WORLD);
  invoke_handler(c, comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code, message);
  return code;
}

}  // namespace

int last_used_error_code() { return codes().last_used(); }

int make_error_code(int error_class, const std::string& message) { return codes().make(error_class, message); }

int error_class_of(Status s) {
  switch (s) {
    case Status::ok: return MPI_SUCCESS;
    case Status::invalid_arg: return MPI_ERR_ARG;
    case Status::invalid_rank: return MPI_ERR_RANK;
    case Status::invalid_root: return MPI_ERR_ROOT;
    case Status::invalid_tag: return MPI_ERR_TAG;
    case Status::invalid_count: return MPI_ERR_COUNT;
    case Status::invalid_type: return MPI_ERR_TYPE;
    case Status::invalid_comm: return MPI_ERR_COMM;
    case Status::invalid_buffer: return MPI_ERR_BUFFER;
    case Status::invalid_request: return MPI_ERR_REQUEST;
    case Status::invalid_op: return MPI_ERR_OP;
    case Status::invalid_group: return MPI_ERR_GROUP;
    case Status::invalid_errhandler: return MPI_ERR_ARG;
    case Status::truncated: return MPI_ERR_TRUNCATE;
    case Status::no_memory: return MPI_ERR_NO_MEM;
    case Status::not_supported: return MPI_ERR_UNSUPPORTED_OPERATION;
    case Status::transport: return MPI_ERR_OTHER;
    case Status::peer_failed: return MPIX_ERR_PROC_FAILED;
    case Status::pending: return MPI_ERR_PENDING;
    case Status::in_status: return MPI_ERR_IN_STATUS;
    case Status::internal: return MPI_ERR_INTERN;
    case Status::mismatch: return MPI_ERR_OTHER;
    case Status::timed_out: return MPIX_ERR_TIMEOUT;
    case Status::revoked: return MPIX_ERR_REVOKED;
  }
  return MPI_ERR_UNKNOWN;
}

int raise(MPI_Comm comm, int error_class, const char* fn, const char* fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof(detail), fmt, ap);
  va_end(ap);
  std::string message = std::string(fn) + ": " + detail;
  return deliver(comm, make_error_code(error_class, message), message);
}

void retain_errhandler(MPI_Errhandler eh) {
  if (handle::kind_of(eh) == handle::direct) ++g_state->errhandlers[handle::index_of(eh)]->refs;
}

void release_errhandler(MPI_Errhandler eh) {
  if (handle::kind_of(eh) != handle::direct) return;
  auto& e = g_state->errhandlers[handle::index_of(eh)];
  if (e && --e->refs == 0) e.reset();
}

int raise_code(MPI_Comm comm, int code, const char* fn) {
  std::string message;
  int cls = 0;
  if (!codes().decode(code, &cls, &message) || message.empty()) message = "error code " + std::to_string(code);
  return deliver(comm, code, std::string(fn) + ": " + message);
}

bool valid_errhandler(MPI_Errhandler eh) {
  if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT) return true;
  if (handle::kind_of(eh) != handle::direct || handle::obj_of(eh) != handle::errhandler) return false;
  uint32_t idx = handle::index_of(eh);
  return idx < g_state->errhandlers.size() && g_state->errhandlers[idx] != nullptr;
}

int raise_on(MPI_Errhandler eh, int object, const char* label, int error_class, const char* fn,
             const std::string& detail) {
  std::string message = std::string(fn) + ": " + detail;
  WEFT_INFO(Subsys::core, "%s", message.c_str());
  int code = make_error_code(error_class, message);
  invoke_errhandler(eh, object, label, code, message);
  return code;
}

void call_errhandler(MPI_Errhandler eh, int object, const char* label, int errorcode) {
  int cls = 0;
  std::string msg;
  if (!codes().decode(errorcode, &cls, &msg)) msg = "error code " + std::to_string(errorcode);
  invoke_errhandler(eh, object, label, errorcode, msg);
}

int raise_status(MPI_Comm comm, Status s, const char* fn) {
  const std::string& d = error_detail();
  return raise(comm, error_class_of(s), fn, "%s", d.empty() ? status_name(s) : d.c_str());
}

int raise_unsupported_device(MPI_Comm comm, const char* fn, const void* buf) {
  return raise(comm, MPI_ERR_BUFFER, fn,
               "buffer %p is CUDA device memory, but this weft was built without CUDA support "
               "(rebuild with a CUDA toolkit)", buf);
}

int not_initialized(const char* fn) {
  fprintf(stderr, "weft: %s called %s\n", fn,
          g_finalized ? "after MPI_Finalize" : "before MPI_Init");
  fflush(stderr);
  if (g_state && g_state->boot) g_state->boot->abort(MPI_ERR_OTHER, "MPI called outside init");
  _exit(1);
}

// Whether the runtime has never been started: the handle-only state (handle_state) serves the
// calls MPI allows before initialisation.
bool before_first_init() { return !g_running && (!g_state || !g_state->boot); }

int create_errhandler(const char* fn, MPI_Comm_errhandler_function* function, bool for_windows,
                      MPI_Errhandler* errhandler, bool before_init) {
  if (!(before_init && before_first_init())) WEFT_REQUIRE_INIT(fn);
  if (!function || !errhandler) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "function or errhandler is NULL");
  auto eh = std::make_unique<Errhandler>();
  eh->fn = function;
  eh->for_windows = for_windows;
  State& state = handle_state();
  state.errhandlers.push_back(std::move(eh));
  *errhandler = handle::make(handle::direct, handle::errhandler, uint32_t(state.errhandlers.size() - 1));
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {

// A predefined handler, or a live one made for this kind of object.
bool valid_errhandler(MPI_Errhandler eh, bool for_windows) {
  if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT) return true;
  if (handle::kind_of(eh) != handle::direct || handle::obj_of(eh) != handle::errhandler) return false;
  uint32_t idx = handle::index_of(eh);
  return idx < g_state->errhandlers.size() && g_state->errhandlers[idx] &&
         g_state->errhandlers[idx]->for_windows == for_windows && !g_state->errhandlers[idx]->for_files;
}

// MPI_Comm_set_errhandler and MPI_Win_set_errhandler: the handler of c (a window's: its
// communicator's) becomes eh.
int set_errhandler(const char* fn, MPI_Comm comm, Comm* c, MPI_Errhandler eh, bool for_windows) {
  if (!valid_errhandler(eh, for_windows))
    return raise(comm, MPI_ERR_ARG, fn, "invalid errhandler 0x%x%s", unsigned(eh),
                 for_windows ? " (not made by MPI_Win_create_errhandler)" : "");
  retain_errhandler(eh);
  release_errhandler(c->errhandler);
  c->errhandler = eh;
  return MPI_SUCCESS;
}

void call_errhandler(Comm* c, MPI_Comm comm, int errorcode) {
  int cls = 0;
  std::string msg;
  if (!codes().decode(errorcode, &cls, &msg)) msg = "error code " + std::to_string(errorcode);
  invoke_handler(c, comm, errorcode, msg);
}

}  // namespace

extern "C" {

int PMPI_Error_class(int errorcode, int* errorclass) {
  WEFT_ENTRY;
  int c = 0;
  if (!errorclass) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
  if (!codes().decode(errorcode, &c, nullptr))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
  *errorclass = c;
  return MPI_SUCCESS;
}

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  WEFT_ENTRY;
  int c = 0;
  std::string msg;
  if (!string || !resultlen)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string", "string or resultlen is NULL");
  if (!codes().decode(errorcode, &c, &msg))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d",
                 errorcode);
  // An added class or code without a string (MPI_Add_error_string) has the empty one.
  copy_string(msg, MPI_MAX_ERROR_STRING, string, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Add_error_class(int* errorclass) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Add_error_class");
  if (!errorclass) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
  const int c = codes().add_class();
  if (c < 0)
    return raise(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Add_error_class", "no more error classes (limit %d)",
                 kMaxUserClasses);
  *errorclass = c;
  return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Add_error_code");
  if (!errorcode) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
  if (!codes().is_class(errorclass))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_code", "invalid error class %d", errorclass);
  const int code = codes().add_code(errorclass);
  if (code < 0) return raise(MPI_COMM_NULL, MPI_ERR_OTHER, "MPI_Add_error_code", "no more error codes");
  *errorcode = code;
  return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char* string) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Add_error_string");
  if (!string) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string", "string is NULL");
  if (strlen(string) >= MPI_MAX_ERROR_STRING)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string", "string longer than MPI_MAX_ERROR_STRING");
  if (codes().set_string(errorcode, string)) return MPI_SUCCESS;
  return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Add_error_string",
               "error code %d was not created by MPI_Add_error_class or MPI_Add_error_code", errorcode);
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  return create_errhandler("MPI_Comm_create_errhandler", fn, false, errhandler);
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_set_errhandler", comm, &c)) return rc;
  return set_errhandler("MPI_Comm_set_errhandler", comm, c, errhandler, false);
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_get_errhandler", comm, &c)) return rc;
  if (!errhandler) return raise(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
  retain_errhandler(c->errhandler);
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_call_errhandler", comm, &c)) return rc;
  call_errhandler(c, comm, errorcode);
  return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* fn, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  return create_errhandler("MPI_Win_create_errhandler", reinterpret_cast<MPI_Comm_errhandler_function*>(fn), true,
                           errhandler);
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_set_errhandler", win, &e)) return rc;
  return set_errhandler("MPI_Win_set_errhandler", e->comm, lookup_comm(e->comm), errhandler, true);
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_errhandler", win, &e)) return rc;
  return PMPI_Comm_get_errhandler(e->comm, errhandler);
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_call_errhandler", win, &e)) return rc;
  call_errhandler(lookup_comm(e->comm), e->comm, errorcode);
  return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  if (!before_first_init()) WEFT_REQUIRE_INIT("MPI_Errhandler_free");  // MPI-4.0 allows it before
  handle_state();
  if (!errhandler || !valid_errhandler(*errhandler))  // of any kind
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid errhandler");
  release_errhandler(*errhandler);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

// MPI-1 names of the communicator errhandler functions.
int PMPI_Errhandler_create(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  return PMPI_Comm_create_errhandler(fn, errhandler);
}
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  WEFT_ENTRY;
  return PMPI_Comm_set_errhandler(comm, errhandler);
}
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  return PMPI_Comm_get_errhandler(comm, errhandler);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Error_class, Error_string, Add_error_class, Add_error_code, Add_error_string,
                  Comm_create_errhandler, Comm_set_errhandler, Comm_get_errhandler,
                  Comm_call_errhandler, Errhandler_free, Errhandler_create, Errhandler_set,
                  Errhandler_get, Win_create_errhandler, Win_set_errhandler, Win_get_errhandler,
                  Win_call_errhandler)
