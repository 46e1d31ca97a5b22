#include "coll/fault/agree.h"

#include "pt2pt/tag.h"
#include "runtime/log.h"
#include "runtime/wait_deadline.h"

namespace weft::coll::fault {

namespace {

// Agreement messages: a context above every communicator's and local group's (which end below
// 2^14), one per communicator; the tag carries the agreement's number and the message's kind.
constexpr uint32_t kFaultContextBase = 1u << 14;
enum Kind : uint32_t { kContribution = 0, kDecision = 1 };

uint64_t message_tag(const Comm& c, uint32_t seq, int from, Kind kind) {
  return tag::make(kFaultContextBase + c.context_id, uint32_t(from), ((seq << 1) | kind) & uint32_t(tag::kTagMask));
}

bool bit(const std::vector<uint64_t>& w, int k) { return (w[size_t(k) / 64] >> (k % 64)) & 1; }
void clear_bit(std::vector<uint64_t>* w, int k) { (*w)[size_t(k) / 64] &= ~(1ull << (k % 64)); }

class Agreement {
 public:
  Agreement(Transport& t, const Comm& c, uint32_t seq, std::vector<uint64_t>* words)
      : t_(t), boot_(t.boot()), c_(c), seq_(seq), words_(*words), dead_(size_t(c.size), false) {
    for (int k = 0; k < c.size; ++k) dead_[size_t(k)] = boot_.peer_failed(c.world_rank(k));
  }

  Status run() {
    for (;;) {
      const int coordinator = lowest_alive();
      if (coordinator == c_.rank) return coordinate();
      const Status s = follow(coordinator);
      if (s != Status::pending) return s;
      dead_[size_t(coordinator)] = true;  // it died: the next one coordinates
      WEFT_INFO(Subsys::coll, "agreement %u on %s: coordinator rank %d has failed, turning to the next", seq_,
                c_.label().c_str(), coordinator);
    }
  }

 private:
  int lowest_alive() const {
    for (int k = 0; k < c_.size; ++k)
      if (!dead_[size_t(k)]) return k;
    return c_.rank;
  }
  bool peer_dead(int k) {
    if (!dead_[size_t(k)] && boot_.peer_failed(c_.world_rank(k))) dead_[size_t(k)] = true;
    return dead_[size_t(k)];
  }
  size_t bytes() const { return words_.size() * sizeof(uint64_t); }

  Status timed_out(const char* waiting) {
    const std::string msg = "agreement " + std::to_string(seq_) + " on " + c_.label() + " did not complete within " +
                            wait_timeout_text() + " " + waiting;
    WEFT_WARN(Subsys::coll, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::timed_out;
  }

  // Waits for r unless peer k dies first (then gives r up): true if r completed.
  bool wait_unless_dead(Request* r, int k, Status* timeout) {
    bool lost = false;
    t_.progress_engine().wait([&] {
      if (r->complete) return true;
      boot_.poll_local_liveness();
      if (peer_dead(k)) return lost = true;
      if (wait_timed_out()) {
        *timeout = Status::timed_out;
        return lost = true;
      }
      return false;
    });
    if (lost) t_.fail_request(r);
    return !lost && r->status.error == Status::ok;
  }

  // A member's part: its words to the coordinator, then the decision back. Status::pending when
  // the coordinator died first.
  Status follow(int coordinator) {
    const int to = c_.world_rank(coordinator);
    Request send, decision;
    send.kind = RequestKind::send;
    decision.kind = RequestKind::recv;
    std::vector<uint64_t> result(words_.size());
    WEFT_TRY(t_.irecv(result.data(), bytes(), to, message_tag(c_, seq_, coordinator, kDecision), ~0ull, &decision));
    WEFT_TRY(t_.isend(words_.data(), bytes(), to, message_tag(c_, seq_, c_.rank, kContribution), SendMode::standard,
                      &send));
    Status timeout = Status::ok;
    const bool sent = wait_unless_dead(&send, coordinator, &timeout);
    if (timeout != Status::ok) {
      t_.fail_request(&decision);
      return timed_out("sending to the coordinator");
    }
    if (!sent) {
      t_.fail_request(&decision);
      return Status::pending;
    }
    if (!wait_unless_dead(&decision, coordinator, &timeout))
      return timeout != Status::ok ? timed_out("waiting for the coordinator's decision") : Status::pending;
    words_ = std::move(result);
    return Status::ok;
  }

  Status coordinate() {
    const size_t n = words_.size();
    std::vector<std::vector<uint64_t>> got(size_t(c_.size));
    std::vector<Request> recvs(size_t(c_.size));
    for (int k = 0; k < c_.size; ++k) {
      if (k == c_.rank || dead_[size_t(k)]) continue;
      got[size_t(k)].resize(n);
      recvs[size_t(k)].kind = RequestKind::recv;
      WEFT_TRY(t_.irecv(got[size_t(k)].data(), bytes(), c_.world_rank(k), message_tag(c_, seq_, k, kContribution),
                        ~0ull, &recvs[size_t(k)]));
    }
    for (int k = 0; k < c_.size; ++k) {
      if (k == c_.rank || got[size_t(k)].empty()) continue;
      Status timeout = Status::ok;
      if (wait_unless_dead(&recvs[size_t(k)], k, &timeout)) {
        for (size_t i = 0; i < n; ++i) words_[i] &= got[size_t(k)][i];
      } else {
        if (timeout != Status::ok) {
          for (int j = k; j < c_.size; ++j)
            if (!got[size_t(j)].empty()) t_.fail_request(&recvs[size_t(j)]);
          return timed_out("collecting the members' words");
        }
        dead_[size_t(k)] = true;
      }
    }
    for (int k = 0; k < c_.size; ++k)
      if (dead_[size_t(k)] && bit(words_, k)) clear_bit(&words_, k);
    // The decision, in rank order: a member that gets it before the coordinator dies is the
    // one that coordinates next.
    for (int k = 0; k < c_.size; ++k) {
      if (k == c_.rank || dead_[size_t(k)]) continue;
      Request send;
      send.kind = RequestKind::send;
      WEFT_TRY(t_.isend(words_.data(), bytes(), c_.world_rank(k), message_tag(c_, seq_, c_.rank, kDecision),
                        SendMode::standard, &send));
      Status timeout = Status::ok;
      (void)wait_unless_dead(&send, k, &timeout);  // a member that died meanwhile needs none
      if (timeout != Status::ok) return timed_out("sending the decision");
    }
    return Status::ok;
  }

  Transport& t_;
  Bootstrap& boot_;
  const Comm& c_;
  uint32_t seq_;
  std::vector<uint64_t>& words_;
  std::vector<bool> dead_;
};

}  // namespace

std::vector<uint64_t> alive_mask(Transport& t, const Comm& c) {
  t.boot().check_liveness_now();
  std::vector<uint64_t> mask(alive_words(c), 0);
  for (int k = 0; k < c.size; ++k)
    if (!t.boot().peer_failed(c.world_rank(k))) mask[size_t(k) / 64] |= 1ull << (k % 64);
  return mask;
}

Status agree(Transport& t, const Comm& c, uint32_t seq, std::vector<uint64_t>* words) {
  WaitBound bound;
  return Agreement(t, c, seq, words).run();
}

}  // namespace weft::coll::fault
