// Accesses the target applies: a window in GPU device memory cannot be mapped by ranks of
// other nodes (no CUDA IPC across nodes, and UCX here registers host memory only), so their
// puts and gets travel as tagged messages on the window's own context, staged through host
// memory, and the target's progress poller applies them: a put is copied into the window, a
// get answered with the bytes, a flush answered once every put before it has landed (the
// requests of one origin are applied in the order they were sent). The target checks every
// request against its own window before touching memory. Accumulates on such windows take the
// target's mutex (a control word in host memory, reached with UCX atomics) around a staged
// get and put, as on device windows within a node. WEFT_RMA_STAGED=1 sends host windows
// across nodes the same way, so the protocol is covered without a GPU.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pt2pt/tag.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "staged_wire.h"
#include "window.h"

namespace weft::rma {

namespace {

using namespace staged;
constexpr uint32_t kRequestTag = 1, kReplyTag = 2;  // user tags on the window's own context

const char* op_name(uint32_t op) { return op == kPut ? "put" : op == kGet ? "get" : op == kFlush ? "flush" : "?"; }

bool staging_forced() {
  static const bool forced = setting_bool("WEFT_RMA_STAGED");
  return forced;
}

}  // namespace

bool Window::decide_serving() const {
  if (flavor_ == Flavor::shared || (!device_ && !staging_forced())) return false;
  for (int q : job_ranks_)
    if (!t_.boot().is_local(q)) return true;
  return false;
}

Status Window::start_serving() {
  refused_.assign(peers_.size(), Status::ok);
  for (size_t q = 0; q < peers_.size(); ++q) {
    Peer& p = peers_[q];
    if (!p.staged) continue;
    if (p.device && t_.require_fast_path()) {
      p.staged = false;
      p.unreachable = "it runs on another node, where accesses are staged through host memory (WEFT_REQUIRE_FAST_PATH)";
      continue;
    }
    if (log_first_time("rma-staged"))
      WEFT_INFO(Subsys::rma, "window rank %zu (job rank %d) runs on another node and its window is %s: puts and gets "
                "to it travel as requests that rank applies when it progresses (staged through host memory; "
                "accumulates take its mutex)",
                q, job_ranks_[q], p.device ? "GPU device memory" : "host memory under WEFT_RMA_STAGED");
  }
  if (serves_) {
    t_.progress_engine().add_poller(serve_poll, this);
    if (log_first_time("rma-serving"))
      WEFT_INFO(Subsys::rma, "this rank applies the puts and gets of ranks on other nodes to its %s window while it "
                "progresses (in MPI calls)", device_ ? "GPU device memory" : "host memory");
  }
  return Status::ok;
}

// ---- target ----

int Window::serve_poll(void* window) { return static_cast<Window*>(window)->serve(); }

int Window::serve() {
  if (serving_) return 0;  // called from the wait of a request being applied
  serving_ = true;
  int handled = 0;
  MatchInfo info;
  void* message = nullptr;
  // A bounded batch per pass, so that the caller's own wait keeps its turn.
  while (handled < 16 && t_.probe(tag::make(context_, 0, kRequestTag), tag::kContextMask | tag::kTagMask, true,
                                  &info, &message)) {
    (void)apply_request(info.source, message, info.bytes);  // errors are logged where found
    ++handled;
  }
  serving_ = false;
  return handled;
}

bool Window::request_in_window(uint64_t addr, uint64_t bytes) const {
  auto inside = [&](uint64_t base, uint64_t size) { return range_inside(addr, bytes, base, size); };
  if (flavor_ != Flavor::dynamic) return base_ && inside(uint64_t(reinterpret_cast<uintptr_t>(base_)), size_);
  for (const Local& l : attached_)
    if (inside(uint64_t(reinterpret_cast<uintptr_t>(l.base)), l.size)) return true;
  return false;
}

Status Window::copy_window(void* to, const void* from, size_t bytes) const {
  if (device_) return memkind_copy(to, from, bytes);
  memcpy(to, from, bytes);
  return Status::ok;
}

Status Window::apply_request(int origin, void* message, size_t bytes) {
  const bool known = origin >= 0 && origin < size() && origin != rank_;
  inbox_.resize(bytes);
  Request r;
  r.kind = RequestKind::recv;
  r.peer = known ? job_ranks_[size_t(origin)] : -1;
  WEFT_TRY(t_.mrecv(inbox_.data(), bytes, message, &r));
  if (!r.complete) t_.wait(&r);
  if (r.status.error != Status::ok) {
    WEFT_WARN(Subsys::rma, "receiving a one-sided request from window rank %d failed: %s", origin,
              error_detail().c_str());
    return r.status.error;
  }
  RequestHeader h;
  if (bytes >= sizeof h) memcpy(&h, inbox_.data(), sizeof h);
  if (!known || !decode_request(inbox_.data(), bytes, &h)) {
    const std::string msg = "dropped a malformed one-sided request of " + std::to_string(bytes) +
                            " bytes from window rank " + std::to_string(origin);
    WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
    set_error_detail(msg);
    if (known && bytes >= sizeof h && h.magic == kMagic && h.op != kPut) return reply(origin, Status::internal, nullptr, 0);
    if (known) refused_[size_t(origin)] = Status::internal;
    return Status::internal;
  }
  if (h.op == kFlush) {
    const Status result = refused_[size_t(origin)];
    refused_[size_t(origin)] = Status::ok;
    return reply(origin, result, nullptr, 0);
  }
  if (!request_in_window(h.addr, h.bytes)) {
    char msg[200];
    snprintf(msg, sizeof msg, "refused a %s of %llu bytes at 0x%llx from window rank %d: not inside this rank's window",
             op_name(h.op), (unsigned long long)h.bytes, (unsigned long long)h.addr, origin);
    WEFT_ERROR(Subsys::rma, "%s", msg);
    set_error_detail(msg);
    if (h.op == kGet) return reply(origin, Status::internal, nullptr, 0);
    refused_[size_t(origin)] = Status::internal;  // reported at the origin's next flush
    return Status::internal;
  }
  void* at = reinterpret_cast<void*>(uintptr_t(h.addr));
  if (h.op == kGet) return reply(origin, Status::ok, at, h.bytes);
  const Status s = copy_window(at, inbox_.data() + sizeof h, h.bytes);
  if (s != Status::ok) refused_[size_t(origin)] = s;
  return s;
}

Status Window::reply(int origin, Status result, const void* from, size_t bytes) {
  ReplyHeader h;
  h.bytes = result == Status::ok ? bytes : 0;
  outbox_.resize(sizeof h + h.bytes);
  if (h.bytes > 0) result = copy_window(outbox_.data() + sizeof h, from, h.bytes);
  if (result != Status::ok) h.bytes = 0;
  h.status = uint32_t(result);
  memcpy(outbox_.data(), &h, sizeof h);
  const Status s = t_.send(outbox_.data(), sizeof h + h.bytes, job_ranks_[size_t(origin)],
                           tag::make(context_, uint32_t(rank_), kReplyTag), SendMode::standard);
  if (s != Status::ok)
    WEFT_WARN(Subsys::rma, "answering a one-sided request of window rank %d failed: %s", origin, error_detail().c_str());
  return s;
}

// ---- origin ----

Status Window::staged_put(int target, uint64_t addr, const void* buf, size_t bytes, bool device_buf) {
  RequestHeader h;
  h.op = kPut;
  h.addr = addr;
  h.bytes = bytes;
  stage_.resize(sizeof h + bytes);
  memcpy(stage_.data(), &h, sizeof h);
  if (device_buf) WEFT_TRY(memkind_copy(stage_.data() + sizeof h, buf, bytes));
  else memcpy(stage_.data() + sizeof h, buf, bytes);
  // Returns once the buffer may be reused; the target applies it before answering a flush.
  WEFT_TRY(t_.send(stage_.data(), stage_.size(), job_ranks_[size_t(target)],
                   tag::make(context_, uint32_t(rank_), kRequestTag), SendMode::standard));
  ++peers_[size_t(target)].unflushed;
  return Status::ok;
}

Status Window::staged_get(int target, uint64_t addr, void* buf, size_t bytes, bool device_buf) {
  return staged_call(target, kGet, addr, bytes, buf, device_buf);
}

Status Window::staged_flush(int target) {
  WEFT_TRY(staged_call(target, kFlush, 0, 0, nullptr, false));
  peers_[size_t(target)].unflushed = 0;
  return Status::ok;
}

// A request with an answer: the receive of the answer is posted before the request leaves.
Status Window::staged_call(int target, int op, uint64_t addr, size_t bytes, void* out, bool device_out) {
  const int job = job_ranks_[size_t(target)];
  ReplyHeader rh;
  stage_.resize(sizeof rh + bytes);
  Request r;
  r.kind = RequestKind::recv;
  WEFT_TRY(t_.irecv(stage_.data(), stage_.size(), job, tag::make(context_, uint32_t(target), kReplyTag), ~uint64_t(0),
                    &r));
  RequestHeader h;
  h.op = uint32_t(op);
  h.addr = addr;
  h.bytes = bytes;
  if (Status s = t_.send(&h, sizeof h, job, tag::make(context_, uint32_t(rank_), kRequestTag), SendMode::standard);
      s != Status::ok) {
    (void)t_.cancel(&r);
    t_.wait(&r);
    return s;
  }
  if (!r.complete) t_.wait(&r);
  if (r.status.error != Status::ok) return r.status.error;  // logged by the transport (e.g. the target died)
  if (r.status.bytes >= sizeof rh) memcpy(&rh, stage_.data(), sizeof rh);
  if (r.status.bytes < sizeof rh || rh.magic != kMagic || r.status.bytes != sizeof rh + rh.bytes ||
      (rh.status == 0 && rh.bytes != bytes)) {
    const std::string msg = "malformed answer to a one-sided " + std::string(op_name(uint32_t(op))) +
                            " from window rank " + std::to_string(target);
    WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::internal;
  }
  if (rh.status != 0) {
    const Status st = rh.status <= uint32_t(Status::internal) ? Status(rh.status) : Status::internal;
    const std::string msg = "window rank " + std::to_string(target) + " (job rank " + std::to_string(job) +
                            ") could not apply a one-sided " + (op == kFlush ? "put" : op_name(uint32_t(op))) +
                            " (status " + status_name(st) + "; its log says why)";
    WEFT_ERROR(Subsys::rma, "%s", msg.c_str());
    set_error_detail(msg);
    return st;
  }
  if (bytes == 0) return Status::ok;
  if (device_out) return memkind_copy(out, stage_.data() + sizeof rh, bytes);
  memcpy(out, stage_.data() + sizeof rh, bytes);
  return Status::ok;
}

}  // namespace weft::rma
