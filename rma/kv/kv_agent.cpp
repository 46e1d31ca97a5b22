// KV transfer agents over UCX (kv_agent.h): the agent itself, its regions, blobs and imports.
// The owner's side of transfers is kv_owner.cpp, the importer's requests kv_request.cpp.
#include "kv_agent.h"

#include <poll.h>
#include <signal.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kv_device.h"
#include "kv_ucx.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/status.h"
#include "runtime/ucx_service.h"

namespace weft::kv {

namespace {

// Reads a process's state letter and start time (clock ticks since boot) from /proc;
// false when the process does not exist.
bool read_proc_stat(int pid, char* state, uint64_t* start_time) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!f || !std::getline(f, line)) return false;
  *state = '?';
  *start_time = 0;
  const size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return true;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3) *state = field[0];
    if (i == 22) *start_time = std::strtoull(field.c_str(), nullptr, 10);
  }
  return true;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// Without MPI_Init nobody applied WEFT_DEBUG and WEFT_DEBUG_SUBSYS: the first agent does, from
// the process's settings (agents need no MPI_Init; the registry needs none either).
void configure_logging() {
  if (log_configured()) return;
  const Config& cfg = process_config();
  LogSettings log;
  if (const std::string level(cfg.value("WEFT_DEBUG")); cfg.is_set("WEFT_DEBUG") && !parse_log_level(level, &log.level))
    fprintf(stderr, "weft: WEFT_DEBUG=%s is not a level (ERROR, WARN, INFO, TRACE)\n", level.c_str());
  std::string bad;
  if (cfg.is_set("WEFT_DEBUG_SUBSYS") && !parse_subsys_list(cfg.value("WEFT_DEBUG_SUBSYS"), &log.subsys_mask, &bad))
    fprintf(stderr, "weft: unknown subsystem '%s' in WEFT_DEBUG_SUBSYS\n", bad.c_str());
  if (cfg.is_set("WEFT_DEBUG_FILE")) log.file_pattern = std::string(cfg.value("WEFT_DEBUG_FILE"));
  log_configure(log, -1);
}

// Active-message handlers are the agent's static members; UCX calls them through this.
using Handler = int (*)(void*, const void*, size_t, void*, size_t, const void*);
template <Handler H>
ucs_status_t dispatch(void* arg, const void* header, size_t header_length, void* data, size_t length,
                      const ucp_am_recv_param_t* param) {
  return ucs_status_t(H(arg, header, header_length, data, length, param));
}

}  // namespace

double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

bool peer_lost(int status) {
  const auto st = ucs_status_t(status);
  return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT || st == UCS_ERR_UNREACHABLE ||
         st == UCS_ERR_CANCELED || st == UCS_ERR_REJECTED || st == UCS_ERR_NOT_CONNECTED;
}

int ucx_error(const char* what, int status) {
  return kv_error(peer_lost(status) ? WEFT_KV_ERR_PEER : WEFT_KV_ERR_TRANSPORT,
                  std::string(what) + ": " + ucs_status_string(ucs_status_t(status)));
}

int kv_error(int code, const std::string& msg) {
  WEFT_WARN(Subsys::rma, "kv: %s", msg.c_str());
  set_error_detail(msg);
  return code;
}

uint64_t process_start_time(int pid) {
  char state = '?';
  uint64_t started = 0;
  return read_proc_stat(pid, &state, &started) ? started : 0;
}

bool process_alive(uint32_t pid, uint64_t start_time) {
  if (pid == 0) return true;  // unknown: leave it to UCX's own detection
  if (kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  char state = '?';
  uint64_t started = 0;
  if (!read_proc_stat(int(pid), &state, &started)) return kill(pid_t(pid), 0) == 0 || errno == EPERM;  // no /proc
  if (state == 'Z' || state == 'X') return false;
  return start_time == 0 || started == 0 || started == start_time;
}

// ---- Agent -------------------------------------------------------------------------------

int Agent::create(const char* name, std::unique_ptr<Agent>* out) {
  if (name == nullptr || name[0] == '\0' || strnlen(name, kMaxNameBytes + 1) > kMaxNameBytes)
    return kv_error(WEFT_KV_ERR_ARG, "an agent name must have 1 to 255 bytes");
  std::unique_ptr<Agent> a(new Agent());
  if (int rc = a->init(name); rc != WEFT_KV_SUCCESS) return rc;
  *out = std::move(a);
  return WEFT_KV_SUCCESS;
}

int Agent::init(const char* name) {
  configure_logging();
  name_ = name;
  host_ = host_name();
  start_time_ = process_start_time(int(getpid()));
  if (!random_bytes(key_.data(), key_.size()) || !random_bytes(instance_.data(), instance_.size()))
    return kv_error(WEFT_KV_ERR_TRANSPORT, "agent_create: the system's random generator failed");
  unchecked_prepare_ = setting_bool("WEFT_KV_UNCHECKED_PREPARE");
  UcxOptions uo;
  // Active messages only: without UCP_FEATURE_RMA the worker runs no handler that writes or
  // reads memory at an address a peer names (UCX's software RMA on tcp and shared memory).
  uo.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  uo.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // the agent's mutex serialises every call
  const char* failed = nullptr;
  ucs_status_t st = UcxService::create(uo, &ucx_, &failed);
  if (st != UCS_OK) return ucx_error(failed, st);
  st = ucx_->address(&address_);
  if (st != UCS_OK) return ucx_error("ucp_worker_get_address", st);

  const std::pair<unsigned, ucp_am_recv_callback_t> handlers[] = {
      {wire::kHello, dispatch<on_hello>},     {wire::kWrite, dispatch<on_write>},
      {wire::kRead, dispatch<on_read>},       {wire::kNotify, dispatch<on_notify>},
      {wire::kBye, dispatch<on_bye>},         {wire::kVerdict, dispatch<on_verdict>},
      {wire::kDone, dispatch<on_done>},       {wire::kReadData, dispatch<on_read_data>},
  };
  for (const auto& [id, handler] : handlers)
    if (const ucs_status_t hs = ucx_->set_am_handler(id, handler, this); hs != UCS_OK)
      return ucx_error(("ucp_worker_set_am_recv_handler " + std::to_string(id)).c_str(), hs);
  const bool use_thread = setting_bool("WEFT_KV_PROGRESS_THREAD");
  if (use_thread) {
    st = ucx_->event_fd(&efd_);
    if (st != UCS_OK) return ucx_error("ucp_worker_get_efd", st);
    progress_thread_ = std::thread([this] { progress_thread_main(); });
  }
  WEFT_INFO(Subsys::rma, "kv: agent %s created (pid %d, %s)", name_.c_str(), int(getpid()),
            use_thread ? "progress thread" : "progressed by the program");
  return WEFT_KV_SUCCESS;
}

// Progresses while there is work, then sleeps on the worker's event descriptor (at most
// 100 ms, so a peer's liveness is still looked at and stop_ is seen).
void Agent::progress_thread_main() {
  while (!stop_.load(std::memory_order_relaxed)) {
    ucs_status_t armed;
    {
      std::lock_guard<std::recursive_mutex> lock(mu_);
      while (progress_locked() > 0) {
      }
      armed = ucx_->arm();
    }
    if (armed == UCS_ERR_BUSY) continue;
    pollfd p{efd_, POLLIN, 0};
    (void)poll(&p, 1, 100);
  }
}

Agent::~Agent() {
  const bool have_worker = ucx_ != nullptr;
  if (progress_thread_.joinable()) {
    stop_ = true;
    (void)ucx_->signal();
    progress_thread_.join();
  }
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (have_worker) {
    for (auto& [id, p] : peers_)
      if (p->ep && p->failed == WEFT_KV_SUCCESS) {
        wire::SessionOnly bye{p->session};
        auto out = std::make_unique<Outgoing>(this);
        out->header = wire::bytes_of(bye);
        (void)send(p->ep, wire::kBye, std::move(out), nullptr, 0, true);
      }
    (void)progress_locked();
  }
  // Closing the endpoints (forced for lost peers) completes whatever UCX still holds.
  for (auto& [id, p] : peers_) close_endpoint(&p->ep, p->failed != WEFT_KV_SUCCESS);
  for (auto& [id, s] : sessions_) close_endpoint(&s->ep, s->lost);
  finish_closing(true);
  for (auto& [id, p] : peers_)
    for (auto& [rid, r] : p->regions) device_unmap(r.mapped);
  if (have_worker) (void)progress_locked();
  // UCX's shared-memory transports have no failure handling: a rendezvous send to a peer on this
  // host that died is never completed, and ucp_cleanup would abort the process on the memory
  // registration it still holds. Such a worker and context are left to the process's exit.
  size_t held = ucx_owned_.size();
  for (const auto& q : requests_) held += q->ucx_busy() ? 1 : 0;
  if (held) {
    WEFT_WARN(Subsys::rma, "kv: agent %s: %zu operations to lost peers were never completed by UCX; its UCX "
              "worker and context are left to the process's exit", name_.c_str(), held);
    (void)ucx_.release();  // deliberately not destroyed
  } else {
    ucx_.reset();  // the worker, then the context
  }
  requests_.clear();
  device_stop_free(&device_stop_);
  // Records of operations UCX never completed (their peer was gone).
  for (UcxOwned* p : ucx_owned_) delete p;
}

int Agent::register_region(void* base, size_t length, uint32_t* id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (base == nullptr || length == 0 || id == nullptr)
    return kv_error(WEFT_KV_ERR_ARG, "register: a region needs a base address and a nonzero length");
  Region r{base, length, RegionKind::host, {}, 0};
  if (is_device_memory(base)) {
    r.kind = RegionKind::device;
    if (int rc = device_describe(base, &r.ipc); rc != WEFT_KV_SUCCESS) return rc;
  }
  *id = next_region_++;
  regions_.emplace(*id, std::move(r));
  WEFT_INFO(Subsys::rma, "kv: agent %s registered region %u (%zu bytes of %s memory)", name_.c_str(), *id, length,
            regions_[*id].kind == RegionKind::device ? "device" : "host");
  return WEFT_KV_SUCCESS;
}

int Agent::deregister(uint32_t id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = regions_.find(id);
  if (it == regions_.end()) return kv_error(WEFT_KV_ERR_ARG, "deregister: no region " + std::to_string(id));
  for (const auto& q : requests_)
    if ((!q->released_ || q->ucx_busy()) && std::count(q->local_regions_.begin(), q->local_regions_.end(), id))
      return kv_error(WEFT_KV_ERR_BUSY, "deregister: region " + std::to_string(id) + " is used by a request");
  (void)progress_locked();  // lets transfers that have landed let go of it
  if (it->second.in_flight)
    return kv_error(WEFT_KV_ERR_BUSY, "deregister: a transfer of an importer into or out of region " +
                                          std::to_string(id) + " is in progress");
  // From now on every importer's request for it is refused: sessions only name region ids.
  regions_.erase(it);
  return WEFT_KV_SUCCESS;
}

int Agent::export_blob(std::vector<unsigned char>* out) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  AgentInfo info;
  info.instance = instance_;
  info.name = name_;
  info.host = host_;
  info.pid = uint32_t(getpid());
  info.start_time = start_time_;
  info.address = address_;
  for (const auto& [id, r] : regions_) {
    RegionInfo g;
    g.id = id;
    g.kind = r.kind;
    g.base = reinterpret_cast<uint64_t>(r.base);
    g.length = r.length;
    g.ipc = r.ipc;
    info.regions.push_back(std::move(g));
  }
  *out = encode_blob(info, key_);
  if (out->empty()) return kv_error(WEFT_KV_ERR_TRANSPORT, "export: sealing the blob failed");
  return WEFT_KV_SUCCESS;
}

void* Agent::connect(const std::vector<unsigned char>& address, bool same_host, void* error_arg, bool session,
                     int* rc) {
  // UCX's shared-memory transports have no peer failure handling, so asking for it would move
  // an agent on this host onto tcp; there the agent watches the peer's process itself and keeps
  // shared memory.
  const ucp_err_handler_cb_t on_error =
      session ? [](void* arg, ucp_ep_h e, ucs_status_t st) { on_session_error(arg, e, int(st)); }
              : [](void* arg, ucp_ep_h e, ucs_status_t st) { on_endpoint_error(arg, e, int(st)); };
  ucp_ep_h handle = nullptr;
  const ucs_status_t st = ucx_->connect(address.data(), !same_host, on_error, error_arg, &handle);
  *rc = st == UCS_OK ? WEFT_KV_SUCCESS : int(st);
  return st == UCS_OK ? handle : nullptr;
}

// The owner answers a HELLO carrying its blob: the import succeeds only if the owner vouches for
// the blob (its seal, its incarnation, its regions as registered now).
int Agent::import_blob(const void* blob, size_t length, uint32_t* peer_id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto p = std::make_unique<Peer>();
  std::string why;
  if (!decode_blob(blob, length, &p->info, &why)) return kv_error(WEFT_KV_ERR_BLOB, "import: " + why);
  p->agent = this;
  const bool same_host = p->info.host == host_ && p->info.pid != 0;
  int st = 0;
  p->ep = connect(p->info.address, same_host, p.get(), false, &st);
  if (!p->ep) return ucx_error(("import: connecting to agent " + p->info.name).c_str(), st);

  uint64_t token = 0;
  while (token == 0 || verdicts_.count(token))
    if (!random_bytes(&token, sizeof token)) token = uint64_t(now_seconds() * 1e9);
  verdicts_[token] = Verdict{};
  wire::Hello h{token, start_time_, uint32_t(getpid()), uint16_t(name_.size()), uint16_t(host_.size()),
                uint32_t(address_.size()), uint32_t(length)};
  auto out = std::make_unique<Outgoing>(this);
  out->header = wire::bytes_of(h);
  const auto* b = static_cast<const unsigned char*>(blob);
  out->payload.insert(out->payload.end(), name_.begin(), name_.end());
  out->payload.insert(out->payload.end(), host_.begin(), host_.end());
  out->payload.insert(out->payload.end(), address_.begin(), address_.end());
  out->payload.insert(out->payload.end(), b, b + length);
  if (int rc = send(p->ep, wire::kHello, std::move(out), nullptr, 0, true); rc != WEFT_KV_SUCCESS) {
    close_endpoint(&p->ep, true);
    return rc;
  }
  const long limit_ms = long(setting_integer("WEFT_KV_IMPORT_TIMEOUT", 0));
  const double started = now_seconds(), end = started + double(limit_ms) * 1e-3;
  int rc = WEFT_KV_SUCCESS;
  for (unsigned spins = 0;; ++spins) {
    (void)progress_locked();
    if (verdicts_[token].answered) break;
    // What the blob says of its process is a claim until the owner has answered: a blob naming a
    // process that is gone ends the wait early only once the owner had a second to answer.
    if (p->failed != WEFT_KV_SUCCESS ||
        (same_host && now_seconds() >= started + 1.0 && !process_alive(p->info.pid, p->info.start_time))) {
      rc = kv_error(WEFT_KV_ERR_PEER, "import: agent " + p->info.name + " is gone");
      break;
    }
    if (now_seconds() >= end) {
      rc = kv_error(WEFT_KV_ERR_PEER, "import: agent " + p->info.name + " did not answer within " +
                                          std::to_string(limit_ms) + " ms (WEFT_KV_IMPORT_TIMEOUT): not running, "
                                          "not progressing, or not the agent the blob names");
      break;
    }
    if (spins % 64 == 63) {
      mu_.unlock();  // lets an agent of this process answer from its own progress thread
      sched_yield();
      mu_.lock();
    }
  }
  if (rc == WEFT_KV_SUCCESS) {
    const Verdict v = verdicts_[token];
    verdicts_.erase(token);
    if (v.status != WEFT_KV_SUCCESS)
      rc = kv_error(WEFT_KV_ERR_BLOB, "import: agent " + p->info.name + " refused the blob: " + v.reason);
    p->session = v.session;
  }
  if (rc != WEFT_KV_SUCCESS) {
    verdicts_.erase(token);
    close_endpoint(&p->ep, p->failed != WEFT_KV_SUCCESS);
    return rc;
  }
  p->id = next_peer_++;
  for (const RegionInfo& g : p->info.regions) {
    if (g.kind == RegionKind::device && !same_host)
      WEFT_INFO(Subsys::rma, "kv: agent %s's device region %u is on host %s: not reachable from here",
                p->info.name.c_str(), g.id, p->info.host.c_str());
    p->regions.emplace(g.id, RemoteRegion{g, nullptr});
  }
  WEFT_INFO(Subsys::rma,
            "kv: agent %s imported agent %s (%zu regions, host %s, pid %u): the owner vouched for the blob; "
            "transfers applied by the owner, %s",
            name_.c_str(), p->info.name.c_str(), p->info.regions.size(), p->info.host.c_str(), p->info.pid,
            same_host ? "a lost peer seen by watching its process" : "a lost peer reported by UCX");
  *peer_id = p->id;
  peers_.emplace(p->id, std::move(p));
  return WEFT_KV_SUCCESS;
}

int Agent::forget(uint32_t id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Peer* p = find_peer(id);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "forget: no imported agent " + std::to_string(id));
  for (const auto& q : requests_)
    if (q->peer_ == id && (q->ucx_busy() || (!q->released_ && (q->state_ == Request::State::data ||
                                                               q->state_ == Request::State::flushed))))
      return kv_error(WEFT_KV_ERR_BUSY, "forget: a request to agent " + p->info.name + " is in progress");
  if (p->ep && p->failed == WEFT_KV_SUCCESS) {
    wire::SessionOnly bye{p->session};
    auto out = std::make_unique<Outgoing>(this);
    out->header = wire::bytes_of(bye);
    (void)send(p->ep, wire::kBye, std::move(out), nullptr, 0, true);
  }
  close_endpoint(&p->ep, p->failed != WEFT_KV_SUCCESS);
  for (auto& [rid, r] : p->regions) device_unmap(r.mapped);
  peers_.erase(id);
  return WEFT_KV_SUCCESS;
}

int Agent::peer_name(uint32_t id, std::string* name) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = peers_.find(id);
  if (it == peers_.end()) return kv_error(WEFT_KV_ERR_ARG, "no imported agent " + std::to_string(id));
  *name = it->second->info.name;
  return WEFT_KV_SUCCESS;
}

Agent::Peer* Agent::find_peer(uint32_t id) {
  auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : it->second.get();
}

void Agent::on_endpoint_error(void* arg, void* /*ep*/, int status) {
  auto* p = static_cast<Peer*>(arg);
  if (p->failed == WEFT_KV_SUCCESS) p->agent->mark_failed(*p, ucs_status_string(ucs_status_t(status)));
}

void Agent::mark_failed(Peer& p, const char* why) {
  p.failed = WEFT_KV_ERR_PEER;
  device_stop_raise(&device_stop_);  // a device wait for this peer's signal would never end
  WEFT_WARN(Subsys::rma, "kv: agent %s lost agent %s (pid %u on %s): %s", name_.c_str(), p.info.name.c_str(),
            p.info.pid, p.info.host.c_str(), why);
}

bool Agent::peer_gone(Peer& p) {
  if (p.failed != WEFT_KV_SUCCESS) return true;
  if (p.info.host != host_) return false;  // UCX's error handling reports peers elsewhere
  const double t = now_seconds();
  if (t < p.next_liveness_check) return false;
  p.next_liveness_check = t + 0.1;
  if (process_alive(p.info.pid, p.info.start_time)) return false;
  mark_failed(p, "its process has exited");
  // Forcing the endpoint closed completes the requests UCX still holds for it.
  close_endpoint(&p.ep, true);
  return true;
}

void Agent::close_endpoint(void** ep, bool force) {
  if (!*ep) return;
  // A live peer gets a flushed close: a forced one in the middle of tcp wireup trips an
  // assertion in UCX 1.13 on the peer's side.
  ucs_status_ptr_t req = UcxService::close(static_cast<ucp_ep_h>(*ep), force);
  *ep = nullptr;
  ucx_->wait(req, 5.0);
}

int Agent::send(void* ep, unsigned id, std::unique_ptr<Outgoing> out, const void* data, size_t length, bool eager) {
  if (!ep) {
    if (out->region) release_region(out->region);
    return kv_error(WEFT_KV_ERR_PEER, "send: the peer's endpoint is closed");
  }
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = eager ? UCP_AM_SEND_FLAG_EAGER : 0;
  rp.cb.send = [](void* request, ucs_status_t, void* user) {
    auto* o = static_cast<Outgoing*>(user);
    o->agent->ucx_owned_.erase(o);
    if (o->region) o->agent->release_region(o->region);
    delete o;
    ucp_request_free(request);
  };
  rp.user_data = out.get();
  if (!data) {
    data = out->payload.data();
    length = out->payload.size();
  }
  ucs_status_ptr_t r = ucp_am_send_nbx(static_cast<ucp_ep_h>(ep), id, out->header.data(), out->header.size(), data,
                                       length, &rp);
  if (UCS_PTR_IS_PTR(r)) {
    ucx_owned_.insert(out.release());
    return WEFT_KV_SUCCESS;
  }
  if (out->region) release_region(out->region);
  return UCS_PTR_IS_ERR(r) ? ucx_error("ucp_am_send_nbx", UCS_PTR_STATUS(r)) : WEFT_KV_SUCCESS;
}

void Agent::release_region(uint32_t id) {
  auto it = regions_.find(id);
  if (it != regions_.end() && it->second.in_flight) --it->second.in_flight;
}

int Agent::take_notification(std::string* from, std::vector<unsigned char>* message, size_t capacity,
                             size_t* length) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  (void)progress_locked();
  if (notifications_.empty()) return WEFT_KV_NO_NOTIFICATION;
  Notification& n = notifications_.front();
  *length = n.message.size();
  if (n.message.size() > capacity)
    return kv_error(WEFT_KV_ERR_TOO_SMALL, "get_notification: the message has " + std::to_string(n.message.size()) +
                                               " bytes, more than the buffer's " + std::to_string(capacity));
  *from = std::move(n.from);
  *message = std::move(n.message);
  notifications_.pop_front();
  return WEFT_KV_SUCCESS;
}

int Agent::progress() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return progress_locked();
}

int Agent::progress_locked() {
  int n = int(ucx_->progress());
  // Work the callbacks queued: replies, rendezvous receives, reads to serve.
  for (int rounds = 0; !deferred_.empty() && rounds < 4096; ++rounds) {
    auto work = std::move(deferred_.front());
    deferred_.pop_front();
    work();
    ++n;
  }
  watch_sessions();
  if (!closing_.empty()) finish_closing(false);
  // Notifications go out in posting order, each once its data has landed.
  while (!notify_queue_.empty()) {
    Request* q = notify_queue_.front();
    q->advance();
    if (q->state_ == Request::State::data) break;
    notify_queue_.pop_front();
    q->queued_ = false;
    if (q->state_ == Request::State::flushed) q->send_notification();
  }
  reap();
  return n;
}

void Agent::reap() {
  std::erase_if(requests_, [this](const std::unique_ptr<Request>& q) {
    const bool done = q->released_ && !q->ucx_busy() && !q->queued_;
    if (done) request_ids_.erase(q->id_);
    return done;
  });
}

Request* Agent::find_request(uint64_t id) {
  auto it = request_ids_.find(id);
  return it == request_ids_.end() ? nullptr : it->second;
}

int Agent::wait_signal_enqueue(const void* word, uint64_t value, void* stream) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!word || reinterpret_cast<uintptr_t>(word) % 8 != 0)
    return kv_error(WEFT_KV_ERR_ARG, "wait_signal_enqueue: the counter must be an 8-byte aligned device word");
  if (!is_device_memory(word))
    return kv_error(WEFT_KV_ERR_ARG, "wait_signal_enqueue: the counter is not in device memory");
  return device_wait_enqueue(&device_stop_, word, value, stream);
}

}  // namespace weft::kv
