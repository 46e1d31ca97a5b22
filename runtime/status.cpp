#include "status.h"

#include "log.h"

namespace weft {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid_arg: return "invalid argument";
    case Status::invalid_rank: return "invalid rank";
    case Status::invalid_root: return "invalid root";
    case Status::invalid_tag: return "invalid tag";
    case Status::invalid_count: return "invalid count";
    case Status::invalid_type: return "invalid datatype";
    case Status::invalid_comm: return "invalid communicator";
    case Status::invalid_buffer: return "invalid buffer";
    case Status::invalid_request: return "invalid request";
    case Status::invalid_op: return "invalid operation";
    case Status::invalid_group: return "invalid group";
    case Status::invalid_errhandler: return "invalid error handler";
    case Status::truncated: return "message truncated";
    case Status::no_memory: return "out of memory";
    case Status::not_supported: return "not supported";
    case Status::transport: return "transport error";
    case Status::peer_failed: return "peer process failed";
    case Status::pending: return "pending";
    case Status::in_status: return "error in status";
    case Status::internal: return "internal error";
    case Status::mismatch: return "ranks disagree on build or settings";
    case Status::timed_out: return "timed out";
    case Status::revoked: return "communicator revoked";
  }
  return "unknown";
}

namespace {
thread_local std::string t_error_detail;
}

void set_error_detail(std::string msg) { t_error_detail = std::move(msg); }
const std::string& error_detail() { return t_error_detail; }

void log_breadcrumb(const char* file, int line, Status s) {
  WEFT_LOG(LogLevel::trace, Subsys::init, "propagating '%s' from %s:%d", status_name(s), file,
           line);
}

}  // namespace weft
