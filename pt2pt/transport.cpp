#include "transport.h"

#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/clock.h"
#include "runtime/cuda_ipc.h"
#include "runtime/device_staging.h"
#include "runtime/log.h"
#include "runtime/ucx_service.h"
#include "runtime/wait_deadline.h"
#include "device_datatype.h"
#include "shm.h"
#include "tag.h"

namespace weft {

namespace {

constexpr const char* kAddressKey = "weft.ucx.addr";

Status ucx_fail(const char* what, ucs_status_t st, Status kind = Status::transport) {
  std::string msg = std::string(what) + ": " + ucs_status_string(st);
  WEFT_ERROR(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}

Status map_completion(ucs_status_t st) {
  switch (st) {
    case UCS_OK: return Status::ok;
    case UCS_ERR_MESSAGE_TRUNCATED: return Status::truncated;
    case UCS_ERR_CANCELED: return Status::ok;  // reported through status.cancelled
    case UCS_ERR_CONNECTION_RESET: case UCS_ERR_ENDPOINT_TIMEOUT: case UCS_ERR_UNREACHABLE:
      return Status::peer_failed;
    default: return Status::transport;
  }
}

// A UCX error that means the peer is gone (Status::peer_failed) names it.
void name_lost_peer(const char* what, int peer, ucs_status_t st) {
  std::string msg = std::string(what) + (peer >= 0 ? " job rank " + std::to_string(peer) : std::string(" a peer")) +
                    " failed: " + ucs_status_string(st) + " (the rank is taken to have terminated)";
  WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
}

void send_done(void* ucx_req, ucs_status_t st, void* user_data) {
  auto* r = static_cast<Request*>(user_data);
  ucp_request_free(ucx_req);
  r->transport_handle = nullptr;
  r->status.cancelled = st == UCS_ERR_CANCELED;
  r->status.error = map_completion(st);
  if (r->status.error == Status::peer_failed) name_lost_peer("send to", r->peer, st);
  end_device_staging(r);
  r->complete = true;
}

void recv_done(void* ucx_req, ucs_status_t st, const ucp_tag_recv_info_t* info, void* user_data) {
  auto* r = static_cast<Request*>(user_data);
  if (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED) {
    r->status.source = tag::source_of(info->sender_tag);
    r->status.tag = tag::user_tag_of(info->sender_tag);
    r->status.bytes = st == UCS_OK ? info->length : r->status.bytes;
  }
  ucp_request_free(ucx_req);
  r->transport_handle = nullptr;
  r->status.cancelled = st == UCS_ERR_CANCELED;
  r->status.error = map_completion(st);
  if (r->status.error == Status::truncated)
    set_error_detail("message truncated: it is larger than the receive buffer");
  else if (r->status.error == Status::peer_failed)
    name_lost_peer("receive from", r->peer, st);
  end_device_staging(r);
  r->complete = true;
}

// The parameters of a UCX receive into r. Immediate completion is turned off: UCX 1.13 leaves
// recv_info unfilled on that path, so the callback is the one place the envelope is read.
inline ucp_request_param_t recv_param(Request* r) {
  ucp_request_param_t p;
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.cb.recv = recv_done;
  p.user_data = r;
  return p;
}

// A receive handed to UCX (sp: what the posting call returned).
inline Status recv_posted(Request* r, ucs_status_ptr_t sp, const char* what) {
  if (UCS_PTR_IS_ERR(sp)) [[unlikely]] {
    end_device_staging(r);
    return ucx_fail(what, UCS_PTR_STATUS(sp));
  }
  if (!r->complete) r->transport_handle = sp;  // else the callback already ran and freed it
  return Status::ok;
}

int poll_worker(void* worker) { return int(ucp_worker_progress(static_cast<ucp_worker_h>(worker))); }

}  // namespace

Transport::Transport(Bootstrap& boot, Progress& progress, RequestPool& pool)
    : boot_(boot), progress_(progress), pool_(pool) {}

Status Transport::create(Bootstrap& boot, Progress& progress, RequestPool& pool,
                         const TransportOptions& options, std::unique_ptr<Transport>* out) {
  std::unique_ptr<Transport> t(new Transport(boot, progress, pool));
  WEFT_TRY(t->init(options));
  *out = std::move(t);
  return Status::ok;
}

Status Transport::init(const TransportOptions& options) {
  peer_error_mode_ = options.peer_error_mode;
  require_fast_path_ = options.require_fast_path;
  process_fault_scope_ = options.process_fault_scope;
  UcxOptions uo;
  uo.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
  uo.thread_mode = options.thread_multiple ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE;
  uo.estimated_endpoints = size_t(boot_.size());
  uo.estimated_processes_per_node = size_t(boot_.local_size());
  // A job on one node needs no network: keep any network lane on loopback, never on the
  // machine's external interfaces. The user's UCX_NET_DEVICES wins.
  if (boot_.local_size() == boot_.size() && getenv("UCX_NET_DEVICES") == nullptr) {
    uo.settings.push_back({"NET_DEVICES", "lo"});
  }
  // Virtual nodes of one host must talk over a network transport, as real nodes do: tcp on
  // the loopback device, never shared memory.
  if (boot_.fake_nodes()) {
    uo.settings.push_back({"TLS", "tcp"});
    uo.settings.push_back({"NET_DEVICES", "lo"});
  }
  const char* failed = nullptr;
  ucs_status_t st = UcxService::create(uo, &ucx_, &failed);
  if (st != UCS_OK) return ucx_fail(failed, st);
  worker_ = ucx_->worker();

  // Device buffers to and from UCX peers, pipelined through pinned chunks (when CUDA is usable).
  const char* staging_off = nullptr;
  if (device_staging_usable(&staging_off)) {
    ucp_datatype_t dt = 0;
    st = device_datatype_create(&dt);
    if (st == UCS_OK) device_dt_ = dt;
    else device_staging_off_ = std::string("ucp_dt_create_generic failed: ") + ucs_status_string(st);
  } else {
    device_staging_off_ = staging_off;
  }

  std::vector<unsigned char> addr;
  st = ucx_->address(&addr);
  if (st != UCS_OK) return ucx_fail("ucp_worker_get_address", st);
  WEFT_TRY(boot_.put(kAddressKey, addr.data(), addr.size()));

  bool use_shm = false;
  WEFT_TRY(choose_path(options, &use_shm));
  if (use_shm) {
    ShmOptions so;
    so.cells = options.shm_cells;
    so.cell_size = options.shm_cell_size;
    so.split_min = options.shm_split_min;
    so.require_fast_path = options.require_fast_path;
    WEFT_TRY(ShmEngine::create(boot_, progress_, so, &shm_));
  }
  WEFT_TRY(boot_.exchange());
  eps_.assign(size_t(boot_.size()), nullptr);
  sent_.assign(size_t(boot_.size()), Traffic{});
  if (shm_) {
    WEFT_TRY(shm_->map_all_and_unlink());
  } else if (boot_.size() > 1 && options.path != Pt2ptPath::ucx) {
    // Ranks of other nodes may use shared memory (a node where this rank is alone, or where it
    // cannot be used); their mapping ends in a job-wide barrier, which every rank joins.
    WEFT_TRY(boot_.barrier());
  }
  if (shm_) {
    progress_.add_poller([](void* e) { return static_cast<ShmEngine*>(e)->progress(); }, shm_.get());
  }
  if (!shm_ || hybrid_) progress_.add_poller(poll_worker, worker_);
  if (hybrid_) progress_.add_poller([](void* t) { return static_cast<Transport*>(t)->resolve_watched(); }, this);
  WEFT_INFO(Subsys::pt2pt, "point-to-point path: %s", path_description().c_str());
  WEFT_INFO(Subsys::pt2pt, "ucx %s ready, worker address %zu bytes, thread mode %s",
            ucp_get_version_string(), addr.size(), options.thread_multiple ? "multi" : "single");
  return Status::ok;
}

// Decided identically on every rank from facts they share: weft's shared memory for this
// node's ranks when it can be used, and UCX for ranks on other nodes (hybrid; a wildcard
// receive then watches both, see resolve_watched). WEFT_PT2PT=ucx: UCX for every peer.
Status Transport::choose_path(const TransportOptions& options, bool* use_shm) {
  const bool one_node = boot_.local_size() == boot_.size();
  std::string reason = shm_unavailable_reason();
  if (reason.empty() && !one_node && boot_.local_size() == 1) reason = "no other rank on this node";
  hybrid_ = false;
  switch (options.path) {
    case Pt2ptPath::ucx:
      *use_shm = false;
      return Status::ok;
    case Pt2ptPath::shm:
      if (!reason.empty()) {
        std::string msg = "WEFT_PT2PT=shm cannot be honoured: " + reason;
        WEFT_ERROR(Subsys::pt2pt, "%s", msg.c_str());
        set_error_detail(msg);
        return Status::not_supported;
      }
      *use_shm = true;
      hybrid_ = !one_node;
      return Status::ok;
    case Pt2ptPath::automatic:
      break;
  }
  *use_shm = reason.empty();
  hybrid_ = *use_shm && !one_node;
  if (!reason.empty() && boot_.local_size() > 1) {
    // A slower path for node-local messages: never silent, and an error on request.
    std::string msg = "node-local messages go through ucx instead of weft shared memory: " + reason;
    if (options.require_fast_path) {
      WEFT_ERROR(Subsys::pt2pt, "%s (WEFT_REQUIRE_FAST_PATH)", msg.c_str());
      set_error_detail(msg);
      return Status::not_supported;
    }
    WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
  }
  return Status::ok;
}

std::string Transport::path_description() const {
  if (hybrid_)
    return shm_->describe() + " for the " + std::to_string(boot_.local_size()) +
           " ranks of this node; ucx for the others" + (boot_.fake_nodes() ? " (tcp on lo: virtual nodes)" : "");
  if (shm_) return shm_->describe();
  return "ucx for every peer (transports per peer are logged when connected)";
}

Transport::~Transport() {
  if (log_enabled(LogLevel::info, Subsys::pt2pt))
    for (int dest = 0; dest < int(sent_.size()); ++dest)
      if (sent_[size_t(dest)].messages)
        WEFT_INFO(Subsys::pt2pt, "peer %d: sent %llu messages, %llu bytes over %s", dest,
                  (unsigned long long)sent_[size_t(dest)].messages,
                  (unsigned long long)sent_[size_t(dest)].bytes, transports_to(dest).c_str());
  // Failure notices still in flight get a moment to leave: closing their endpoints drops them.
  if (boot_.failures_to_announce()) send_failure_notices();
  const uint64_t until = monotonic_ns() + 200'000'000;
  while (!notices_.empty()) {
    std::erase_if(notices_, [](const std::unique_ptr<FailureNotice>& n) { return n->request.complete; });
    if (notices_.empty() || monotonic_ns() > until) break;
    progress();
  }
  for (const std::unique_ptr<FailureNotice>& n : notices_) fail_request(&n->request);
  notices_.clear();
  std::vector<void*> closing;
  for (void*& ep : eps_) {
    if (!ep) continue;
    ucs_status_ptr_t req = UcxService::close(static_cast<ucp_ep_h>(ep), true);
    if (UCS_PTR_IS_PTR(req)) closing.push_back(req);
    ep = nullptr;
  }
  for (void* req : closing) ucx_->wait(req);
  shm_.reset();
  ucx_.reset();  // the worker, then the context
  // A generic datatype belongs to no context or worker.
  if (device_dt_) ucp_dt_destroy(ucp_datatype_t(device_dt_));
}

Status Transport::endpoint(int dest, void** ep) {
  void* e = eps_[size_t(dest)];
  if (e) [[likely]] {
    *ep = e;
    return Status::ok;
  }
  return connect(dest, ep);
}

Status Transport::connect(int dest, void** ep) {
  if (boot_.peer_failed(dest)) {
    std::string msg = "rank " + std::to_string(dest) + " has failed";
    WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::peer_failed;
  }
  std::vector<char> addr;
  WEFT_TRY(boot_.get(dest, kAddressKey, &addr));
  ucp_ep_h e = nullptr;
  const ucs_status_t st = ucx_->connect(addr.data(), peer_error_mode_, nullptr, nullptr, &e);
  if (st != UCS_OK) return ucx_fail("ucp_ep_create", st);
  eps_[size_t(dest)] = e;
  *ep = e;
  WEFT_INFO(Subsys::pt2pt, "peer %d: transports %s", dest, transports_to(dest).c_str());
  return Status::ok;
}

std::string Transport::transports_to(int dest) {
  if (via_shm(dest)) return shm_->describe();
  void* ep = eps_[size_t(dest)];
  if (!ep) return "(not connected)";
  return UcxService::endpoint_transports(static_cast<ucp_ep_h>(ep));
}

std::string Transport::available_transports() {
  UcxOptions uo;
  uo.features = UCP_FEATURE_TAG;
  std::unique_ptr<UcxService> ucx;
  const char* failed = nullptr;
  const ucs_status_t st = UcxService::create(uo, &ucx, &failed);
  if (st != UCS_OK && std::string(failed) == "ucp_config_read") return "(ucx config unreadable)";
  if (st != UCS_OK) return std::string("(") + failed + " failed: " + ucs_status_string(st) + ")";
  return ucx->context_transports();
}

void Transport::quiesce() {
  if (boot_.failures_to_announce()) send_failure_notices();  // before this rank stops looking
  if (!shm_) return;
  progress_.wait([&] {
    boot_.poll_local_liveness();
    return shm_->idle() || boot_.failures_seen() > 0;  // a dead peer never drains its ring
  });
}

int Transport::progress() {
  if (hybrid_) return shm_->progress() + int(ucp_worker_progress(static_cast<ucp_worker_h>(worker_))) + resolve_watched();
  if (shm_) return shm_->progress() + (rma_regions_ ? int(ucp_worker_progress(static_cast<ucp_worker_h>(worker_))) : 0);
  return int(ucp_worker_progress(static_cast<ucp_worker_h>(worker_)));
}

int Transport::resolve_watched() {
  if (watched_.empty()) [[likely]] return 0;
  auto worker = static_cast<ucp_worker_h>(worker_);
  int events = 0;
  for (auto it = watched_.begin(); it != watched_.end();) {
    Watched& w = *it;
    if (w.wildcard && !shm_->is_posted(w.request)) {  // weft shared memory matched it (or it was cancelled)
      --pending_wildcards_;
      it = watched_.erase(it);
      ++events;
      continue;
    }
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg = ucp_tag_probe_nb(worker, w.tag, w.mask, 1, &info);
    if (!msg) {
      ++it;
      continue;
    }
    if (w.wildcard) {
      shm_->withdraw(w.request);
      --pending_wildcards_;
    }
    Request* r = w.request;
    void* buf = w.buf;
    const size_t bytes = w.bytes;
    it = watched_.erase(it);
    ++events;
    if (ucx_recv_message(buf, bytes, msg, r) != Status::ok) {
      r->status.error = Status::transport;
      r->complete = true;
    }
  }
  // No wildcard left ahead of them: the held receives go to UCX, in order.
  while (pending_wildcards_ == 0 && !watched_.empty()) {
    Watched w = watched_.front();
    watched_.pop_front();
    Status st = irecv(w.buf, w.bytes, w.request->peer, w.tag, w.mask, w.request);
    if (st != Status::ok) {
      w.request->status.error = st;
      w.request->complete = true;
    }
  }
  return events;
}

bool Transport::forget_watched(Request* r) {
  for (auto it = watched_.begin(); it != watched_.end(); ++it) {
    if (it->request != r) continue;
    if (it->wildcard) --pending_wildcards_;
    watched_.erase(it);
    return true;
  }
  return false;
}

DevicePath Transport::device_path(int peer, std::string* why_staged) const {
  const char* no_ipc = nullptr;
  const bool ipc = shm_ && cuda_ipc_usable(&no_ipc);
  const bool pipelined = device_dt_ != 0;
  auto staged = [&](bool for_ipc) {
    if (why_staged)
      *why_staged = for_ipc ? std::string("CUDA IPC is not usable: ") + (no_ipc ? no_ipc : "?")
                            : "pipelined staging over ucx is off: " + device_staging_off_;
    return DevicePath::staged;
  };
  if (peer >= 0 && via_shm(peer)) return ipc ? DevicePath::cuda_ipc : staged(true);
  if (peer >= 0 || !shm_) return pipelined ? DevicePath::pipelined : staged(false);
  if (!hybrid_) return ipc ? DevicePath::cuda_ipc : staged(true);
  if (ipc && pipelined) return DevicePath::mixed;  // any source: this node's ranks and the others
  return staged(!ipc);
}

Status Transport::stage_device(Request* r, void* buf, size_t bytes, bool send, void* param, void** ucx_buf) {
  if (!device_dt_) [[unlikely]] {
    std::string msg = "a device buffer was handed to ucx, but pipelined staging is off: " + device_staging_off_;
    WEFT_ERROR(Subsys::gpu, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::internal;
  }
  DeviceStaging* s = nullptr;
  WEFT_TRY(send ? device_staging_begin_send(buf, bytes, &s) : device_staging_begin_recv(buf, bytes, &s));
  r->device_staging = s;
  auto* p = static_cast<ucp_request_param_t*>(param);
  p->op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
  p->datatype = ucp_datatype_t(device_dt_);
  *ucx_buf = s;
  return Status::ok;
}

Status Transport::isend(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode,
                        Request* r) {
  count_sent(dest, bytes);
  if (via_shm(dest)) return shm_->isend(buf, bytes, dest, t, mode, r);
  return ucx_isend(buf, bytes, dest, t, mode, r);
}

// Out of line, so that a send through shared memory never sets up this frame.
[[gnu::noinline]] Status Transport::ucx_isend(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode,
                                              Request* r) {
  void* ep = nullptr;
  WEFT_TRY(endpoint(dest, &ep));
  r->peer = dest;
  r->complete = false;
  r->status = RequestStatus{};
  ucp_request_param_t p;
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.send = send_done;
  p.user_data = r;
  void* data = const_cast<void*>(buf);
  if (r->device_buffer) WEFT_TRY(stage_device(r, data, bytes, true, &p, &data));
  ucs_status_ptr_t sp = mode == SendMode::synchronous
                            ? ucp_tag_send_sync_nbx(static_cast<ucp_ep_h>(ep), data, bytes, t, &p)
                            : ucp_tag_send_nbx(static_cast<ucp_ep_h>(ep), data, bytes, t, &p);
  if (sp == nullptr) {
    end_device_staging(r);  // packed already: a failed copy is the request's error
    r->complete = true;
    return Status::ok;
  }
  if (UCS_PTR_IS_ERR(sp)) {
    end_device_staging(r);
    return send_failed(dest, UCS_PTR_STATUS(sp));
  }
  r->transport_handle = sp;
  return Status::ok;
}

Status Transport::irecv(void* buf, size_t bytes, int source, uint64_t t, uint64_t mask,
                        Request* r) {
  if (!hybrid_ && shm_) return shm_->irecv(buf, bytes, source, t, mask, r);
  return irecv_routed(buf, bytes, source, t, mask, r);
}

// Out of line, so that a receive through shared memory alone never sets up this frame: the
// receive goes to UCX, or in hybrid mode to the engine of its source (both for any source).
[[gnu::noinline]] Status Transport::irecv_routed(void* buf, size_t bytes, int source, uint64_t t, uint64_t mask,
                                                 Request* r) {
  if (hybrid_) {
    if (source >= 0 && boot_.is_local(source)) return shm_->irecv(buf, bytes, source, t, mask, r);
    if (source < 0) {
      WEFT_TRY(shm_->irecv(buf, bytes, source, t, mask, r));
      if (shm_->is_posted(r)) {
        watched_.push_back(Watched{r, buf, bytes, t, mask, true});
        ++pending_wildcards_;
      }
      return Status::ok;
    }
    if (pending_wildcards_ > 0) {
      r->peer = source;
      r->complete = false;
      r->status = RequestStatus{};
      r->status.bytes = bytes;
      watched_.push_back(Watched{r, buf, bytes, t, mask, false});
      return Status::ok;
    }
  }
  r->peer = source;
  r->complete = false;
  r->status = RequestStatus{};
  r->status.bytes = bytes;  // reported as-is if the message is truncated
  ucp_request_param_t p = recv_param(r);
  void* data = buf;
  if (r->device_buffer) WEFT_TRY(stage_device(r, buf, bytes, false, &p, &data));
  return recv_posted(r, ucp_tag_recv_nbx(static_cast<ucp_worker_h>(worker_), data, bytes, t, mask, &p), "receive");
}

// In hybrid mode, probe marks UCX's message handles with the low bit (handles are aligned).
Status Transport::mrecv(void* buf, size_t bytes, void* message, Request* r) {
  const auto bits = reinterpret_cast<uintptr_t>(message);
  if (hybrid_ && (bits & 1)) return ucx_recv_message(buf, bytes, reinterpret_cast<void*>(bits & ~uintptr_t(1)), r);
  if (shm_) return shm_->mrecv(buf, bytes, message, r);
  return ucx_recv_message(buf, bytes, message, r);
}

Status Transport::ucx_recv_message(void* buf, size_t bytes, void* message, Request* r) {
  r->complete = false;
  r->status = RequestStatus{};
  r->status.bytes = bytes;
  ucp_request_param_t p = recv_param(r);
  void* data = buf;
  if (r->device_buffer) WEFT_TRY(stage_device(r, buf, bytes, false, &p, &data));
  return recv_posted(r,
                     ucp_tag_msg_recv_nbx(static_cast<ucp_worker_h>(worker_), data, bytes,
                                          static_cast<ucp_tag_message_h>(message), &p),
                     "matched receive");
}

Transport::Traffic Transport::sent_via(Path path) const {
  Traffic sum;
  for (size_t dest = 0; dest < sent_.size(); ++dest) {
    if (path_to(int(dest)) != path) continue;
    sum.messages += sent_[dest].messages;
    sum.bytes += sent_[dest].bytes;
  }
  return sum;
}

size_t Transport::unexpected_messages() const { return shm_ ? shm_->unexpected_count() : 0; }

void* Transport::transfer_event(const char* kind, int peer, size_t bytes) const {
  weft_profiler_event_t e = profiler::event(WEFT_PROFILER_TRANSFER, kind);
  e.peer = peer;
  e.bytes = bytes;
  e.transport = peer == boot_.rank() && !shm_ ? "self" : (peer >= 0 ? via_shm(peer) : shm_ && !hybrid_) ? "shm" : "ucx";
  return profiler::start(e);
}

Status Transport::send(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode, const Comm* scope) {
  count_sent(dest, bytes);
  if (via_shm(dest)) {
    if (mode == SendMode::standard && shm_->try_send_now(buf, bytes, dest, t)) [[likely]]
      return Status::ok;
    return shm_send_queued(buf, bytes, dest, t, mode, scope);
  }
  return ucx_send(buf, bytes, dest, t, mode, scope);
}

// A blocking send through shared memory that could not be placed at once: through a request.
[[gnu::noinline]] Status Transport::shm_send_queued(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode,
                                                    const Comm* scope) {
  Request r;
  r.kind = RequestKind::send;
  WEFT_TRY(shm_->isend(buf, bytes, dest, t, mode, &r));
  if (!r.complete) wait(&r, scope);
  return r.status.error;
}

[[gnu::noinline]] Status Transport::ucx_send(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode,
                                             const Comm* scope) {
  void* ep = nullptr;
  WEFT_TRY(endpoint(dest, &ep));
  ucp_request_param_t p;
  p.op_attr_mask = 0;
  ucs_status_ptr_t sp = mode == SendMode::synchronous
                            ? ucp_tag_send_sync_nbx(static_cast<ucp_ep_h>(ep), buf, bytes, t, &p)
                            : ucp_tag_send_nbx(static_cast<ucp_ep_h>(ep), buf, bytes, t, &p);
  if (sp == nullptr) [[likely]] return Status::ok;
  if (UCS_PTR_IS_ERR(sp)) return send_failed(dest, UCS_PTR_STATUS(sp));
  ucs_status_t st;
  int dead = -1;  // the failed job rank that ends the wait
  WaitBound bound;
  bool timed_out = false;
  progress_.wait([&] {
    st = ucp_request_check_status(sp);
    if (st != UCS_INPROGRESS) return true;
    if (wait_timed_out()) [[unlikely]] return timed_out = true;
    boot_.poll_local_liveness();
    if (boot_.failures_seen() == 0) [[likely]] return false;
    if (boot_.peer_failed(dest)) dead = dest;
    else if (scope && fails_with_member(*scope, dest)) dead = scope->world_rank(scope->failed_member);
    return dead >= 0;
  });
  if (st == UCS_INPROGRESS && timed_out) {
    ucp_request_free(sp);
    std::string msg = "a send to job rank " + std::to_string(dest) + " did not complete within " + wait_timeout_text();
    WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::timed_out;
  }
  if (st == UCS_INPROGRESS) {
    ucp_request_free(sp);  // UCX may finish it, but reports nothing more
    std::string msg = "send to rank " + std::to_string(dest) + " failed: " + failure_detail(scope, dead);
    WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::peer_failed;
  }
  ucp_request_free(sp);
  if (st != UCS_OK) return send_failed(dest, st);
  return Status::ok;
}

Status Transport::recv(void* buf, size_t bytes, int source, uint64_t t, uint64_t mask,
                       MatchInfo* info, const Comm* scope) {
  Request r;
  r.kind = RequestKind::recv;
  WEFT_TRY(irecv(buf, bytes, source, t, mask, &r));
  if (!r.complete) wait(&r, scope);
  info->source = r.status.source;
  info->tag = r.status.tag;
  info->bytes = r.status.bytes;
  return r.status.error;
}

bool Transport::probe(uint64_t t, uint64_t mask, bool remove, MatchInfo* info, void** message) {
  if (shm_ && shm_->probe(t, mask, remove, info, message)) return true;
  if (shm_ && !hybrid_) return false;
  auto worker = static_cast<ucp_worker_h>(worker_);
  ucp_worker_progress(worker);
  ucp_tag_recv_info_t ri;
  ucp_tag_message_h msg = ucp_tag_probe_nb(worker, t, mask, remove ? 1 : 0, &ri);
  if (!msg) return false;
  info->source = tag::source_of(ri.sender_tag);
  info->tag = tag::user_tag_of(ri.sender_tag);
  info->bytes = ri.length;
  if (message) *message = hybrid_ ? reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(msg) | 1) : msg;
  return true;
}

Status Transport::cancel(Request* r) {
  if (r->kind == RequestKind::send) {
    // Weft's shared memory recalls a send its receiver has not matched, even one complete here
    // (eager); UCX cannot recall a send, which then completes as sent.
    if (r->peer >= 0 && via_shm(r->peer)) shm_->cancel(r);
    return Status::ok;
  }
  if (r->complete) return Status::ok;
  if (hybrid_ && forget_watched(r) && !shm_->is_posted(r)) {  // a held receive
    r->status.cancelled = true;
    r->complete = true;
    return Status::ok;
  }
  if (shm_ && !r->transport_handle) {
    shm_->cancel(r);
    return Status::ok;
  }
  if (!r->transport_handle) return Status::ok;
  ucp_request_cancel(static_cast<ucp_worker_h>(worker_), r->transport_handle);
  return Status::ok;
}

Status Transport::send_failed(int dest, int status) {
  const auto st = static_cast<ucs_status_t>(status);
  const Status kind = map_completion(st);
  if (kind != Status::peer_failed) return ucx_fail("send", st, kind);
  // UCX found the endpoint broken (reset, timed out, unreachable): the peer is gone. Between
  // nodes this may be the first sign of it.
  name_lost_peer("send to", dest, st);
  boot_.mark_failed(dest);
  return kind;
}

int Transport::failed_member(const Comm& c) {
  const uint32_t seen = boot_.failures_seen();
  if (seen == 0) [[likely]] return -1;
  if (c.failures_checked != seen) {
    c.failures_checked = seen;
    c.failed_member = -1;
    for (int r = 0; r < c.size && c.failed_member < 0; ++r)
      if (boot_.peer_failed(c.world_rank(r))) c.failed_member = r;
  }
  return c.failed_member;
}

int Transport::failed_count(const Comm& c) {
  if (failed_member(c) < 0) return 0;
  int n = 0;
  for (int r = 0; r < c.size; ++r) n += boot_.peer_failed(c.world_rank(r)) ? 1 : 0;
  return n;
}

bool Transport::fails_with_member(const Comm& c, int peer) {
  if (failed_member(c) < 0) return false;
  if (!process_fault_scope_ || peer == kCollectiveStep) return true;
  return peer < 0 && uint32_t(failed_count(c)) > c.acked_failures;
}

std::string Transport::failure_detail(const Comm* c, int job_rank) {
  if (c)
    for (int r = 0; r < c->size; ++r)
      if (c->world_rank(r) == job_rank)
        return "rank " + std::to_string(r) + " of " + c->label() + " (job rank " + std::to_string(job_rank) +
               ") has terminated";
  return "rank " + std::to_string(job_rank) + " has terminated";
}

bool Transport::fail_timed_out(Request* r, const Comm* scope) {
  if (r->complete || (r->kind != RequestKind::send && r->kind != RequestKind::recv)) return false;
  std::string peer = "any rank";
  if (r->peer >= 0) {
    peer = "job rank " + std::to_string(r->peer);
    if (scope)
      for (int k = 0; k < scope->peer_count(); ++k)
        if (scope->peer_world_rank(k) == r->peer)
          peer = "rank " + std::to_string(k) + " of " + scope->label() + " (job rank " + std::to_string(r->peer) + ")";
  }
  const std::string msg = std::string(r->kind == RequestKind::send ? "a send to " : "a receive from ") + peer +
                          " did not complete within " + wait_timeout_text();
  WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
  fail_request(r, Status::timed_out);
  return true;
}

namespace {
// Notices travel on a context of their own, above every communicator's. A revocation's tag is
// the revoked communicator's context id (16 bits); a failure notice's is the internal tag bit.
constexpr uint32_t kNoticeContext = tag::kMaxContextId;
constexpr uint32_t kFailureNoticeTag = 1u << (tag::kTagBits - 1);
}  // namespace

void Transport::revoke(const Comm& c) {
  if (!revoked(c)) {
    revoked_contexts_.push_back(c.context_id);
    boot_.note_revocation();
  }
  static const char none = 0;
  for (int k = 0; k < c.peer_count(); ++k) {
    const int peer = c.peer_world_rank(k);
    if (peer == boot_.rank() || boot_.peer_failed(peer)) continue;
    // Eager and small: a send to a live peer completes; one that does not is given up.
    Request r;
    r.kind = RequestKind::send;
    if (isend(&none, 0, peer, tag::make(kNoticeContext, uint32_t(boot_.rank()), c.context_id), SendMode::standard,
              &r) != Status::ok)
      continue;
    progress_.wait([&] {
      boot_.poll_local_liveness();
      return r.complete || boot_.peer_failed(peer);
    });
    if (!r.complete) fail_request(&r);
  }
  WEFT_INFO(Subsys::pt2pt, "%s revoked: its members are told", c.label().c_str());
}

bool Transport::revoked(const Comm& c) const {
  for (uint32_t id : revoked_contexts_)
    if (id == c.context_id) return true;
  return false;
}

void Transport::forget_revocation(const Comm& c) {
  std::erase(revoked_contexts_, c.context_id);
}

void Transport::poll_notices() {
  if (boot_.failures_to_announce()) [[unlikely]] send_failure_notices();
  MatchInfo info;
  void* message = nullptr;
  const uint64_t bits = tag::make(kNoticeContext, 0, 0);
  while (probe(bits, tag::kContextMask, true, &info, &message)) {
    const bool failure = uint32_t(info.tag) == kFailureNoticeTag;
    int32_t dead = -1;
    Request r;
    r.kind = RequestKind::recv;
    if (mrecv(&dead, failure ? sizeof dead : 0, message, &r) == Status::ok && !r.complete)
      progress_.wait([&] { return r.complete; });  // a matched small message: already here
    if (failure) {
      if (r.status.error != Status::ok || dead < 0 || dead >= boot_.size()) {
        WEFT_WARN(Subsys::pt2pt, "a failure notice from job rank %d was unreadable; dropped", info.source);
      } else if (!boot_.peer_failed(dead)) {
        WEFT_WARN(Subsys::pt2pt, "rank %d has terminated on another host: job rank %d, a rank of its host, says so",
                  dead, info.source);
        boot_.mark_failed(dead);
      }
      continue;
    }
    const auto context = uint32_t(info.tag);
    if (std::find(revoked_contexts_.begin(), revoked_contexts_.end(), context) == revoked_contexts_.end()) {
      revoked_contexts_.push_back(context);
      boot_.note_revocation();
      WEFT_INFO(Subsys::pt2pt, "job rank %d revoked the communicator of context %u", info.source, context);
    }
  }
}

void Transport::send_failure_notices() {
  std::erase_if(notices_, [](const std::unique_ptr<FailureNotice>& n) { return n->request.complete; });
  for (const int dead : boot_.take_failures_to_announce()) {
    int told = 0;
    for (int peer = 0; peer < boot_.size(); ++peer) {
      if (boot_.on_this_host(peer) || boot_.peer_failed(peer)) continue;
      auto n = std::make_unique<FailureNotice>();
      n->rank = dead;
      n->request.kind = RequestKind::send;
      if (isend(&n->rank, sizeof n->rank, peer, tag::make(kNoticeContext, uint32_t(boot_.rank()), kFailureNoticeTag),
                SendMode::standard, &n->request) != Status::ok)
        continue;  // isend logged why; that rank learns of the death from its host-mates' notices
      ++told;
      if (!n->request.complete) notices_.push_back(std::move(n));
    }
    WEFT_INFO(Subsys::pt2pt, "rank %d died on this host (%s): failure notices sent to the %d live ranks of other hosts",
              dead, boot_.hostname().c_str(), told);
  }
}

bool Transport::check_failure(Request* r, const Comm* scope) {
  if (wait_timed_out()) [[unlikely]] return fail_timed_out(r, scope);
  boot_.poll_local_liveness();
  if (boot_.take_periodic_turn()) [[unlikely]] poll_notices();  // every 20 ms
  if (boot_.fault_events() == 0) [[likely]] return false;
  if (boot_.failures_to_announce()) [[unlikely]] send_failure_notices();  // found on an error path
  if (r->complete || (r->kind != RequestKind::send && r->kind != RequestKind::recv)) return false;
  std::string msg;
  if (scope && revoked(*scope)) {
    msg = scope->label() + " has been revoked (MPIX_Comm_revoke): its pending operations fail";
    WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
    set_error_detail(msg);
    fail_request(r, Status::revoked);
    return true;
  }
  if (boot_.failures_seen() == 0) return false;
  if (r->peer >= 0 && boot_.peer_failed(r->peer)) {
    msg = failure_detail(scope, r->peer) + " during the operation";
  } else if (scope && fails_with_member(*scope, r->collective_step ? kCollectiveStep : r->peer)) {
    msg = failure_detail(scope, scope->world_rank(scope->failed_member)) +
          (process_fault_scope_ && !r->collective_step ? ": a wildcard receive on " + scope->label() +
                                      " fails until the failure is acknowledged (MPIX_Comm_failure_ack)"
                                : ": every pending operation on " + scope->label() + " fails");
  } else if (!scope && r->peer < 0 && r->kind == RequestKind::recv) {
    msg = "rank " + std::to_string(boot_.first_failed()) + " of the job terminated during a wildcard receive";
  } else {
    return false;
  }
  WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
  fail_request(r);
  return true;
}

void Transport::fail_request(Request* r, Status why) {
  if (r->complete) return;
  if (hybrid_) forget_watched(r);
  if (shm_) shm_->abandon(r);
  if (void* h = r->transport_handle) {
    // A posted UCX receive is taken out of matching: cancelling it runs its callback, which
    // frees it. What UCX cannot cancel (a send, a receive under way) is freed: UCX may still
    // finish it, but reports nothing more.
    if (r->kind == RequestKind::recv) ucp_request_cancel(static_cast<ucp_worker_h>(worker_), h);
    if (r->transport_handle) {
      ucp_request_free(r->transport_handle);
      r->transport_handle = nullptr;
    }
  }
  r->status.error = why;
  r->status.cancelled = false;
  r->complete = true;
}

void Transport::wait(Request* r, const Comm* scope) {
  WaitBound bound;
  progress_.wait([&] { return r->complete || check_failure(r, scope); });
  // (Under WEFT_FAULT_SCOPE=process a live peer's error is its own.)
  if (scope && (!process_fault_scope_ || r->collective_step) &&
      (r->status.error == Status::transport || r->status.error == Status::peer_failed)) {
    // In a communicator with a failed member, a transport error comes of the failure (a peer
    // gave its message up, say): it is reported as the failure, naming the rank.
    boot_.check_liveness_now();
    if (const int dead = failed_member(*scope); dead >= 0 && !boot_.peer_failed(r->peer)) {
      set_error_detail(failure_detail(scope, scope->world_rank(dead)) + ": every pending operation on " +
                       scope->label() + " fails");
      r->status.error = Status::peer_failed;
    }
  }
}

}  // namespace weft
