// The owner's side of KV transfers (kv_agent.h, kv_wire.h): it vouches for its blob when an
// importer says HELLO, then checks every block of every request against the regions it has
// registered and granted to that importer, and moves the bytes itself. Nothing an importer sends
// is used before it is checked: header lengths, block counts, region ids, offsets and lengths.
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstring>

#include "kv_agent.h"
#include "kv_ucx.h"
#include "runtime/log.h"
#include "runtime/ucx_service.h"

namespace weft::kv {

namespace {

constexpr size_t kMaxSessions = 4096;           // importers served at once
constexpr size_t kMaxPendingWrites = 4096;      // WRITE posts of one importer not yet accounted for
constexpr double kSessionWatchSeconds = 0.1;

bool rendezvous(const void* param) {
  return (static_cast<const ucp_am_recv_param_t*>(param)->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
}

std::string range_text(uint64_t offset, uint64_t length) {
  return "of " + std::to_string(length) + " bytes at offset " + std::to_string(offset);
}

}  // namespace

Agent::Session* Agent::find_session(uint64_t id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

int Agent::on_hello(void* arg, const void* header, size_t header_length, void* data, size_t length,
                    const void* param) {
  auto* a = static_cast<Agent*>(arg);
  wire::Hello h{};
  const bool fits = wire::read_header(header, header_length, &h) && !rendezvous(param) && h.name_bytes > 0 &&
                    h.name_bytes <= kMaxNameBytes && h.host_bytes <= kMaxNameBytes && h.address_bytes > 0 &&
                    h.address_bytes <= kMaxAddressBytes && h.blob_bytes <= kMaxBlobBytes &&
                    uint64_t(h.name_bytes) + h.host_bytes + h.address_bytes + h.blob_bytes == length;
  if (!fits) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped a malformed HELLO (%zu header bytes, %zu bytes)", a->name_.c_str(),
              header_length, length);
    return UCS_OK;
  }
  const auto* p = static_cast<const unsigned char*>(data);
  std::vector<unsigned char> payload(p, p + length);
  a->deferred_.push_back([a, h, payload = std::move(payload)] { a->answer_hello(h, payload); });
  return UCS_OK;
}

void Agent::answer_hello(const wire::Hello& h, const std::vector<unsigned char>& payload) {
  auto s = std::make_unique<Session>();
  s->agent = this;
  const auto* p = payload.data();
  s->name.assign(reinterpret_cast<const char*>(p), h.name_bytes);
  p += h.name_bytes;
  s->host.assign(reinterpret_cast<const char*>(p), h.host_bytes);
  p += h.host_bytes;
  const std::vector<unsigned char> address(p, p + h.address_bytes);
  p += h.address_bytes;
  const unsigned char* blob = p;
  s->pid = h.pid;
  s->start_time = h.start_time;
  const bool same_host = s->host == host_ && s->pid != 0;
  int st = 0;
  s->ep = connect(address, same_host, s.get(), true, &st);
  if (!s->ep) {
    WEFT_WARN(Subsys::rma, "kv: agent %s cannot answer the HELLO of %s: %s", name_.c_str(), s->name.c_str(),
              ucs_status_string(ucs_status_t(st)));
    return;
  }

  // The verdict: only this agent can check its seal, and only it knows what it registers now.
  std::string reason;
  AgentInfo info;
  if (sessions_.size() >= kMaxSessions) {
    reason = "it serves " + std::to_string(kMaxSessions) + " importers already";
  } else if (!decode_blob(blob, h.blob_bytes, &info, &reason)) {
  } else if (!blob_sealed_by(blob, h.blob_bytes, key_) || info.instance != instance_) {
    reason = "the blob was not sealed by this agent (forged, altered, or from another agent or an earlier one)";
  } else {
    for (const RegionInfo& g : info.regions) {
      auto r = regions_.find(g.id);
      if (r == regions_.end() || r->second.kind != g.kind || reinterpret_cast<uint64_t>(r->second.base) != g.base ||
          r->second.length != g.length) {
        reason = "region " + std::to_string(g.id) + " is no longer registered as the blob lists it (a stale blob)";
        break;
      }
      s->regions.insert(g.id);
    }
  }
  wire::Verdict v{h.token, 0, WEFT_KV_SUCCESS, 0};
  auto out = std::make_unique<Outgoing>(this);
  if (reason.empty()) {
    do {
      if (!random_bytes(&v.session, sizeof v.session)) v.session = 0;
    } while (v.session == 0 || sessions_.count(v.session));
    s->id = v.session;
  } else {
    v.status = WEFT_KV_ERR_BLOB;
    reason.resize(std::min<size_t>(reason.size(), wire::kMaxReasonBytes));
    out->payload.assign(reason.begin(), reason.end());
    WEFT_WARN(Subsys::rma, "kv: agent %s refused the import by %s (pid %u on %s): %s", name_.c_str(),
              s->name.c_str(), s->pid, s->host.c_str(), reason.c_str());
  }
  out->header = wire::bytes_of(v);
  const int rc = send(s->ep, wire::kVerdict, std::move(out), nullptr, 0, true);
  if (!reason.empty() || rc != WEFT_KV_SUCCESS) {
    s->lost = rc != WEFT_KV_SUCCESS;
    close_later(std::move(s));  // after the verdict has gone out
    return;
  }
  WEFT_INFO(Subsys::rma, "kv: agent %s serves %s (pid %u on %s): %zu regions granted", name_.c_str(), s->name.c_str(),
            s->pid, s->host.c_str(), s->regions.size());
  sessions_.emplace(s->id, std::move(s));
}

int Agent::check_block(const Session& s, uint32_t region, uint64_t offset, uint64_t length, std::string* why) const {
  auto r = regions_.find(region);
  if (!s.regions.count(region) || r == regions_.end()) {
    *why = "region " + std::to_string(region) + (s.regions.count(region) ? " is not registered any more"
                                                                         : " was not granted by the imported blob");
    return WEFT_KV_ERR_RANGE;
  }
  if (r->second.kind != RegionKind::host) {
    *why = "region " + std::to_string(region) + " is device memory, reachable through CUDA IPC on its host only";
    return WEFT_KV_ERR_NOT_SUPPORTED;
  }
  if (length == 0 || offset > r->second.length || length > r->second.length - offset) {
    *why = "block " + range_text(offset, length) + " is outside region " + std::to_string(region) + " (" +
           std::to_string(r->second.length) + " bytes)";
    return WEFT_KV_ERR_RANGE;
  }
  return WEFT_KV_SUCCESS;
}

int Agent::on_write(void* arg, const void* header, size_t header_length, void* data, size_t length,
                    const void* param) {
  auto* a = static_cast<Agent*>(arg);
  const bool rndv = rendezvous(param);
  const int refuse = rndv ? UCS_ERR_REJECTED : UCS_OK;  // a refused rendezvous is never fetched
  wire::Transfer t{};
  Session* s = a->session_named(header, header_length, &t);
  if (!s) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped a WRITE of %zu bytes from no known importer", a->name_.c_str(), length);
    return refuse;
  }
  auto key = std::make_pair(t.request, t.post);
  auto w = s->writes.find(key);
  if (w == s->writes.end()) {
    if (t.count == 0 || t.count > wire::kMaxBlocksPerPost || s->writes.size() >= kMaxPendingWrites) {
      WEFT_WARN(Subsys::rma, "kv: agent %s dropped a WRITE of %s: %u blocks, %zu posts pending", a->name_.c_str(),
                s->name.c_str(), t.count, s->writes.size());
      return refuse;
    }
    w = s->writes.emplace(key, PendingWrite{t.count, 0, WEFT_KV_SUCCESS, {}}).first;
  }
  std::string why;
  int st = a->check_block(*s, t.region, t.offset, length, &why);
  if (st == WEFT_KV_SUCCESS && (t.count != w->second.count || t.index >= t.count)) {
    st = WEFT_KV_ERR_ARG;
    why = "block " + std::to_string(t.index) + " does not belong to a post of " + std::to_string(w->second.count) +
          " blocks";
  }
  if (st != WEFT_KV_SUCCESS) {
    a->account_write(t.session, t.request, t.post, st, "block " + std::to_string(t.index) + ": " + why);
    return refuse;
  }
  Region& r = a->regions_.at(t.region);
  char* dst = static_cast<char*>(r.base) + t.offset;
  if (!rndv) {
    std::memcpy(dst, data, length);
    a->account_write(t.session, t.request, t.post, WEFT_KV_SUCCESS, {});
    return UCS_OK;
  }
  ++r.in_flight;  // kept registered until the bytes are in
  auto in = std::make_unique<Incoming>(a);
  in->session = t.session;
  in->request = t.request;
  in->post = t.post;
  in->index = t.index;
  in->region = t.region;
  Incoming* raw = in.release();
  a->deferred_.push_back([a, raw, data, dst, length] { a->receive(raw, data, dst, length); });
  return UCS_INPROGRESS;
}

void Agent::receive(Incoming* raw, void* desc, void* dst, size_t length) {
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  rp.cb.recv_am = [](void* request, ucs_status_t st, size_t, void* user) {
    auto* in = static_cast<Incoming*>(user);
    in->agent->ucx_owned_.erase(in);
    in->agent->received(*in, st);
    delete in;
    ucp_request_free(request);
  };
  rp.user_data = raw;
  ucs_status_ptr_t r = ucp_am_recv_data_nbx(ucx_->worker(), desc, dst, length, &rp);
  if (UCS_PTR_IS_PTR(r)) {
    ucx_owned_.insert(raw);
    return;
  }
  received(*raw, UCS_PTR_IS_ERR(r) ? UCS_PTR_STATUS(r) : UCS_OK);
  delete raw;
}

void Agent::received(const Incoming& in, int status) {
  if (in.to_owner) {
    release_region(in.region);
    account_write(in.session, in.request, in.post,
                  status == UCS_OK ? WEFT_KV_SUCCESS : WEFT_KV_ERR_TRANSPORT,
                  status == UCS_OK ? std::string() : std::string("receiving a block failed: ") +
                                                         ucs_status_string(ucs_status_t(status)));
  } else if (Request* q = find_request(in.request)) {
    q->on_received(in.post, in.index, status);
  }
}

void Agent::account_write(uint64_t session, uint64_t request, uint32_t post, int status, const std::string& reason) {
  Session* s = find_session(session);
  if (!s) return;
  auto w = s->writes.find({request, post});
  if (w == s->writes.end()) return;
  PendingWrite& pw = w->second;
  if (status != WEFT_KV_SUCCESS && pw.status == WEFT_KV_SUCCESS) {
    pw.status = status;
    pw.reason = reason;
  }
  if (++pw.accounted < pw.count) return;
  const PendingWrite done = std::move(pw);
  s->writes.erase(w);
  deferred_.push_back([this, session, request, post, done] {
    if (Session* live = find_session(session)) send_done(*live, request, post, done.status, done.count, done.reason);
  });
}

int Agent::on_read(void* arg, const void* header, size_t header_length, void* data, size_t length,
                   const void* param) {
  auto* a = static_cast<Agent*>(arg);
  wire::Transfer t{};
  if (!wire::read_header(header, header_length, &t) || rendezvous(param) || t.count == 0 ||
      t.count > wire::kMaxBlocksPerPost || length != uint64_t(t.count) * sizeof(wire::ReadBlock)) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped a malformed READ (%zu bytes)", a->name_.c_str(), length);
    return UCS_OK;
  }
  const auto* p = static_cast<const unsigned char*>(data);
  std::vector<unsigned char> blocks(p, p + length);
  a->deferred_.push_back([a, t, blocks = std::move(blocks)] { a->serve_read(t.session, t, blocks); });
  return UCS_OK;
}

void Agent::serve_read(uint64_t session, const wire::Transfer& t, const std::vector<unsigned char>& blocks) {
  Session* s = find_session(session);
  if (!s) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped a READ from no known importer", name_.c_str());
    return;
  }
  std::vector<wire::ReadBlock> list(t.count);
  std::memcpy(list.data(), blocks.data(), blocks.size());
  for (uint32_t i = 0; i < t.count; ++i) {
    std::string why;
    if (int st = check_block(*s, list[i].region, list[i].offset, list[i].length, &why); st != WEFT_KV_SUCCESS) {
      send_done(*s, t.request, t.post, st, 0, "block " + std::to_string(i) + ": " + why);
      return;
    }
  }
  for (uint32_t i = 0; i < t.count; ++i) {
    Region& r = regions_.at(list[i].region);
    ++r.in_flight;  // kept registered until UCX has sent it
    auto out = std::make_unique<Outgoing>(this);
    out->region = list[i].region;
    out->header = wire::bytes_of(wire::ReadData{t.request, t.post, i});
    if (int rc = send(s->ep, wire::kReadData, std::move(out), static_cast<char*>(r.base) + list[i].offset,
                      list[i].length, false);
        rc != WEFT_KV_SUCCESS) {
      send_done(*s, t.request, t.post, rc, i, "sending block " + std::to_string(i) + " failed");
      return;
    }
  }
  send_done(*s, t.request, t.post, WEFT_KV_SUCCESS, t.count, {});
}

void Agent::send_done(Session& s, uint64_t request, uint32_t post, int status, uint32_t blocks,
                      const std::string& reason) {
  if (status != WEFT_KV_SUCCESS)
    WEFT_WARN(Subsys::rma, "kv: agent %s refused a request of %s: %s", name_.c_str(), s.name.c_str(), reason.c_str());
  auto out = std::make_unique<Outgoing>(this);
  out->header = wire::bytes_of(wire::Done{request, post, status, blocks, 0});
  out->payload.assign(reason.begin(), reason.begin() + ptrdiff_t(std::min<size_t>(reason.size(), wire::kMaxReasonBytes)));
  (void)send(s.ep, wire::kDone, std::move(out), nullptr, 0, true);
}

int Agent::on_notify(void* arg, const void* header, size_t header_length, void* data, size_t length,
                     const void* param) {
  auto* a = static_cast<Agent*>(arg);
  wire::SessionOnly h{};
  Session* s = a->session_named(header, header_length, &h);
  if (!s || rendezvous(param) || length > WEFT_KV_MAX_NOTIFICATION) {
    WEFT_WARN(Subsys::rma, "kv: agent %s dropped a notification (%zu bytes) from %s", a->name_.c_str(), length,
              s ? s->name.c_str() : "no known importer");
    return UCS_OK;
  }
  Notification n;
  n.from = s->name;
  const auto* p = static_cast<const unsigned char*>(data);
  n.message.assign(p, p + length);
  a->notifications_.push_back(std::move(n));
  return UCS_OK;
}

int Agent::on_bye(void* arg, const void* header, size_t header_length, void*, size_t, const void*) {
  auto* a = static_cast<Agent*>(arg);
  wire::SessionOnly h{};
  if (a->session_named(header, header_length, &h))
    a->deferred_.push_back([a, id = h.session] { a->drop_session(id, "it forgot this agent"); });
  return UCS_OK;
}

void Agent::on_session_error(void* arg, void* /*ep*/, int status) {
  auto* s = static_cast<Session*>(arg);
  if (!s->lost)
    WEFT_WARN(Subsys::rma, "kv: agent %s lost importer %s (pid %u on %s): %s", s->agent->name_.c_str(),
              s->name.c_str(), s->pid, s->host.c_str(), ucs_status_string(ucs_status_t(status)));
  s->lost = true;
}

void Agent::watch_sessions() {
  if (sessions_.empty()) return;
  const double t = now_seconds();
  if (t < next_session_watch_) return;
  next_session_watch_ = t + kSessionWatchSeconds;
  std::vector<uint64_t> gone;
  for (auto& [id, s] : sessions_)
    if (s->lost || (s->host == host_ && !process_alive(s->pid, s->start_time))) {
      s->lost = true;
      gone.push_back(id);
    }
  for (uint64_t id : gone) drop_session(id, "its process has exited or its connection failed");
}

void Agent::drop_session(uint64_t id, const char* why) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  WEFT_INFO(Subsys::rma, "kv: agent %s stops serving %s (pid %u): %s", name_.c_str(), it->second->name.c_str(),
            it->second->pid, why);
  std::unique_ptr<Session> s = std::move(it->second);
  sessions_.erase(it);
  close_later(std::move(s));
}

void Agent::close_later(std::unique_ptr<Session> s) {
  if (!s->ep) return;
  ucs_status_ptr_t req = UcxService::close(static_cast<ucp_ep_h>(s->ep), s->lost);
  s->ep = nullptr;
  if (UCS_PTR_IS_PTR(req)) closing_.push_back(Closing{req, std::move(s)});
}

void Agent::finish_closing(bool wait) {
  const double end = now_seconds() + (wait ? 5.0 : 0.0);
  std::erase_if(closing_, [&](Closing& c) {
    while (ucp_request_check_status(c.request) == UCS_INPROGRESS) {
      if (now_seconds() >= end) return false;
      (void)ucx_->progress();
    }
    ucp_request_free(c.request);
    return true;
  });
}

}  // namespace weft::kv
