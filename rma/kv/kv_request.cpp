// The importer's side of KV transfers (kv_agent.h, kv_wire.h): requests are prepared against the
// regions the owner vouched for at import, posted as WRITE blocks or one READ, and complete when
// the owner's DONE (and, for a READ, every block it sends back) has arrived. What the owner sends
// lands only in the blocks this request asked for.
#include <sched.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "kv_agent.h"
#include "kv_device.h"
#include "kv_ucx.h"
#include "runtime/log.h"
#include "runtime/status.h"

namespace weft::kv {

namespace {

bool rendezvous(const void* param) {
  return (static_cast<const ucp_am_recv_param_t*>(param)->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
}

std::string reason_text(const void* data, size_t length, const void* param) {
  if (rendezvous(param)) return "(no reason given)";
  return std::string(static_cast<const char*>(data), std::min<size_t>(length, wire::kMaxReasonBytes));
}

uint64_t random_id() {
  uint64_t id = 0;
  while (id == 0)
    if (!random_bytes(&id, sizeof id)) id = uint64_t(now_seconds() * 1e9);
  return id;
}

}  // namespace

// ---- The agent's importer side -------------------------------------------------------------

int Agent::prepare(weft_kv_op_t op, uint32_t peer_id, const weft_kv_block_t* blocks, size_t count,
                   const void* notification, size_t notification_length, Request** out) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (op != WEFT_KV_WRITE && op != WEFT_KV_READ) return kv_error(WEFT_KV_ERR_ARG, "prepare: unknown operation");
  if (count == 0 || blocks == nullptr) return kv_error(WEFT_KV_ERR_ARG, "prepare: a request needs blocks");
  if (count > wire::kMaxBlocksPerPost)
    return kv_error(WEFT_KV_ERR_ARG, "prepare: a request has at most " + std::to_string(wire::kMaxBlocksPerPost) + " blocks");
  if (notification_length > WEFT_KV_MAX_NOTIFICATION || (notification_length && !notification))
    return kv_error(WEFT_KV_ERR_ARG, "prepare: a notification has at most 4096 bytes");
  if (notification_length && op == WEFT_KV_READ)
    return kv_error(WEFT_KV_ERR_ARG, "prepare: only a WRITE carries a notification");
  Peer* p = find_peer(peer_id);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "prepare: no imported agent " + std::to_string(peer_id));
  uint64_t id = random_id();
  while (request_ids_.count(id)) id = random_id();
  std::unique_ptr<Request> q(new Request(*this, peer_id, id));
  q->op_ = op;
  q->ops_.reserve(count);
  std::set<uint32_t> used;
  for (size_t i = 0; i < count; ++i) {
    const weft_kv_block_t& b = blocks[i];
    const std::string which = "prepare: block " + std::to_string(i);
    auto local = regions_.find(b.local_region);
    if (local == regions_.end()) return kv_error(WEFT_KV_ERR_ARG, which + ": no local region " + std::to_string(b.local_region));
    if (b.length == 0) return kv_error(WEFT_KV_ERR_ARG, which + " has no bytes");
    const Region& l = local->second;
    if (b.local_offset > l.length || b.length > l.length - b.local_offset)
      return kv_error(WEFT_KV_ERR_RANGE, which + " exceeds local region " + std::to_string(b.local_region));
    auto remote = p->regions.find(b.remote_region);
    // WEFT_KV_UNCHECKED_PREPARE leaves the remote side to the owner's own checks.
    if (!unchecked_prepare_) {
      if (remote == p->regions.end())
        return kv_error(WEFT_KV_ERR_ARG, which + ": agent " + p->info.name + " has no region " + std::to_string(b.remote_region));
      const RegionInfo& r = remote->second.info;
      if (b.remote_offset > r.length || b.length > r.length - b.remote_offset)
        return kv_error(WEFT_KV_ERR_RANGE, which + " exceeds agent " + p->info.name + "'s region " + std::to_string(b.remote_region));
    }
    Request::Op o{static_cast<char*>(l.base) + b.local_offset, b.remote_region, b.remote_offset, b.length, nullptr};
    const bool remote_device = remote != p->regions.end() && remote->second.info.kind == RegionKind::device;
    if (remote_device) {
      if (p->info.host != host_)
        return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, which + ": device memory of an agent on another host is not supported");
      RemoteRegion& r = remote->second;
      if (b.remote_offset > r.info.length || b.length > r.info.length - b.remote_offset)
        return kv_error(WEFT_KV_ERR_RANGE, which + " exceeds agent " + p->info.name + "'s region " + std::to_string(b.remote_region));
      if (!r.mapped) {
        if (int rc = device_map(p->id, r.info.ipc, &r.mapped); rc != WEFT_KV_SUCCESS) return rc;
      }
      o.device_remote = static_cast<char*>(r.mapped) + b.remote_offset;
    } else if (l.kind == RegionKind::device) {
      return kv_error(WEFT_KV_ERR_NOT_SUPPORTED,
                      which + ": between local device memory and remote host memory is not supported");
    }
    q->ops_.push_back(o);
    used.insert(b.local_region);
  }
  q->local_regions_.assign(used.begin(), used.end());
  std::vector<DeviceCopy> device_copies;
  for (size_t i = 0; i < q->ops_.size(); ++i) {
    const Request::Op& o = q->ops_[i];
    if (o.device_remote) {
      device_copies.push_back(op == WEFT_KV_WRITE ? DeviceCopy{o.device_remote, o.local, o.length}
                                                  : DeviceCopy{o.local, o.device_remote, o.length});
    } else {
      q->host_ops_.push_back(uint32_t(i));
      if (op == WEFT_KV_READ) q->read_list_.push_back(wire::ReadBlock{o.remote_region, 0, o.remote_offset, o.length});
    }
  }
  q->landed_post_.assign(q->host_ops_.size(), 0);
  if (!device_copies.empty()) {
    if (int rc = device_batch_create(device_copies, &q->device_batch_); rc != WEFT_KV_SUCCESS) return rc;
  }
  if (notification_length) {
    const auto* n = static_cast<const unsigned char*>(notification);
    q->notification_.assign(n, n + notification_length);
  }
  *out = q.get();
  request_ids_[id] = q.get();
  requests_.push_back(std::move(q));
  return WEFT_KV_SUCCESS;
}

int Agent::on_verdict(void* arg, const void* header, size_t header_length, void* data, size_t length,
                      const void* param) {
  auto* a = static_cast<Agent*>(arg);
  wire::Verdict v{};
  if (!wire::read_header(header, header_length, &v)) return UCS_OK;
  auto it = a->verdicts_.find(v.token);
  if (it == a->verdicts_.end() || it->second.answered) return UCS_OK;  // nobody asked
  it->second = Verdict{v.status, v.session, reason_text(data, length, param), true};
  return UCS_OK;
}

int Agent::on_done(void* arg, const void* header, size_t header_length, void* data, size_t length,
                   const void* param) {
  auto* a = static_cast<Agent*>(arg);
  wire::Done d{};
  if (Request* q = a->request_named(header, header_length, &d)) q->on_done(d, reason_text(data, length, param));
  return UCS_OK;
}

int Agent::on_read_data(void* arg, const void* header, size_t header_length, void* data, size_t length,
                        const void* param) {
  auto* a = static_cast<Agent*>(arg);
  wire::ReadData h{};
  Request* q = a->request_named(header, header_length, &h);
  if (!q) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped %zu bytes of READ data for no request of its own", a->name_.c_str(),
              length);
    return UCS_OK;
  }
  return q->on_read_data(h.post, h.index, data, length, rendezvous(param));
}

// ---- Request -------------------------------------------------------------------------------

Request::~Request() {
  if (device_token_) device_release(device_token_);
  device_batch_free(device_batch_);
}

int Request::post() {
  std::lock_guard<std::recursive_mutex> lock(agent_.mu_);
  Agent::Peer* p = agent_.find_peer(peer_);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "post: the request's agent was forgotten");
  if (agent_.peer_gone(*p)) return kv_error(WEFT_KV_ERR_PEER, "post: agent " + p->info.name + " is gone");
  if (state_ == State::data || state_ == State::flushed || state_ == State::notify || sends_in_flight_ ||
      receives_in_flight_)
    return kv_error(WEFT_KV_ERR_BUSY, "post: the request is still in progress");
  auto* ep = static_cast<ucp_ep_h>(p->ep);
  ++post_;
  state_ = State::data;
  status_ = WEFT_KV_SUCCESS;
  landed_ = 0;
  done_ = host_ops_.empty();  // nothing for the owner to move
  if (device_batch_) {
    int rc = device_batch_start(device_batch_);
    if (rc == WEFT_KV_SUCCESS && signal_word_) rc = device_signal_add(signal_word_);
    if (rc == WEFT_KV_SUCCESS) rc = device_mark(&device_token_);
    if (rc != WEFT_KV_SUCCESS) {
      fail(rc);
      return rc;
    }
  }
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  rp.cb.send = [](void* request, ucs_status_t st, void* user) {
    auto* q = static_cast<Request*>(user);
    --q->sends_in_flight_;
    // A block the owner refused is explained by its DONE; anything else ends the post.
    if (st != UCS_OK && st != UCS_ERR_REJECTED && q->state_ == State::data)
      q->fail(ucx_error("transfer", st));
    ucp_request_free(request);
  };
  rp.user_data = this;
  const uint32_t count = uint32_t(host_ops_.size());
  auto sent = [&](ucs_status_ptr_t r, const char* what) {
    if (UCS_PTR_IS_PTR(r)) ++sends_in_flight_;
    if (!UCS_PTR_IS_ERR(r)) return true;
    fail(ucx_error(what, UCS_PTR_STATUS(r)));
    return false;
  };
  if (op_ == WEFT_KV_WRITE) {
    rp.flags = 0;  // large blocks go by rendezvous, straight into the owner's region
    headers_.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      const Op& o = ops_[host_ops_[i]];
      headers_[i] = wire::Transfer{p->session, id_, post_, i, count, o.remote_region, o.remote_offset};
      if (!sent(ucp_am_send_nbx(ep, wire::kWrite, &headers_[i], sizeof headers_[i], o.local, o.length, &rp),
                "post: sending a block"))
        return status_;
    }
  } else if (count) {
    rp.flags = UCP_AM_SEND_FLAG_EAGER;
    read_header_ = wire::Transfer{p->session, id_, post_, 0, count, 0, 0};
    if (!sent(ucp_am_send_nbx(ep, wire::kRead, &read_header_, sizeof read_header_, read_list_.data(),
                              read_list_.size() * sizeof(wire::ReadBlock), &rp),
              "post: sending the READ"))
      return status_;
  }
  if (!notification_.empty() && !queued_) {
    queued_ = true;
    agent_.notify_queue_.push_back(this);
  }
  advance();
  return WEFT_KV_SUCCESS;
}

int Request::set_device_signal(uint32_t remote_region, uint64_t remote_offset) {
  std::lock_guard<std::recursive_mutex> lock(agent_.mu_);
  if (op_ != WEFT_KV_WRITE) return kv_error(WEFT_KV_ERR_NOT_SUPPORTED, "set_device_signal: only a WRITE signals");
  if (!device_batch_ || !host_ops_.empty())
    return kv_error(WEFT_KV_ERR_NOT_SUPPORTED,
                    "set_device_signal: every block must go to device memory of an agent on this host");
  if (state_ == State::data || state_ == State::flushed || state_ == State::notify)
    return kv_error(WEFT_KV_ERR_BUSY, "set_device_signal: the request is in progress");
  Agent::Peer* p = agent_.find_peer(peer_);
  if (!p) return kv_error(WEFT_KV_ERR_ARG, "set_device_signal: the request's agent was forgotten");
  auto r = p->regions.find(remote_region);
  if (r == p->regions.end() || r->second.info.kind != RegionKind::device)
    return kv_error(WEFT_KV_ERR_ARG, "set_device_signal: agent " + p->info.name + " has no device region " +
                                         std::to_string(remote_region));
  const RegionInfo& info = r->second.info;
  if (remote_offset % 8 != 0 || remote_offset > info.length || info.length - remote_offset < 8)
    return kv_error(WEFT_KV_ERR_RANGE, "set_device_signal: 8 bytes at offset " + std::to_string(remote_offset) +
                                           " are not an aligned word of agent " + p->info.name + "'s region " +
                                           std::to_string(remote_region));
  if (!r->second.mapped) {
    if (int rc = device_map(p->id, info.ipc, &r->second.mapped); rc != WEFT_KV_SUCCESS) return rc;
  }
  signal_word_ = static_cast<char*>(r->second.mapped) + remote_offset;
  return WEFT_KV_SUCCESS;
}

void Request::on_done(const wire::Done& d, const std::string& reason) {
  if (d.post != post_ || state_ != State::data) return;
  if (d.status != WEFT_KV_SUCCESS) {
    Agent::Peer* p = agent_.find_peer(peer_);
    const int code = d.status < 0 && d.status >= WEFT_KV_ERR_TOO_SMALL ? d.status : WEFT_KV_ERR_TRANSPORT;
    fail(kv_error(code, "transfer: agent " + (p ? p->info.name : std::string("?")) + " refused it: " + reason));
    return;
  }
  if (op_ == WEFT_KV_READ && d.blocks != host_ops_.size()) {
    fail(kv_error(WEFT_KV_ERR_TRANSPORT, "transfer: the owner sent " + std::to_string(d.blocks) + " of " +
                                             std::to_string(host_ops_.size()) + " blocks"));
    return;
  }
  done_ = true;
  advance();
}

int Request::on_read_data(uint32_t post, uint32_t index, const void* data, size_t length, bool rndv) {
  const bool expected = post == post_ && state_ == State::data && op_ == WEFT_KV_READ && index < host_ops_.size() &&
                        landed_post_[index] != post && length == ops_[host_ops_[index]].length;
  if (!expected) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped READ data it did not ask for (post %u, block %u, %zu bytes)",
              agent_.name_.c_str(), post, index, length);
    return rndv ? UCS_ERR_REJECTED : UCS_OK;
  }
  landed_post_[index] = post;
  void* local = ops_[host_ops_[index]].local;
  if (!rndv) {
    std::memcpy(local, data, length);
    ++landed_;
    return UCS_OK;
  }
  ++receives_in_flight_;
  auto* in = new Agent::Incoming(&agent_);
  in->to_owner = false;
  in->request = id_;
  in->post = post;
  in->index = index;
  Agent& a = agent_;
  a.deferred_.push_back([&a, in, desc = const_cast<void*>(data), local, length] { a.receive(in, desc, local, length); });
  return UCS_INPROGRESS;
}

void Request::on_received(uint32_t post, uint32_t /*index*/, int status) {
  --receives_in_flight_;
  if (post != post_ || state_ != State::data) return;
  if (status != UCS_OK) {
    fail(ucx_error("transfer: receiving a block", status));
    return;
  }
  ++landed_;
  advance();
}

bool Request::host_part_landed() const {
  return done_ && sends_in_flight_ == 0 && (op_ == WEFT_KV_WRITE || landed_ == host_ops_.size());
}

// Moves a request whose bytes have all landed on, once its device copies are done too.
void Request::advance() {
  if (state_ != State::data || !host_part_landed()) return;
  if (device_token_) {
    int rc = WEFT_KV_SUCCESS;
    if (!device_test(device_token_, &rc)) return;
    device_token_ = nullptr;
    if (rc != WEFT_KV_SUCCESS) {
      fail(rc);
      return;
    }
  }
  state_ = notification_.empty() ? State::done : State::flushed;
}

void Request::send_notification() {
  Agent::Peer* p = agent_.find_peer(peer_);
  if (released_ || !p || !p->ep) {
    fail(kv_error(WEFT_KV_ERR_PEER, "notification: the agent it goes to is gone"));
    return;
  }
  state_ = State::notify;
  notify_header_ = wire::SessionOnly{p->session};
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = UCP_AM_SEND_FLAG_EAGER;
  rp.cb.send = [](void* request, ucs_status_t st, void* user) {
    static_cast<Request*>(user)->on_notified(int(st));
    ucp_request_free(request);
  };
  rp.user_data = this;
  ucs_status_ptr_t r = ucp_am_send_nbx(static_cast<ucp_ep_h>(p->ep), wire::kNotify, &notify_header_,
                                       sizeof notify_header_, notification_.data(), notification_.size(), &rp);
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
    fail(ucx_error("notification", st));
  else
    state_ = State::done;
}

void Request::fail(int status) {
  state_ = State::failed;
  status_ = status;
  // The reason was recorded by the thread that saw it (maybe the progress thread); the caller of
  // test or wait gets it again.
  error_ = error_detail();
}

int Request::test() {
  std::lock_guard<std::recursive_mutex> lock(agent_.mu_);
  (void)agent_.progress_locked();
  advance();
  if (state_ == State::data || state_ == State::flushed || state_ == State::notify) {
    Agent::Peer* p = agent_.find_peer(peer_);
    if (!p || agent_.peer_gone(*p))
      fail(kv_error(WEFT_KV_ERR_PEER, "transfer: agent " + (p ? p->info.name : std::string("?")) + " is gone"));
  }
  switch (state_) {
    case State::idle:
      return kv_error(WEFT_KV_ERR_ARG, "test: the request was never posted");
    case State::done:
      return WEFT_KV_SUCCESS;
    case State::failed:
      set_error_detail(error_);
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
