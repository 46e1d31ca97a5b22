// One UCX service for every layer that talks UCX: a UCP context with the features its user asks
// for, one worker, the worker's address, endpoints made from a peer's worker address, memory
// registration with packed remote keys, remote keys unpacked for an endpoint, progress, wakeup
// and a clean teardown (endpoints first, then the worker, then the context). pt2pt's transport
// makes the process's instance at init (pt2pt/transport.cpp; pt2pt/rma.cpp registers memory and
// unpacks keys through it); each KV agent, which runs without MPI_Init, makes its own
// (rma/kv/kv_agent.cpp). The users keep their protocols (tag matching, RMA and atomics, active
// messages) and call UCX on worker() for them.
// The service logs nothing: a call that fails returns UCX's status and, where it runs several
// UCX calls, names the one that failed, so that each user reports it in its own words.
#pragma once
#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace weft {

struct UcxOptions {
  uint64_t features = UCP_FEATURE_TAG;  // UCP_FEATURE_* bits: TAG, RMA, AMO32, AMO64, AM, WAKEUP
  ucs_thread_mode_t thread_mode = UCS_THREAD_MODE_SINGLE;
  // UCX settings changed from what the environment says, in order: {"TLS", "tcp"},
  // {"NET_DEVICES", "lo"} (names without the UCX_ prefix).
  std::vector<std::pair<std::string, std::string>> settings;
  // Hints for UCX's choice of resources; 0 leaves UCX's default.
  size_t estimated_endpoints = 0;
  size_t estimated_processes_per_node = 0;
};

class UcxService {
 public:
  // Reads UCX's configuration, applies options.settings, makes the context and its worker. On
  // failure *failed names the UCX call that failed ("ucp_init").
  static ucs_status_t create(const UcxOptions& options, std::unique_ptr<UcxService>* out, const char** failed);
  // Destroys the worker and the context; endpoints must be closed before.
  ~UcxService();
  UcxService(const UcxService&) = delete;
  UcxService& operator=(const UcxService&) = delete;

  ucp_context_h context() const { return context_; }
  ucp_worker_h worker() const { return worker_; }
  unsigned progress() { return ucp_worker_progress(worker_); }

  // The worker's address, as peers pass it to connect().
  ucs_status_t address(std::vector<unsigned char>* out) const;

  // An endpoint to the worker at `address`. peer_errors: UCP_ERR_HANDLING_MODE_PEER (UCX then
  // reports a lost peer to on_error, when given, with arg); else no error handling.
  ucs_status_t connect(const void* address, bool peer_errors, ucp_err_handler_cb_t on_error, void* arg,
                       ucp_ep_h* out);
  // Starts closing an endpoint (force: without flushing, as for a lost peer); returns UCX's
  // request (to wait for with wait() or check and free by hand), or null, or an error.
  static ucs_status_ptr_t close(ucp_ep_h ep, bool force);
  // Progresses until the request completes or limit_s seconds have passed, then frees it.
  // Anything but a request (null, an error) is left as it is.
  void wait(ucs_status_ptr_t request, double limit_s = std::numeric_limits<double>::infinity());

  // Registers [base, base + bytes) for remote access (an empty region maps one byte) and packs
  // its remote key into *rkey. On failure nothing stays registered and *failed names the call.
  ucs_status_t map(void* base, size_t bytes, ucp_mem_h* memh, std::vector<unsigned char>* rkey,
                   const char** failed);
  void unmap(ucp_mem_h memh);
  // A peer's packed remote key, for RMA and atomics on the endpoint to it.
  static ucs_status_t unpack_rkey(ucp_ep_h ep, const void* packed, ucp_rkey_h* out);
  static void destroy_rkey(ucp_rkey_h rkey);

  // Active messages (UCP_FEATURE_AM): the handler of message id.
  ucs_status_t set_am_handler(unsigned id, ucp_am_recv_callback_t handler, void* arg);

  // Wakeup (UCP_FEATURE_WAKEUP): a descriptor to poll, arming it (UCS_ERR_BUSY: events are
  // pending, progress first) and waking a thread that sleeps on it.
  ucs_status_t event_fd(int* fd);
  ucs_status_t arm() { return ucp_worker_arm(worker_); }
  ucs_status_t signal() { return ucp_worker_signal(worker_); }

  // The transports UCX chose for an endpoint's lanes, e.g. "posix/memory cma/memory";
  // "(none reported)" when it lists none.
  static std::string endpoint_transports(ucp_ep_h ep);
  // Every transport the context can use, e.g. "tcp/lo posix/memory"; "(none)" when none.
  std::string context_transports() const;

 private:
  UcxService() = default;

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
};

}  // namespace weft
