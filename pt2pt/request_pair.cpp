#include "pt2pt/request_pair.h"

#include <utility>

namespace weft {

Request* RequestPairs::join(Transport& t, Request* send, Request* recv, int owner, StagingBuffer keep,
                            const RequestStatus& null_status) {
  transport_ = &t;
  Request* r = t.pool().alloc(RequestKind::coll);
  r->owner = owner;
  r->status = null_status;
  r->owned_buffer = std::move(keep);
  pairs_.push_back(Pair{r, send, recv});
  advance();  // both may be complete already
  if (!pairs_.empty() && progress_) progress_->arm(poller_);
  return r;
}

void RequestPairs::attach(Progress* progress) {
  progress_ = progress;
  poller_ = progress->add_poller(poll, this, false);
}

int RequestPairs::poll(void* ctx) {
  auto* self = static_cast<RequestPairs*>(ctx);
  const int done = self->advance();
  if (self->pairs_.empty() && self->progress_) self->progress_->disarm(self->poller_);
  return done;
}

int RequestPairs::advance() {
  int done = 0;
  for (size_t i = 0; i < pairs_.size();) {
    Pair& p = pairs_[i];
    // A member whose peer is known to have failed fails, and with it the pair.
    for (Request* m : {p.send, p.recv})
      if (m && !m->complete) transport_->check_failure(m);
    if ((p.send && !p.send->complete) || (p.recv && !p.recv->complete)) {
      ++i;
      continue;
    }
    Request* r = p.joined;
    RequestPool& pool = transport_->pool();
    if (p.recv) {
      run_finish(p.recv);  // unpacks a non-contiguous receive
      r->status = p.recv->status;
      pool.release(p.recv);
    }
    if (p.send) {
      if (r->status.error == Status::ok) r->status.error = p.send->status.error;
      pool.release(p.send);
    }
    r->complete = true;
    pairs_[i] = pairs_.back();
    pairs_.pop_back();
    ++done;
  }
  return done;
}

}  // namespace weft
