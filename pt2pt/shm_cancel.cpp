// Cancellation in weft's shared memory. A receive is cancelled locally while no message has
// matched it. A send still queued for a full ring never reached its receiver and is cancelled
// locally too; a send already placed (eager or ready-to-send, complete or not) is cancelled by
// its receiver: the sender places a cancel cell naming the message (the sender's job rank and
// the send's number), and the receiver, which handles that cell after the message's own (one
// ring, in order), drops the message if it still waits unmatched among the unexpected ones and
// answers either way. The sender completes the request on the answer: cancelled, or as the
// send it was (a matched ready-to-send or synchronous send still waits for its finish or
// acknowledgement, which completes it).
#include <algorithm>

#include "shm.h"
#include "shm_cells.h"

namespace weft {

using namespace shm_cells;

void ShmEngine::cancel(Request* r) {
  if (r->kind == RequestKind::send) return cancel_send(r);
  for (auto it = posted_.begin(); it != posted_.end(); ++it) {
    if (it->request != r) continue;
    posted_.erase(it);
    r->status.cancelled = true;
    r->complete = true;
    return;
  }
}

void ShmEngine::cancel_send(Request* r) {
  if (r->status.cancelled || r->peer < 0 || size_t(r->peer) >= pending_.size()) return;
  auto& queue = pending_[size_t(r->peer)];
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->request != r) continue;
    if (!it->complete_on_place) (void)take_answer(it->cookie);
    queue.erase(it);
    --pending_count_;
    r->status.cancelled = true;
    r->complete = true;
    return;
  }
  if (r->message == 0) return;
  // The ticket the message's finish or acknowledgement answers, if it waits for one: from now
  // on that answer completes nothing; the cancel answer decides.
  Pending p{};
  p.kind = kCancel;
  p.message = r->message;
  for (const Awaiting& a : awaiting_)
    if (a.in_use && a.request == r && a.cancel) return;  // asked already
  for (uint32_t slot = 0; slot < awaiting_.size(); ++slot) {
    Awaiting& a = awaiting_[slot];
    if (!a.in_use || a.request != r) continue;
    p.flags = kAnswered;
    p.tag = uint64_t(a.generation) << 32 | slot;
    a.request = nullptr;
  }
  p.cookie = await_answer(r);
  awaiting_[uint32_t(p.cookie)].cancel = true;
  r->complete = false;
  Status st;
  post(r->peer, p, &st);
  if (st != Status::ok) {  // the cell cannot be placed: the send stays as it was
    (void)take_answer(p.cookie);
    if (p.flags & kAnswered) awaiting_[uint32_t(p.tag)].request = r;
    else r->complete = true;
  }
}

void ShmEngine::drop_message(const CellHeader& c, int sender) {
  bool dropped = false;
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if ((*it)->src_world != sender || (*it)->message != c.message) continue;
    std::unique_ptr<Unexpected> u = std::move(*it);
    unexpected_.erase(it);
    recycle(std::move(u));
    dropped = true;
    break;
  }
  Pending p{};
  p.kind = kCancelAnswer;
  p.flags = (c.flags & kAnswered) | (dropped ? uint32_t(kCancelled) : 0u);
  p.tag = c.tag;
  p.cookie = c.cookie;
  Status st;
  post(sender, p, &st);
}

void ShmEngine::cancel_answered(const CellHeader& c) {
  Request* r = take_answer(c.cookie);
  if (!r) return;  // given up after a failure
  const bool answered = c.flags & kAnswered;
  if (c.flags & kCancelled) {
    if (answered) {
      (void)take_answer(c.tag);  // no finish or acknowledgement will come
      outstanding_.erase(std::remove_if(outstanding_.begin(), outstanding_.end(),
                                        [&](const Outstanding& o) { return o.cookie == c.tag; }),
                         outstanding_.end());
    }
    r->status.cancelled = true;
    r->complete = true;
    return;
  }
  // Matched: a send that waits for its finish or acknowledgement completes on it, as usual.
  const uint32_t slot = uint32_t(c.tag), generation = uint32_t(c.tag >> 32);
  if (answered && slot < awaiting_.size() && awaiting_[slot].in_use && awaiting_[slot].generation == generation) {
    awaiting_[slot].request = r;
    return;
  }
  r->complete = true;
}

}  // namespace weft
