// KV transfer agents over UCX (kv_agent.h).
#include "kv_agent.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "kv_device.h"
#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/core/status.h"

namespace weft::kv {

namespace {

constexpr unsigned kNotificationAm = 0x5746;  // active message id of notifications
// Cross-memory-attach jobs up to this size are copied inside post: a hand-over to the copy
// thread costs several microseconds, about what copying 64 KiB does.
constexpr size_t kInlineCopyBytes = 64 * 1024;

double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

bool peer_lost(ucs_status_t st) {
  return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT || st == UCS_ERR_UNREACHABLE ||
         st == UCS_ERR_CANCELED || st == UCS_ERR_REJECTED || st == UCS_ERR_NOT_CONNECTED;
}

int ucx_error(const char* what, ucs_status_t st) {
  return kv_error(peer_lost(st) ? WEFT_KV_ERR_PEER : WEFT_KV_ERR_TRANSPORT,
                  std::string(what) + ": " + ucs_status_string(st));
}

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

// Whether the process (pid, start time) still runs on this host; a zombie counts as gone, and
// so does a reused pid (another start time).
bool process_alive(uint32_t pid, uint64_t start_time) {
  if (pid == 0) return true;  // unknown: leave it to UCX's own detection
  if (kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  char state = '?';
  uint64_t started = 0;
  if (!read_proc_stat(int(pid), &state, &started)) return kill(pid_t(pid), 0) == 0 || errno == EPERM;  // no /proc
  if (state == 'Z' || state == 'X') return false;
  return start_time == 0 || started == 0 || started == start_time;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

void wait_ucx(ucp_worker_h worker, ucs_status_ptr_t req, double limit_s) {
  if (!UCS_PTR_IS_PTR(req)) return;
  const double end = now_seconds() + limit_s;
  while (ucp_request_check_status(req) == UCS_INPROGRESS && now_seconds() < end) ucp_worker_progress(worker);
  ucp_request_free(req);
}

// A boolean WEFT_* variable (runtime/core/config.cpp lists them); agents need no MPI_Init, so
// they read the environment themselves.
bool env_flag(const char* name, bool fallback) {
  const char* v = getenv(name);
  bool on = fallback;
  if (v && !parse_bool(v, &on)) WEFT_WARN(Subsys::rma, "kv: %s=%s is not a boolean; using %d", name, v, int(fallback));
  return on;
}

// Without MPI_Init nobody applied WEFT_DEBUG and WEFT_DEBUG_SUBSYS: the first agent does.
void configure_logging() {
  if (log_configured()) return;
  LogSettings log;
  if (const char* level = getenv("WEFT_DEBUG"); level && !parse_log_level(level, &log.level))
    fprintf(stderr, "weft: WEFT_DEBUG=%s is not a level (ERROR, WARN, INFO, TRACE)\n", level);
  std::string bad;
  if (const char* subsys = getenv("WEFT_DEBUG_SUBSYS"); subsys && !parse_subsys_list(subsys, &log.subsys_mask, &bad))
    fprintf(stderr, "weft: unknown subsystem '%s' in WEFT_DEBUG_SUBSYS\n", bad.c_str());
  if (const char* file = getenv("WEFT_DEBUG_FILE")) log.file_pattern = file;
  log_configure(log, -1);
}

}  // namespace

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
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK) return ucx_error("ucp_config_read", st);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  ucp_context_h context = nullptr;
  st = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (st != UCS_OK) return ucx_error("ucp_init", st);
  context_ = context;
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // the agent's mutex serialises every call
  ucp_worker_h worker = nullptr;
  st = ucp_worker_create(context, &wp, &worker);
  if (st != UCS_OK) return ucx_error("ucp_worker_create", st);
  worker_ = worker;
  ucp_address_t* address = nullptr;
  size_t address_length = 0;
  st = ucp_worker_get_address(worker, &address, &address_length);
  if (st != UCS_OK) return ucx_error("ucp_worker_get_address", st);
  const auto* bytes = reinterpret_cast<const unsigned char*>(address);
  address_.assign(bytes, bytes + address_length);
  ucp_worker_release_address(worker, address);

  ucp_am_handler_param_t hp{};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  hp.id = kNotificationAm;
  hp.cb = [](void* arg, const void* header, size_t header_length, void* data, size_t length,
             const ucp_am_recv_param_t* param) -> ucs_status_t {
    return ucs_status_t(on_notification(arg, header, header_length, data, length, param));
  };
  hp.arg = this;
  st = ucp_worker_set_am_recv_handler(worker, &hp);
  if (st != UCS_OK) return ucx_error("ucp_worker_set_am_recv_handler", st);
  const bool use_thread = env_flag("WEFT_KV_PROGRESS_THREAD", true);
  if (use_thread) {
    st = ucp_worker_get_efd(worker, &efd_);
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
  auto* worker = static_cast<ucp_worker_h>(worker_);
  while (!stop_.load(std::memory_order_relaxed)) {
    ucs_status_t armed;
    {
      std::lock_guard<std::recursive_mutex> lock(mu_);
      while (progress_locked() > 0) {
      }
      armed = ucp_worker_arm(worker);
    }
    if (armed == UCS_ERR_BUSY) continue;
    pollfd p{efd_, POLLIN, 0};
    (void)poll(&p, 1, 100);
  }
}

Agent::~Agent() {
  auto* worker = static_cast<ucp_worker_h>(worker_);
  if (progress_thread_.joinable()) {
    stop_ = true;
    (void)ucp_worker_signal(worker);
    progress_thread_.join();
  }
  // Closing the endpoints (forced for lost peers) completes whatever UCX still holds.
  for (auto& [id, p] : peers_) close_endpoint(*p);
  for (auto& [id, p] : peers_)
    for (auto& [rid, r] : p->regions) {
      if (r.rkey) ucp_rkey_destroy(static_cast<ucp_rkey_h>(r.rkey));
      device_unmap(r.mapped);
    }
  if (worker) ucp_worker_progress(worker);
  requests_.clear();
  for (auto& [id, r] : regions_)
    if (r.memh) (void)ucp_mem_unmap(static_cast<ucp_context_h>(context_), static_cast<ucp_mem_h>(r.memh));
  if (worker) ucp_worker_destroy(worker);
  if (context_) ucp_cleanup(static_cast<ucp_context_h>(context_));
}

int Agent::register_region(void* base, size_t length, uint32_t* id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (base == nullptr || length == 0 || id == nullptr)
    return kv_error(WEFT_KV_ERR_ARG, "register: a region needs a base address and a nonzero length");
  Region r{base, length, RegionKind::host, nullptr, {}, {}};
  if (is_device_memory(base)) {
    r.kind = RegionKind::device;
    if (int rc = device_describe(base, &r.ipc); rc != WEFT_KV_SUCCESS) return rc;
  } else {
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = base;
    mp.length = length;
    ucp_mem_h memh = nullptr;
    ucs_status_t st = ucp_mem_map(static_cast<ucp_context_h>(context_), &mp, &memh);
    if (st != UCS_OK) return ucx_error("register: ucp_mem_map", st);
    void* packed = nullptr;
    size_t packed_length = 0;
    st = ucp_rkey_pack(static_cast<ucp_context_h>(context_), memh, &packed, &packed_length);
    if (st != UCS_OK) {
      (void)ucp_mem_unmap(static_cast<ucp_context_h>(context_), memh);
      return ucx_error("register: ucp_rkey_pack", st);
    }
    r.memh = memh;
    r.rkey.assign(static_cast<unsigned char*>(packed), static_cast<unsigned char*>(packed) + packed_length);
    ucp_rkey_buffer_release(packed);
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
    if (!q->released_ && std::count(q->local_regions_.begin(), q->local_regions_.end(), id))
      return kv_error(WEFT_KV_ERR_BUSY, "deregister: region " + std::to_string(id) + " is used by a request");
  if (it->second.memh)
    (void)ucp_mem_unmap(static_cast<ucp_context_h>(context_), static_cast<ucp_mem_h>(it->second.memh));
  regions_.erase(it);
  return WEFT_KV_SUCCESS;
}

int Agent::export_blob(std::vector<unsigned char>* out) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  AgentInfo info;
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
    g.rkey = r.rkey;
    g.ipc = r.ipc;
    info.regions.push_back(std::move(g));
  }
  *out = encode_blob(info);
  return WEFT_KV_SUCCESS;
}

int Agent::import_blob(const void* blob, size_t length, uint32_t* peer_id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto p = std::make_unique<Peer>();
  std::string why;
  if (!decode_blob(blob, length, &p->info, &why)) return kv_error(WEFT_KV_ERR_BLOB, "import: " + why);
  p->agent = this;
  p->id = next_peer_++;
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(p->info.address.data());
  // UCX's shared-memory transports have no peer failure handling, so asking for it would move
  // an agent on this host onto tcp; here the agent watches the peer's process itself
  // (peer_gone) and keeps shared memory and cma.
  const bool same_host = p->info.host == host_ && p->info.pid != 0;
  ep.err_mode = same_host ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = [](void* arg, ucp_ep_h ep_handle, ucs_status_t st) {
    on_endpoint_error(arg, ep_handle, int(st));
  };
  ep.err_handler.arg = p.get();
  ucp_ep_h handle = nullptr;
  ucs_status_t st = ucp_ep_create(static_cast<ucp_worker_h>(worker_), &ep, &handle);
  if (st != UCS_OK) return ucx_error(("import: connecting to agent " + p->info.name).c_str(), st);
  p->ep = handle;
  for (const RegionInfo& g : p->info.regions) {
    RemoteRegion rr;
    rr.info = g;
    if (g.kind == RegionKind::host) {
      ucp_rkey_h rkey = nullptr;
      st = ucp_ep_rkey_unpack(handle, g.rkey.data(), &rkey);
      if (st != UCS_OK) {
        for (auto& [rid, r] : p->regions) ucp_rkey_destroy(static_cast<ucp_rkey_h>(r.rkey));
        close_endpoint(*p);
        return ucx_error(("import: the remote key of region " + std::to_string(g.id)).c_str(), st);
      }
      rr.rkey = rkey;
    } else if (p->info.host != host_) {
      WEFT_INFO(Subsys::rma, "kv: agent %s's device region %u is on host %s: not reachable from here",
                p->info.name.c_str(), g.id, p->info.host.c_str());
    }
    p->regions.emplace(g.id, std::move(rr));
  }
  std::string path = "UCX";
  if (same_host) {
    auto host_region = std::find_if(p->info.regions.begin(), p->info.regions.end(),
                                    [](const RegionInfo& g) { return g.kind == RegionKind::host; });
    int error = 0;
    if (!env_flag("WEFT_KV_CMA", true)) {
      path = "UCX (WEFT_KV_CMA=0)";
    } else if (host_region == p->info.regions.end()) {
      path = "UCX (no host region to reach with cross-memory attach)";
    } else if (cma_usable(pid_t(p->info.pid), host_region->base, &error)) {
      p->cma = true;
      path = "cross-memory attach";
    } else {
      path = std::string("UCX (cross-memory attach refused: ") + strerror(error) + ")";
    }
  }
  WEFT_INFO(Subsys::rma, "kv: agent %s imported agent %s (%zu regions, host %s, pid %u): host blocks by %s, %s",
            name_.c_str(), p->info.name.c_str(), p->info.regions.size(), p->info.host.c_str(), p->info.pid,
            path.c_str(), same_host ? "a lost peer seen by watching its process" : "a lost peer reported by UCX");
  *peer_id = p->id;
  peers_.emplace(p->id, std::move(p));
  return WEFT_KV_SUCCESS;
}

int Agent::forget(uint32_t id) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Peer* p = find_peer(id);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "forget: no imported agent " + std::to_string(id));
  for (const auto& q : requests_)
    if (q->peer_ == id && !q->released_ && (q->ucx_busy() || q->state_ == Request::State::flushed))
      return kv_error(WEFT_KV_ERR_BUSY, "forget: a request to agent " + p->info.name + " is in progress");
  close_endpoint(*p);
  for (auto& [rid, r] : p->regions) {
    if (r.rkey) ucp_rkey_destroy(static_cast<ucp_rkey_h>(r.rkey));
    device_unmap(r.mapped);
  }
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
  if (p->failed == WEFT_KV_SUCCESS)
    p->agent->mark_failed(*p, ucs_status_string(ucs_status_t(status)));
}

void Agent::mark_failed(Peer& p, const char* why) {
  p.failed = WEFT_KV_ERR_PEER;
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
  close_endpoint(p);
  return true;
}

void Agent::close_endpoint(Peer& p) {
  if (!p.ep) return;
  // A live peer gets a flushed close: a forced one in the middle of tcp wireup trips an
  // assertion in UCX 1.13 on the peer's side.
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = p.failed != WEFT_KV_SUCCESS ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t req = ucp_ep_close_nbx(static_cast<ucp_ep_h>(p.ep), &rp);
  p.ep = nullptr;
  wait_ucx(static_cast<ucp_worker_h>(worker_), req, 5.0);
}

int Agent::on_notification(void* arg, const void* header, size_t header_length, void* data, size_t length,
                           const void* param) {
  auto* a = static_cast<Agent*>(arg);
  const auto* p = static_cast<const ucp_am_recv_param_t*>(param);
  if ((p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) || header_length > kMaxNameBytes ||
      length > WEFT_KV_MAX_NOTIFICATION) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped a malformed notification (%zu header bytes, %zu bytes)",
              a->name_.c_str(), header_length, length);
    return UCS_OK;
  }
  Notification n;
  n.from.assign(static_cast<const char*>(header), header_length);
  n.message.assign(static_cast<const unsigned char*>(data), static_cast<const unsigned char*>(data) + length);
  a->notifications_.push_back(std::move(n));
  return UCS_OK;
}

int Agent::take_notification(std::string* from, std::vector<unsigned char>* message, size_t capacity,
                             size_t* length) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  progress();
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

int Agent::prepare(weft_kv_op_t op, uint32_t peer_id, const weft_kv_block_t* blocks, size_t count,
                   const void* notification, size_t notification_length, Request** out) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (op != WEFT_KV_WRITE && op != WEFT_KV_READ) return kv_error(WEFT_KV_ERR_ARG, "prepare: unknown operation");
  if (count == 0 || blocks == nullptr) return kv_error(WEFT_KV_ERR_ARG, "prepare: a request needs blocks");
  if (notification_length > WEFT_KV_MAX_NOTIFICATION || (notification_length && !notification))
    return kv_error(WEFT_KV_ERR_ARG, "prepare: a notification has at most 4096 bytes");
  if (notification_length && op == WEFT_KV_READ)
    return kv_error(WEFT_KV_ERR_ARG, "prepare: only a WRITE carries a notification");
  Peer* p = find_peer(peer_id);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "prepare: no imported agent " + std::to_string(peer_id));
  std::unique_ptr<Request> q(new Request(*this, peer_id));
  q->op_ = op;
  q->ops_.reserve(count);
  std::set<uint32_t> used;
  for (size_t i = 0; i < count; ++i) {
    const weft_kv_block_t& b = blocks[i];
    const std::string which = "prepare: block " + std::to_string(i);
    auto local = regions_.find(b.local_region);
    if (local == regions_.end()) return kv_error(WEFT_KV_ERR_ARG, which + ": no local region " + std::to_string(b.local_region));
    auto remote = p->regions.find(b.remote_region);
    if (remote == p->regions.end())
      return kv_error(WEFT_KV_ERR_ARG, which + ": agent " + p->info.name + " has no region " + std::to_string(b.remote_region));
    if (b.length == 0) return kv_error(WEFT_KV_ERR_ARG, which + " has no bytes");
    const Region& l = local->second;
    RemoteRegion& r = remote->second;
    if (b.local_offset > l.length || b.length > l.length - b.local_offset)
      return kv_error(WEFT_KV_ERR_RANGE, which + " exceeds local region " + std::to_string(b.local_region));
    if (b.remote_offset > r.info.length || b.length > r.info.length - b.remote_offset)
      return kv_error(WEFT_KV_ERR_RANGE, which + " exceeds agent " + p->info.name + "'s region " + std::to_string(b.remote_region));
    Request::Op o{static_cast<char*>(l.base) + b.local_offset, r.info.base + b.remote_offset, r.rkey, b.length,
                  p->cma && l.kind == RegionKind::host && r.info.kind == RegionKind::host};
    if (l.kind == RegionKind::device || r.info.kind == RegionKind::device) {
      if (r.info.kind == RegionKind::device) {
        if (p->info.host != host_)
          return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, which + ": device memory of an agent on another host is not supported");
        if (!r.mapped) {
          if (int rc = device_map(p->id, r.info.ipc, &r.mapped); rc != WEFT_KV_SUCCESS) return rc;
        }
        o.remote = reinterpret_cast<uint64_t>(r.mapped) + b.remote_offset;
      } else {
        return kv_error(WEFT_KV_ERR_NOT_SUPPORTED,
                        which + ": between local device memory and remote host memory is not supported");
      }
      o.rkey = nullptr;
    }
    q->ops_.push_back(o);
    used.insert(b.local_region);
  }
  q->local_regions_.assign(used.begin(), used.end());
  std::vector<DeviceCopy> device_copies;
  for (const Request::Op& o : q->ops_)
    if (!o.cma && !o.rkey)
      device_copies.push_back(op == WEFT_KV_WRITE
                                  ? DeviceCopy{reinterpret_cast<void*>(o.remote), o.local, o.length}
                                  : DeviceCopy{o.local, reinterpret_cast<const void*>(o.remote), o.length});
  if (!device_copies.empty()) {
    if (int rc = device_batch_create(device_copies, &q->device_batch_); rc != WEFT_KV_SUCCESS) return rc;
  }
  for (const Request::Op& o : q->ops_) {
    if (!o.cma) continue;
    if (!q->cma_job_) {
      q->cma_job_ = std::make_shared<CmaEngine::Job>();
      q->cma_job_->pid = pid_t(p->info.pid);
      q->cma_job_->write = op == WEFT_KV_WRITE;
    }
    q->cma_job_->local.push_back({o.local, size_t(o.length)});
    q->cma_job_->remote.push_back({reinterpret_cast<void*>(o.remote), size_t(o.length)});
    q->cma_job_->bytes += o.length;
  }
  if (notification_length) {
    const auto* n = static_cast<const unsigned char*>(notification);
    q->notification_.assign(n, n + notification_length);
  }
  *out = q.get();
  requests_.push_back(std::move(q));
  return WEFT_KV_SUCCESS;
}

int Agent::progress() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return progress_locked();
}

int Agent::progress_locked() {
  const int n = int(ucp_worker_progress(static_cast<ucp_worker_h>(worker_)));
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
  std::erase_if(requests_, [](const std::unique_ptr<Request>& q) {
    return q->released_ && !q->ucx_busy() && !q->queued_;
  });
}

// ---- Request -----------------------------------------------------------------------------

Request::~Request() {
  if (device_token_) device_release(device_token_);
  device_batch_free(device_batch_);
}

int Request::post() {
  std::lock_guard<std::recursive_mutex> lock(agent_.mu_);
  if (state_ == State::data || state_ == State::flushed || state_ == State::notify)
    return kv_error(WEFT_KV_ERR_BUSY, "post: the request is still in progress");
  Agent::Peer* p = agent_.find_peer(peer_);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "post: the request's agent was forgotten");
  if (agent_.peer_gone(*p)) return kv_error(WEFT_KV_ERR_PEER, "post: agent " + p->info.name + " is gone");
  auto* ep = static_cast<ucp_ep_h>(p->ep);
  state_ = State::data;
  status_ = WEFT_KV_SUCCESS;
  ucp_request_param_t rp{};
  if (cma_job_) {
    cma_job_->done.store(false, std::memory_order_relaxed);
    cma_job_->error = 0;
    if (cma_job_->bytes <= kInlineCopyBytes)
      CmaEngine::run_now(*cma_job_);
    else
      agent_.cma_.submit(cma_job_);
  }
  if (device_batch_) {
    int rc = device_batch_start(device_batch_);
    if (rc == WEFT_KV_SUCCESS) rc = device_mark(&device_token_);
    if (rc != WEFT_KV_SUCCESS) {
      fail(rc);
      return rc;
    }
  }
  for (const Op& o : ops_) {
    if (o.cma || !o.rkey) continue;
    ucs_status_ptr_t r = op_ == WEFT_KV_WRITE ? ucp_put_nbx(ep, o.local, o.length, o.remote, static_cast<ucp_rkey_h>(o.rkey), &rp)
                                              : ucp_get_nbx(ep, o.local, o.length, o.remote, static_cast<ucp_rkey_h>(o.rkey), &rp);
    if (UCS_PTR_IS_ERR(r)) {
      const int rc = ucx_error(op_ == WEFT_KV_WRITE ? "post: ucp_put_nbx" : "post: ucp_get_nbx", UCS_PTR_STATUS(r));
      fail(rc);
      return rc;
    }
    // The flush below completes it; nothing waits for it alone.
    if (r != nullptr) ucp_request_free(r);
  }
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  rp.cb.send = [](void* request, ucs_status_t st, void* user) {
    static_cast<Request*>(user)->on_flushed(int(st));
    ucp_request_free(request);
  };
  rp.user_data = this;
  ucs_status_ptr_t f = ucp_ep_flush_nbx(ep, &rp);
  if (UCS_PTR_IS_ERR(f)) {
    const int rc = ucx_error("post: ucp_ep_flush_nbx", UCS_PTR_STATUS(f));
    fail(rc);
    return rc;
  }
  if (f == nullptr)
    on_flushed(UCS_OK);
  else
    flush_pending_ = true;
  if (!notification_.empty() && !queued_) {
    queued_ = true;
    agent_.notify_queue_.push_back(this);
  }
  return WEFT_KV_SUCCESS;
}

void Request::on_flushed(int st) {
  flush_pending_ = false;
  if (state_ != State::data) return;
  if (st != UCS_OK) {
    Agent::Peer* p = agent_.find_peer(peer_);
    fail(p && p->failed != WEFT_KV_SUCCESS ? WEFT_KV_ERR_PEER
                                           : ucx_error("transfer", ucs_status_t(st)));
    return;
  }
  flushed_ = true;
  advance();
}

// Moves a request whose UCX data has landed on once its device copies are done too.
void Request::advance() {
  if (state_ != State::data || !flushed_) return;
  if (cma_job_) {
    if (!cma_job_->done.load(std::memory_order_acquire)) return;
    if (const int error = cma_job_->error; error != 0) {
      Agent::Peer* p = agent_.find_peer(peer_);
      if (error == ESRCH && p) agent_.mark_failed(*p, "its process has exited");
      fail(kv_error(error == ESRCH ? WEFT_KV_ERR_PEER : WEFT_KV_ERR_TRANSPORT,
                    std::string("transfer: cross-memory attach: ") + strerror(error)));
      return;
    }
  }
  if (device_token_) {
    int rc = WEFT_KV_SUCCESS;
    if (!device_test(device_token_, &rc)) return;
    device_token_ = nullptr;
    if (rc != WEFT_KV_SUCCESS) {
      fail(rc);
      return;
    }
  }
  flushed_ = false;
  state_ = notification_.empty() ? State::done : State::flushed;
}

void Request::send_notification() {
  Agent::Peer* p = agent_.find_peer(peer_);
  if (released_ || !p || !p->ep) {
    fail(WEFT_KV_ERR_PEER);
    return;
  }
  state_ = State::notify;
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = UCP_AM_SEND_FLAG_EAGER;
  rp.cb.send = [](void* request, ucs_status_t st, void* user) {
    static_cast<Request*>(user)->on_notified(int(st));
    ucp_request_free(request);
  };
  rp.user_data = this;
  ucs_status_ptr_t r = ucp_am_send_nbx(static_cast<ucp_ep_h>(p->ep), kNotificationAm, agent_.name_.data(),
                                       agent_.name_.size(), notification_.data(), notification_.size(), &rp);
  if (UCS_PTR_IS_ERR(r)) {
    fail(ucx_error("notification: ucp_am_send_nbx", UCS_PTR_STATUS(r)));
  } else if (r == nullptr) {
    on_notified(UCS_OK);
  } else {
    notify_pending_ = true;
  }
}

void Request::on_notified(int st) {
  notify_pending_ = false;
  if (state_ != State::notify) return;
  if (st != UCS_OK)
    fail(ucx_error("notification", ucs_status_t(st)));
  else
    state_ = State::done;
}

void Request::fail(int status) {
  state_ = State::failed;
  status_ = status;
}

int Request::test() {
  std::lock_guard<std::recursive_mutex> lock(agent_.mu_);
  agent_.progress();
  advance();
  if (state_ == State::data || state_ == State::flushed || state_ == State::notify) {
    Agent::Peer* p = agent_.find_peer(peer_);
    if (!p || agent_.peer_gone(*p)) {
      fail(kv_error(WEFT_KV_ERR_PEER, "transfer: agent " + (p ? p->info.name : std::string("?")) + " is gone"));
    }
  }
  switch (state_) {
    case State::idle:
      return kv_error(WEFT_KV_ERR_ARG, "test: the request was never posted");
    case State::done:
      return WEFT_KV_SUCCESS;
    case State::failed:
      return status_;
    default:
      return WEFT_KV_IN_PROGRESS;
  }
}

int Request::wait(int timeout_ms) {
  const double end = timeout_ms < 0 ? 0 : now_seconds() + timeout_ms * 1e-3;
  for (unsigned spins = 0;; ++spins) {
    const int rc = test();
    if (rc != WEFT_KV_IN_PROGRESS) return rc;
    if (timeout_ms >= 0 && now_seconds() >= end)
      return kv_error(WEFT_KV_ERR_TIMEOUT, "wait: the request did not finish in " + std::to_string(timeout_ms) + " ms");
    if (spins % 64 == 63) sched_yield();  // let an oversubscribed peer run
  }
}

void Request::release() {
  std::lock_guard<std::recursive_mutex> lock(agent_.mu_);
  released_ = true;
  if (device_token_) device_release(device_token_);
  device_token_ = nullptr;
  device_batch_free(device_batch_);
  device_batch_ = nullptr;
  if (state_ == State::data || state_ == State::flushed) state_ = State::failed;  // cancelled: no notification
  agent_.reap();
}

}  // namespace weft::kv
