// MPI_Comm_idup's agreement (dup_agreement.h): a state machine that a poll step of the call's
// schedule advances whenever the request is tested or the progress engine runs.
#include "dup_agreement.h"

#include <cstdio>
#include <vector>

#include "agreements.h"

namespace weft::coll {

namespace {

// The members of c as one list: an intracommunicator's ranks; an intercommunicator's two
// groups, the one whose first member has the lower job rank first (both groups see the same
// list). peers[k]: member k as a schedule step names it; me: this rank's place.
struct Members {
  std::vector<int> peers;
  int me = 0;
};

Members members_of(const Comm& c) {
  Members m;
  std::vector<int> local(size_t(c.size)), remote;
  for (int r = 0; r < c.size; ++r) local[size_t(r)] = c.inter ? local_peer(r) : r;
  m.me = c.rank;
  if (!c.inter) {
    m.peers = std::move(local);
    return m;
  }
  for (int r = 0; r < c.peer_count(); ++r) remote.push_back(r);
  const bool local_first = c.world_ranks.front() < c.remote_world_ranks.front();
  if (!local_first) m.me += c.peer_count();
  m.peers = local_first ? local : remote;
  const std::vector<int>& second = local_first ? remote : local;
  m.peers.insert(m.peers.end(), second.begin(), second.end());
  return m;
}

// The bitwise and of *value over the members, left in *value on every one: a binomial tree
// reduces it to the first member, which sends the result back down the same tree. inbox: one
// word per level of the tree.
std::shared_ptr<Schedule> and_over(const Members& m, uint64_t* value, uint64_t* inbox) {
  auto s = std::make_shared<Schedule>("context agreement",
                                      Reduction{ReduceOp::band, BasicType::u64, sizeof(uint64_t)});
  const int n = int(m.peers.size()), v = m.me;
  int mask = 1;
  for (; mask < n; mask <<= 1, ++inbox) {
    if (v & mask) {
      s->new_round();
      s->send(m.peers[size_t(v - mask)], value, sizeof *value);
      break;
    }
    if (v + mask < n) {
      s->new_round();
      s->recv(m.peers[size_t(v + mask)], inbox, sizeof *inbox);
      s->reduce(inbox, value, 1);
    }
  }
  // mask: v's lowest set bit (its parent is v - mask), or for the first member the tree's span.
  if (v > 0) {
    s->new_round();
    s->recv(m.peers[size_t(v - mask)], value, sizeof *value);
  }
  s->new_round();
  for (int k = mask >> 1; k >= 1; k >>= 1)
    if (v + k < n) s->send(m.peers[size_t(v + k)], value, sizeof *value);
  return s;
}

class Agreement {
 public:
  Agreement(const CollContext& ctx, ContextIds* ids, DupDone done)
      : channel_(std::make_shared<Comm>(ctx.comm)), ids_(ids), done_(std::move(done)),
        first_tag_(ctx.comm.coll_seq), inbox_(32) {
    ctx.comm.coll_seq += kDupRounds;  // every member reserves the same tags: a collective call
    exchange_ = and_over(members_of(*channel_), &value_, inbox_.data());
  }
  ~Agreement() { end_round(); }
  Agreement(const Agreement&) = delete;
  Agreement& operator=(const Agreement&) = delete;

  const std::shared_ptr<Comm>& channel() const { return channel_; }

  // Status::pending until the members agreed (then done_ has run) or the agreement failed.
  Status poll(const CollContext& ctx) {
    for (;;) {
      if (!run_) {
        if (round_ == kDupRounds) return no_pair();
        slice_ = slice_of(round_);
        offered_ = value_ = ids_->offer(slice_);
        channel_->coll_seq = first_tag_ + round_;  // each round under a tag of its own
        run_ = std::make_unique<ScheduleRun>(context_on(ctx, *channel_), exchange_);
        if (Status s = run_->start(); s != Status::ok) {
          end_round();
          return s;
        }
      }
      if (!run_->test()) return Status::pending;
      const Status s = run_->status();
      end_round();
      if (s != Status::ok) return s;
      if (value_ != 0) {
        finish(ctx, ids_->take_in_slice(slice_, value_));
        return Status::ok;
      }
      ++round_;  // no pair of this slice is free on every member: another slice
    }
  }

 private:
  // The slice of a round: spread by the communicator, the call and the round, so that two
  // agreements in flight on one rank seldom offer the same slice twice running.
  uint32_t slice_of(uint32_t round) const {
    uint64_t h = ((uint64_t(channel_->context_id) << 32) | first_tag_) * 0x9E3779B97F4A7C15ull;
    h += uint64_t(round) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return uint32_t(h % kSlices);
  }

  void end_round() {
    if (!run_) return;
    run_.reset();  // an unfinished run takes its requests out of the transport
    ids_->release(slice_, offered_);
  }

  void finish(const CollContext& ctx, uint32_t context) {
    const Comm& c = *channel_;
    done_(c.inter ? inter_view(context, c.world_ranks, c.remote_world_ranks, c.world_rank(c.rank))
                  : view_with_nodes(ctx, context, c.world_ranks));
  }

  static Status no_pair() {
    char detail[120];
    snprintf(detail, sizeof(detail), "no free context id among the members (%u rounds over %u non-blocking pairs)",
             kDupRounds, kSlices * 64);
    set_error_detail(detail);
    return Status::transport;
  }

  std::shared_ptr<Comm> channel_;  // a copy of the communicator: its rounds run on it
  ContextIds* ids_;
  DupDone done_;
  uint32_t first_tag_;
  std::vector<uint64_t> inbox_;
  uint64_t value_ = 0;
  std::shared_ptr<const Schedule> exchange_;
  uint32_t round_ = 0, slice_ = 0;
  uint64_t offered_ = 0;
  std::unique_ptr<ScheduleRun> run_;
};

}  // namespace

std::shared_ptr<Schedule> dup_schedule(const CollContext& ctx, ContextIds* ids, DupDone done,
                                       std::shared_ptr<Comm>* channel) {
  auto agreement = std::make_shared<Agreement>(ctx, ids, std::move(done));
  *channel = agreement->channel();
  auto s = std::make_shared<Schedule>("comm_idup");
  s->poll([agreement](const CollContext& c) { return agreement->poll(c); });
  return s;
}

}  // namespace weft::coll
