#include "coll/fault/monitored_barrier.h"

#include <time.h>

#include <algorithm>
#include <cstring>

#include "pt2pt/tag.h"
#include "runtime/rank_set.h"
#include "runtime/log.h"

namespace weft::coll::fault {

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// Polls until every request in rs is complete, its peer (job rank) has failed, or the deadline
// passes; the incomplete ones are given up. ok[k]: request k completed without error.
std::vector<bool> wait_until(Transport& t, std::vector<Request>& rs, const std::vector<int>& peers, uint64_t deadline) {
  Bootstrap& boot = t.boot();
  t.progress_engine().wait([&] {
    boot.poll_local_liveness();
    bool open = false;
    for (size_t k = 0; k < rs.size(); ++k)
      if (peers[k] >= 0 && !rs[k].complete && !boot.peer_failed(peers[k])) open = true;
    return !open || now_ns() >= deadline;
  });
  std::vector<bool> ok(rs.size(), false);
  for (size_t k = 0; k < rs.size(); ++k) {
    if (peers[k] < 0) continue;
    if (!rs[k].complete) t.fail_request(&rs[k]);
    else ok[k] = rs[k].status.error == Status::ok;
  }
  return ok;
}

}  // namespace

Status monitored_barrier(Transport& t, const Comm& c, int timeout_ms, std::vector<int>* late) {
  late->clear();
  // Numbered like every collective on c: all members call them in the same order.
  const uint32_t seq = c.coll_seq++ & uint32_t(tag::kTagMask);
  const uint64_t timeout_ns = uint64_t(timeout_ms) * 1'000'000ull;
  const uint64_t start = now_ns();
  const size_t n = size_t(c.size);
  if (c.rank == 0) {
    std::vector<Request> arrivals(n);
    std::vector<int> peers(n, -1);
    char sink[1];
    for (int k = 1; k < c.size; ++k) {
      arrivals[size_t(k)].kind = RequestKind::recv;
      peers[size_t(k)] = c.world_rank(k);
      WEFT_TRY(t.irecv(sink, 0, c.world_rank(k), tag::make(c.coll_context(), uint32_t(k), seq), ~0ull,
                       &arrivals[size_t(k)]));
    }
    const std::vector<bool> arrived = wait_until(t, arrivals, peers, start + timeout_ns);
    for (int k = 1; k < c.size; ++k)
      if (!arrived[size_t(k)]) late->push_back(k);
    // The release, to every rank (a late one finds it when it comes): the late ranks' count and list.
    std::vector<int32_t> release(1 + late->size());
    release[0] = int32_t(late->size());
    for (size_t i = 0; i < late->size(); ++i) release[1 + i] = (*late)[i];
    std::vector<Request> sends(n);
    std::vector<int> to(n, -1);
    for (int k = 1; k < c.size; ++k) {
      if (t.boot().peer_failed(c.world_rank(k))) continue;
      sends[size_t(k)].kind = RequestKind::send;
      to[size_t(k)] = c.world_rank(k);
      WEFT_TRY(t.isend(release.data(), release.size() * sizeof(int32_t), c.world_rank(k),
                       tag::make(c.coll_context(), 0, seq), SendMode::standard, &sends[size_t(k)]));
    }
    (void)wait_until(t, sends, to, now_ns() + timeout_ns);  // eager: a live rank's completes at once
  } else {
    // [0]: the arrival, to rank 0; [1]: rank 0's release. Posted in place: the transport keeps
    // their addresses.
    std::vector<Request> both(2);
    both[0].kind = RequestKind::send;
    both[1].kind = RequestKind::recv;
    std::vector<int32_t> release(1 + n);
    const int root = c.world_rank(0);
    static const char none = 0;
    WEFT_TRY(t.irecv(release.data(), release.size() * sizeof(int32_t), root, tag::make(c.coll_context(), 0, seq),
                     ~0ull, &both[1]));
    WEFT_TRY(t.isend(&none, 0, root, tag::make(c.coll_context(), uint32_t(c.rank), seq), SendMode::standard,
                     &both[0]));
    // Rank 0 waits up to the timeout from its own arrival: give it twice that from ours.
    const std::vector<bool> ok = wait_until(t, both, {root, root}, start + 2 * timeout_ns);
    if (!ok[1]) {
      late->push_back(0);
    } else {
      // Rank 0's bytes: only ranks of c, each once, are taken from them.
      const int32_t count = release[0];
      for (int32_t i = 0; i < count && size_t(i) < n; ++i) {
        const int32_t k = release[1 + size_t(i)];
        if (k >= 0 && k < c.size && std::find(late->begin(), late->end(), k) == late->end()) late->push_back(k);
      }
    }
  }
  if (late->empty()) return Status::ok;
  const std::string msg = "monitored barrier on " + c.label() + ": rank" + (late->size() > 1 ? "s " : " ") +
                          rank_list_text(*late) + " did not arrive within " +
                          std::to_string(timeout_ms) + " ms";
  WEFT_WARN(Subsys::coll, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::timed_out;
}

}  // namespace weft::coll::fault
