// Internal status codes. Every layer returns these; mpi/ maps them to MPI error
// classes at the C boundary. The layer that detects an error logs it (and records a detail
// message); callers only propagate, leaving a breadcrumb at TRACE.
#pragma once
#include <cstdint>
#include <string>

namespace weft {

enum class [[nodiscard]] Status : uint8_t {
  ok = 0,
  invalid_arg,
  invalid_rank,
  invalid_root,
  invalid_tag,
  invalid_count,
  invalid_type,
  invalid_comm,
  invalid_buffer,
  invalid_request,
  invalid_op,
  invalid_group,
  invalid_errhandler,
  truncated,
  no_memory,
  not_supported,
  transport,
  peer_failed,
  pending,
  in_status,
  internal,
  mismatch,   // the ranks of a job run different builds or settings that must agree
  timed_out,  // a blocking wait passed WEFT_TIMEOUT
  revoked,    // the communicator was revoked (MPIX_Comm_revoke)
};

const char* status_name(Status s);

inline bool ok(Status s) { return s == Status::ok; }

// The detail message of the most recent error detected by this thread. Set where an error is
// detected (together with the log line), read at the C boundary to build the error string.
void set_error_detail(std::string msg);
const std::string& error_detail();

}  // namespace weft

// Early return that leaves a breadcrumb: the caller that only propagates does not log again.
#define WEFT_TRY(expr)                                                         \
  do {                                                                         \
    ::weft::Status weft_try_status_ = (expr);                                  \
    if (weft_try_status_ != ::weft::Status::ok) [[unlikely]] {                 \
      ::weft::log_breadcrumb(__FILE__, __LINE__, weft_try_status_);            \
      return weft_try_status_;                                                 \
    }                                                                          \
  } while (0)

namespace weft {
void log_breadcrumb(const char* file, int line, Status s);
}
