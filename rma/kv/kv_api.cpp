// The KV transfer API (include/weft/kv.h): argument checks and handle conversion around
// rma/kv_agent.h. It needs no MPI_Init.
#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "rma/kv/kv_agent.h"
#include "runtime/profiler.h"
#include "runtime/status.h"
#include "weft/kv.h"

struct weft_kv_agent_s {
  std::unique_ptr<weft::kv::Agent> agent;
};
struct weft_kv_request_s {
  weft::kv::Request* request;
  // The profiler's KV event of the transfer posted last, open until it is seen finished.
  const char* kind = nullptr;
  uint64_t bytes = 0;
  void* profile = nullptr;
};

namespace {

int arg_error(const char* msg) { return weft::kv::kv_error(WEFT_KV_ERR_ARG, msg); }

// Runs f, turning an allocation failure into WEFT_KV_ERR_NO_MEMORY: no exception crosses the C
// boundary.
template <typename F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return weft::kv::kv_error(WEFT_KV_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return weft::kv::kv_error(WEFT_KV_ERR_TRANSPORT, std::string("internal error: ") + e.what());
  }
}

void copy_name(const std::string& s, char* out, size_t capacity) {
  if (!out || capacity == 0) return;
  const size_t n = std::min(s.size(), capacity - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" {

int weft_kv_agent_create(const char* name, weft_kv_agent_t* agent) {
  if (!agent) return arg_error("agent_create: agent is null");
  return guarded([&] {
    auto h = std::make_unique<weft_kv_agent_s>();
    if (int rc = weft::kv::Agent::create(name, &h->agent); rc != WEFT_KV_SUCCESS) return rc;
    *agent = h.release();
    return int(WEFT_KV_SUCCESS);
  });
}

int weft_kv_agent_destroy(weft_kv_agent_t agent) {
  if (!agent) return arg_error("agent_destroy: agent is null");
  delete agent;
  return WEFT_KV_SUCCESS;
}

int weft_kv_register(weft_kv_agent_t agent, void* base, size_t length, weft_kv_region_t* region) {
  if (!agent || !region) return arg_error("register: agent and region must not be null");
  return guarded([&] { return agent->agent->register_region(base, length, region); });
}

int weft_kv_deregister(weft_kv_agent_t agent, weft_kv_region_t region) {
  if (!agent) return arg_error("deregister: agent is null");
  return guarded([&] { return agent->agent->deregister(region); });
}

int weft_kv_export(weft_kv_agent_t agent, void* blob, size_t capacity, size_t* length) {
  if (!agent || !length) return arg_error("export: agent and length must not be null");
  return guarded([&] {
    std::vector<unsigned char> b;
    if (int rc = agent->agent->export_blob(&b); rc != WEFT_KV_SUCCESS) return rc;
    *length = b.size();
    if (!blob) return int(WEFT_KV_SUCCESS);
    if (capacity < b.size())
      return weft::kv::kv_error(WEFT_KV_ERR_TOO_SMALL, "export: the blob needs " + std::to_string(b.size()) + " bytes");
    std::memcpy(blob, b.data(), b.size());
    return int(WEFT_KV_SUCCESS);
  });
}

int weft_kv_import(weft_kv_agent_t agent, const void* blob, size_t length, weft_kv_peer_t* peer) {
  if (!agent || !peer) return arg_error("import: agent and peer must not be null");
  return guarded([&] { return agent->agent->import_blob(blob, length, peer); });
}

int weft_kv_forget(weft_kv_agent_t agent, weft_kv_peer_t peer) {
  if (!agent) return arg_error("forget: agent is null");
  return guarded([&] { return agent->agent->forget(peer); });
}

int weft_kv_peer_name(weft_kv_agent_t agent, weft_kv_peer_t peer, char* name, size_t capacity) {
  if (!agent || !name || capacity == 0) return arg_error("peer_name: agent and name must not be null");
  return guarded([&] {
    std::string s;
    if (int rc = agent->agent->peer_name(peer, &s); rc != WEFT_KV_SUCCESS) return rc;
    copy_name(s, name, capacity);
    return int(WEFT_KV_SUCCESS);
  });
}

int weft_kv_prepare(weft_kv_agent_t agent, weft_kv_op_t op, weft_kv_peer_t peer, const weft_kv_block_t* blocks,
                    size_t count, const void* notification, size_t notification_length, weft_kv_request_t* request) {
  if (!agent || !request) return arg_error("prepare: agent and request must not be null");
  return guarded([&] {
    auto h = std::make_unique<weft_kv_request_s>();
    if (int rc = agent->agent->prepare(op, peer, blocks, count, notification, notification_length, &h->request);
        rc != WEFT_KV_SUCCESS)
      return rc;
    h->kind = op == WEFT_KV_WRITE ? "kv_write" : "kv_read";
    for (size_t k = 0; k < count; ++k) h->bytes += blocks[k].length;
    *request = h.release();
    return int(WEFT_KV_SUCCESS);
  });
}

int weft_kv_set_device_signal(weft_kv_request_t request, weft_kv_region_t remote_region, uint64_t remote_offset) {
  if (!request) return arg_error("set_device_signal: request is null");
  return guarded([&] { return request->request->set_device_signal(remote_region, remote_offset); });
}

int weft_kv_wait_signal_enqueue(weft_kv_agent_t agent, const uint64_t* device_word, uint64_t value, void* stream) {
  if (!agent) return arg_error("wait_signal_enqueue: agent is null");
  return guarded([&] { return agent->agent->wait_signal_enqueue(device_word, value, stream); });
}

int weft_kv_post(weft_kv_request_t request) {
  if (!request) return arg_error("post: request is null");
  const int rc = guarded([&] { return request->request->post(); });
  if (weft::profiler::wants(WEFT_PROFILER_KV) && !request->profile && rc >= 0) [[unlikely]] {
    weft_profiler_event_t e = weft::profiler::event(WEFT_PROFILER_KV, request->kind);
    e.bytes = request->bytes;
    request->profile = weft::profiler::start_top_level(e);
  }
  return rc;
}

namespace {
// Stops the request's KV event once a test or wait saw the transfer end (rc: what it returned).
int profile_outcome(weft_kv_request_t request, int rc) {
  if (!request->profile || rc == WEFT_KV_IN_PROGRESS || rc == WEFT_KV_ERR_TIMEOUT) [[likely]]
    return rc;
  if (rc < 0) weft::profiler::failed(request->profile, weft::Status::transport);
  weft::profiler::stop(request->profile);
  request->profile = nullptr;
  return rc;
}
}  // namespace

int weft_kv_test(weft_kv_request_t request) {
  if (!request) return arg_error("test: request is null");
  return profile_outcome(request, guarded([&] { return request->request->test(); }));
}

int weft_kv_wait(weft_kv_request_t request, int timeout_ms) {
  if (!request) return arg_error("wait: request is null");
  return profile_outcome(request, guarded([&] { return request->request->wait(timeout_ms); }));
}

int weft_kv_release(weft_kv_request_t request) {
  if (!request) return arg_error("release: request is null");
  if (request->profile) weft::profiler::stop(request->profile);
  request->request->release();
  delete request;
  return WEFT_KV_SUCCESS;
}

int weft_kv_progress(weft_kv_agent_t agent) {
  if (!agent) return arg_error("progress: agent is null");
  return guarded([&] {
    (void)agent->agent->progress();
    return int(WEFT_KV_SUCCESS);
  });
}

int weft_kv_get_notification(weft_kv_agent_t agent, char* from, size_t from_capacity, void* message,
                             size_t message_capacity, size_t* length) {
  if (!agent || !length || (message_capacity && !message))
    return arg_error("get_notification: agent, length and a message buffer of the given capacity are needed");
  return guarded([&] {
    std::string sender;
    std::vector<unsigned char> msg;
    const int rc = agent->agent->take_notification(&sender, &msg, message_capacity, length);
    if (rc != WEFT_KV_SUCCESS) return rc;
    copy_name(sender, from, from_capacity);
    if (!msg.empty()) std::memcpy(message, msg.data(), msg.size());
    return int(WEFT_KV_SUCCESS);
  });
}

const char* weft_kv_status_string(int status) {
  switch (status) {
    case WEFT_KV_SUCCESS: return "success";
    case WEFT_KV_IN_PROGRESS: return "in progress";
    case WEFT_KV_NO_NOTIFICATION: return "no notification";
    case WEFT_KV_ERR_ARG: return "invalid argument";
    case WEFT_KV_ERR_RANGE: return "block outside its region";
    case WEFT_KV_ERR_BLOB: return "invalid agent blob";
    case WEFT_KV_ERR_PEER: return "remote agent gone";
    case WEFT_KV_ERR_BUSY: return "request in progress";
    case WEFT_KV_ERR_NO_MEMORY: return "out of memory";
    case WEFT_KV_ERR_NOT_SUPPORTED: return "not supported";
    case WEFT_KV_ERR_TRANSPORT: return "transport error";
    case WEFT_KV_ERR_TIMEOUT: return "timed out";
    case WEFT_KV_ERR_TOO_SMALL: return "buffer too small";
    default: return "unknown status";
  }
}

const char* weft_kv_last_error(void) { return weft::error_detail().c_str(); }

}  // extern "C"
