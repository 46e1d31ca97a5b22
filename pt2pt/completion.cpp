// Completion of request sets and probes, failing them on known member failures.
#include "pt2pt/completion.h"

#include "runtime/wait_deadline.h"

namespace weft {

namespace {

// A blocking probe must not wait forever: true (with the error detail set) once a member of
// the communicator is known to have failed (the source, or another: failure is contagious).
bool member_lost(Transport& t, const Comm& c, int source) {
  if (wait_timed_out()) [[unlikely]] {
    set_error_detail("a blocking probe on " + c.label() + " found no message within " + wait_timeout_text());
    return true;
  }
  Bootstrap& b = t.boot();
  b.poll_local_liveness();
  if (b.failures_seen() == 0) return false;
  if (source >= 0 && b.peer_failed(c.peer_world_rank(source))) {
    set_error_detail(Transport::failure_detail(&c, c.peer_world_rank(source)) + " while being probed");
    return true;
  }
  if (!t.fails_with_member(c, source >= 0 ? c.peer_world_rank(source) : -1)) return false;
  set_error_detail(Transport::failure_detail(&c, c.world_rank(c.failed_member)) + " while probing: " +
                   (t.process_fault_scope() ? "a wildcard probe on " + c.label() +
                                                  " fails until the failure is acknowledged (MPIX_Comm_failure_ack)"
                                            : "every operation on " + c.label() + " fails"));
  return true;
}

}  // namespace

bool fail_on_member_failures(Transport& t, Request* const* reqs, size_t n, FailureScope scope) {
  if (wait_timed_out()) [[unlikely]] {
    bool failed = false;
    for (size_t i = 0; i < n; ++i)
      if (Request* r = reqs[i]; r && !r->complete && t.fail_timed_out(r, scope(r))) failed = true;
    if (failed) return true;
  }
  t.boot().poll_local_liveness();
  if (t.boot().fault_events() == 0) [[likely]] return false;
  bool failed = false;
  for (size_t i = 0; i < n; ++i) {
    Request* r = reqs[i];
    if (r && !r->complete && t.check_failure(r, scope(r))) failed = true;
  }
  return failed;
}

int first_complete(Request* const* reqs, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (reqs[i] && reqs[i]->complete) return int(i);
  return -1;
}

void wait_for_any(Transport& t, Request* const* reqs, size_t n, FailureScope scope) {
  WaitBound bound;
  t.progress_engine().wait(
      [&] { return first_complete(reqs, n) >= 0 || fail_on_member_failures(t, reqs, n, scope); });
}

bool RequestSet::none_active() const {
  for (size_t i = 0; i < n_; ++i)
    if (items_[i]) return false;
  return true;
}

bool RequestSet::all_complete() const {
  for (size_t i = 0; i < n_; ++i)
    if (items_[i] && !items_[i]->complete) return false;
  return true;
}

void poll_once(Transport& t, Request* const* reqs, size_t n, FailureScope scope) {
  t.progress_engine().poll();
  (void)fail_on_member_failures(t, reqs, n, scope);
}

void wait_all(Transport& t, const RequestSet& set, FailureScope scope) {
  WaitBound bound;  // one bound for the whole set
  for (size_t i = 0; i < set.size(); ++i)
    if (Request* r = set[i]; r && !r->complete) t.wait(r, scope(r));
}

int any_complete(Transport& t, const RequestSet& set, FailureScope scope, bool blocking) {
  if (!blocking) poll_once(t, set.data(), set.size(), scope);
  int i = first_complete(set.data(), set.size());
  while (i < 0 && blocking) {
    wait_for_any(t, set.data(), set.size(), scope);
    i = first_complete(set.data(), set.size());
  }
  return i;
}

int some_complete(Transport& t, const RequestSet& set, FailureScope scope, bool blocking, int* positions) {
  if (!blocking) poll_once(t, set.data(), set.size(), scope);
  for (;;) {
    int n = 0;
    for (size_t i = 0; i < set.size(); ++i)
      if (set[i] && set[i]->complete) positions[n++] = int(i);
    if (n > 0 || !blocking) return n;
    wait_for_any(t, set.data(), set.size(), scope);
  }
}

void wait_owned(Transport& t, const RequestPool& pool, int owner, const Comm* scope) {
  for (uint32_t i = 0; i < pool.capacity(); ++i) {
    if (!pool.is_live(i)) continue;
    Request* r = pool.at(i);
    if (r->owner == owner && !r->complete && (!r->persistent || r->active)) t.wait(r, scope);
  }
}

bool retire_request(RequestPool& pool, Request* r, RequestStatus* out) {
  run_finish(r);
  *out = r->status;
  if (r->persistent) {
    r->active = false;
    return false;
  }
  pool.release(r);
  return true;
}

Request* matched_message(RequestPool& pool, void* message, const MatchInfo& info, int owner) {
  Request* r = pool.alloc(RequestKind::recv);
  r->transport_handle = message;
  r->status.source = info.source;
  r->status.tag = info.tag;
  r->status.bytes = info.bytes;
  r->owner = owner;
  return r;
}

bool probe(Transport& t, const Comm& c, int source, uint64_t tag, uint64_t mask, bool remove, bool blocking,
           MatchInfo* info, void** message) {
  if (!blocking) {
    // One pass of progress first, as MPI_Test makes: a rank that spins in MPI_Iprobe still
    // serves what peers need of it (one-sided accesses, collective schedules).
    t.progress_engine().poll();
    return t.probe(tag, mask, remove, info, message);
  }
  bool found = false;
  WaitBound bound;
  t.progress_engine().wait([&] {
    found = t.probe(tag, mask, remove, info, message);
    return found || member_lost(t, c, source);
  });
  return found;
}

bool probe_message(Transport& t, RequestPool& pool, const Comm& c, int owner, int source, int tag, bool blocking,
                   RequestStatus* status, Request** message) {
  const uint64_t bits = tag::make(c.pt2pt_context(), source < 0 ? 0u : uint32_t(source), tag < 0 ? 0u : uint32_t(tag));
  MatchInfo info;
  void* msg = nullptr;
  if (!probe(t, c, source, bits, tag::recv_mask(source < 0, tag < 0), message != nullptr, blocking, &info, &msg))
    return false;
  if (message) *message = matched_message(pool, msg, info, owner);
  *status = RequestStatus{info.source, info.tag, info.bytes};
  return true;
}

}  // namespace weft
