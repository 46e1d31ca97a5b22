#include "schedule.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "algorithm.h"
#include "call.h"
#include "gpu/gpu_coll.h"
#include "pt2pt/tag.h"
#include "runtime/log.h"
#include "runtime/profiler.h"
#include "runtime/wait_deadline.h"

namespace weft::coll {

namespace {
constexpr size_t kPage = 4096;
constexpr size_t kAlignFrom = 16 * 1024;  // smaller scratch is not worth a page of padding
thread_local size_t scratch_page_offset = 0;
}  // namespace

ScratchAlignment::ScratchAlignment(const void* like) : previous_(scratch_page_offset) {
  scratch_page_offset = reinterpret_cast<uintptr_t>(like) & (kPage - 1);
}

ScratchAlignment::~ScratchAlignment() { scratch_page_offset = previous_; }

char* Schedule::scratch(size_t bytes) {
  if (bytes < kAlignFrom) {
    scratch_.push_back(staging_buffer(bytes));
    return scratch_.back().get();
  }
  scratch_.push_back(staging_buffer(bytes + 2 * kPage));
  uintptr_t at = reinterpret_cast<uintptr_t>(scratch_.back().get());
  at = (at + kPage - 1) / kPage * kPage + ((scratch_page_offset + kPage / 2) & (kPage - 1));
  return reinterpret_cast<char*>(at);
}

void Schedule::append(Schedule& other) {
  if (!lanes_.empty() && !other.rounds_.empty()) join_lanes();
  const size_t call_base = calls_.size(), poll_base = polls_.size();
  for (auto& f : other.calls_) calls_.push_back(std::move(f));
  other.calls_.clear();
  for (auto& f : other.polls_) polls_.push_back(std::move(f));
  other.polls_.clear();
  poll_work_.insert(poll_work_.end(), other.poll_work_.begin(), other.poll_work_.end());
  other.poll_work_.clear();
  for (auto& f : other.starts_) starts_.push_back(std::move(f));
  other.starts_.clear();
  if (other.reduction_.elem_size) reduction_ = other.reduction_;
  for (auto r : other.rounds_) {
    for (Step& st : r)
      if (st.kind == Step::call) st.count += call_base;
      else if (st.kind == Step::poll) st.count += poll_base;
    rounds_.push_back(std::move(r));
  }
  for (auto& b : other.scratch_) scratch_.push_back(std::move(b));
  other.scratch_.clear();
  for (auto& k : other.kept_) kept_.push_back(std::move(k));
  other.kept_.clear();
  for (auto& l : other.lanes_) lanes_.push_back(std::move(l));
  other.lanes_.clear();
}

void Schedule::append_mapped(Schedule& other, const std::vector<int>& ranks) {
  for (auto& round : other.rounds_)
    for (Step& st : round)
      if (st.kind == Step::send || st.kind == Step::recv) st.peer = ranks[size_t(st.peer)];
  append(other);
}

void Schedule::append_local(Schedule& other) {
  for (auto& round : other.rounds_)
    for (Step& st : round)
      if (st.kind == Step::send || st.kind == Step::recv) st.peer = local_peer(st.peer);
  append(other);
}

size_t Schedule::count(Step::Kind k) const {
  size_t n = 0;
  for (const auto& r : rounds_)
    for (const Step& s : r) n += s.kind == k;
  return n;
}

std::string Schedule::dump() const {
  std::string out = std::string("schedule ") + name_ + ": " + std::to_string(rounds_.size()) + " rounds\n";
  for (size_t i = 0; i < rounds_.size(); ++i) {
    out += "  round " + std::to_string(i) + ":";
    for (const Step& s : rounds_[i]) {
      switch (s.kind) {
        case Step::send: out += " send(" + std::to_string(s.peer) + "," + std::to_string(s.bytes) + "B)"; break;
        case Step::recv: out += " recv(" + std::to_string(s.peer) + "," + std::to_string(s.bytes) + "B)"; break;
        case Step::reduce: out += " reduce(" + std::to_string(s.count) + ")"; break;
        case Step::copy: out += " copy(" + std::to_string(s.bytes) + "B)"; break;
        case Step::call: out += " local"; break;
        case Step::poll: out += " wait(shared memory)"; break;
        case Step::join: out += " join(lanes)"; break;
      }
    }
    out += "\n";
  }
  for (size_t k = 0; k < lanes_.size(); ++k) out += "  lane " + std::to_string(k) + ": " + lanes_[k]->dump();
  return out;
}

ScheduleRun::ScheduleRun(CollContext ctx, std::shared_ptr<const Schedule> schedule)
    : ctx_(ctx), schedule_(std::move(schedule)) {}

ScheduleRun::~ScheduleRun() {
  if (!done_)
    for (size_t k = 0; k < active_; ++k) ctx_.transport->fail_request(&requests_[k]);
  if (prof_coll_ || prof_round_) [[unlikely]] profile_end(done_ ? status_ : Status::internal);
}

void ScheduleRun::profile_start() {
  weft_profiler_event_t e = profiler::event(WEFT_PROFILER_COLL, schedule_->name());
  const char* colon = strchr(schedule_->name(), ':');
  e.algorithm = colon ? colon + 1 : schedule_->name();
  for (const auto& round : schedule_->rounds())
    for (const Step& s : round) e.bytes += s.kind == Step::send ? s.bytes : 0;
  e.comm = ctx_.comm.context_id;
  e.comm_size = ctx_.comm.size;
  e.seq = ctx_.comm.coll_seq;
  prof_coll_ = prof_parent_ = profiler::start(e);
}

void ScheduleRun::profile_round_start() {
  weft_profiler_event_t e = profiler::event(WEFT_PROFILER_ROUND, schedule_->name());
  e.parent = prof_parent_;
  e.round = int(round_);
  prof_round_ = profiler::start(e);
}

// Stops the round's transfers (their messages are complete, or given up) and the round.
void ScheduleRun::profile_round_end(Status st) {
  for (size_t k = 0; k < active_; ++k) {
    Request& r = requests_[k];
    if (!r.profile) continue;
    if (r.status.error != Status::ok) profiler::failed(r.profile, r.status.error);
    profiler::stop(r.profile);
    r.profile = nullptr;
  }
  if (prof_round_) {
    if (st != Status::ok) profiler::failed(prof_round_, st);
    profiler::stop(prof_round_);
    prof_round_ = nullptr;
  }
}

void ScheduleRun::profile_end(Status st) {
  profile_round_end(st);
  if (prof_coll_) {
    if (st != Status::ok) profiler::failed(prof_coll_, st);
    profiler::stop(prof_coll_);
    prof_coll_ = nullptr;
  }
}

void ScheduleRun::reuse(CollContext ctx, std::shared_ptr<const Schedule> schedule) {
  std::vector<Request> requests = release_requests();
  this->~ScheduleRun();  // a finished run: nothing of it is still posted
  new (this) ScheduleRun(ctx, std::move(schedule));
  adopt_requests(std::move(requests));
}

Status ScheduleRun::check_members() {
  if (wait_timed_out()) [[unlikely]] {
    std::string msg = std::string("the collective (") + schedule_->name() + ") on " + ctx_.comm.label() +
                      " did not complete within " + wait_timeout_text();
    WEFT_WARN(Subsys::coll, "%s", msg.c_str());
    gpu::stop_kernels(ctx_.comm, Status::timed_out, msg);
    set_error_detail(msg);
    return Status::timed_out;
  }
  Transport& t = *ctx_.transport;
  t.boot().poll_local_liveness();
  if (t.boot().take_periodic_turn()) [[unlikely]] t.poll_notices();  // every 20 ms
  if (t.boot().fault_events() == 0) [[likely]] return Status::ok;
  if (t.revoked(ctx_.comm)) {
    std::string msg = ctx_.comm.label() + " has been revoked (MPIX_Comm_revoke): the collective (" +
                      schedule_->name() + ") fails";
    WEFT_WARN(Subsys::coll, "%s", msg.c_str());
    gpu::stop_kernels(ctx_.comm, Status::revoked, msg);
    set_error_detail(msg);
    return Status::revoked;
  }
  const int dead = t.failed_member(ctx_.comm);
  if (dead < 0) return Status::ok;
  std::string msg = Transport::failure_detail(&ctx_.comm, ctx_.comm.world_rank(dead)) + ": the collective (" +
                    schedule_->name() + ") fails, as does every operation on " + ctx_.comm.label();
  WEFT_WARN(Subsys::coll, "%s", msg.c_str());
  gpu::stop_kernels(ctx_.comm, Status::peer_failed, msg);
  set_error_detail(msg);
  return Status::peer_failed;
}

void ScheduleRun::fail_run(Status st) {
  for (size_t k = 0; k < active_; ++k) ctx_.transport->fail_request(&requests_[k]);
  if (st == Status::transport || st == Status::peer_failed) {
    // A transport error in a communicator with a failed member comes of the failure (a peer
    // gave a message up, say): it is reported as the failure, naming the rank.
    ctx_.transport->boot().check_liveness_now();
    if (check_members() == Status::peer_failed) st = Status::peer_failed;
  }
  status_ = st;
  done_ = true;
  if (prof_coll_ || prof_round_) [[unlikely]] profile_end(st);
  else if (profiler::wants(WEFT_PROFILER_TRANSFER)) [[unlikely]] profile_round_end(st);
}

uint32_t reserve_tags(const Comm& comm, const Schedule& schedule) {
  const uint32_t first = comm.coll_seq;
  comm.coll_seq += 1 + uint32_t(schedule.lanes().size());
  return first;
}

Status ScheduleRun::start(const uint32_t* reserved) {
  if (ctx_.calls) ctx_.calls->start_handed_off();  // calls posted earlier claim first
  WEFT_TRY(check_members());
  count_algorithm_call(schedule_->algorithm());
  if (profiler::wants(WEFT_PROFILER_COLL | WEFT_PROFILER_ROUND | WEFT_PROFILER_TRANSFER)) [[unlikely]] {
    prof_parent_ = profiler::current();
    if (profiler::wants(WEFT_PROFILER_COLL)) profile_start();
  }
  const uint32_t first = reserved ? *reserved : reserve_tags(ctx_.comm, *schedule_);
  lanes_.clear();
  for (size_t k = 0; k < schedule_->lanes().size(); ++k) {
    lanes_.push_back(std::make_unique<ScheduleRun>(ctx_, schedule_->lanes()[k]));
    lanes_.back()->prof_parent_ = prof_parent_;
    WEFT_TRY(lanes_.back()->start_with_tag(first + 1 + uint32_t(k)));
  }
  return start_with_tag(first);
}

Status ScheduleRun::start_with_tag(uint32_t tag) {
  tag_ = tag & uint32_t(tag::kTagMask);
  round_ = 0;
  next_local_ = 0;
  done_ = false;
  status_ = Status::ok;
  schedule_->run_starts();
  if (ctx_.dump) fprintf(stderr, "[rank %d] %s", ctx_.comm.rank, schedule_->dump().c_str());
  return post_round();
}

namespace {
// Readies a request of an earlier round for reuse: what the transports read and set.
void reset(Request& r, RequestKind kind) {
  r.kind = kind;
  r.collective_step = true;
  r.complete = false;
  r.status = RequestStatus{};
  r.peer = -1;
  r.transport_handle = nullptr;
  r.profile = nullptr;
}
// Where a send or receive step goes: a rank of the communicator (of the remote group on an
// intercommunicator), on its collective context, or a rank of an intercommunicator's local
// group (local_peer), on the local group's context.
struct Peer {
  int rank;
  int world_rank;
  uint32_t context;
};
inline Peer peer_of(const Comm& c, int peer) {
  if (peer >= 0) [[likely]] return {peer, c.peer_world_rank(peer), c.coll_context()};
  const int r = local_rank_of(peer);
  return {r, c.world_rank(r), c.local_context()};
}
}  // namespace

Status ScheduleRun::post_round() {
  const auto& rounds = schedule_->rounds();
  active_ = 0;
  if (round_ >= rounds.size()) {
    done_ = true;
    if (prof_coll_) [[unlikely]] profile_end(Status::ok);
    return Status::ok;
  }
  const bool profiled = profiler::wants(WEFT_PROFILER_ROUND | WEFT_PROFILER_TRANSFER);
  if (profiled) [[unlikely]] {
    if (profiler::wants(WEFT_PROFILER_ROUND)) profile_round_start();
  }
  const Comm& c = ctx_.comm;
  size_t comm_steps = 0;
  for (const Step& s : rounds[round_]) comm_steps += s.kind == Step::send || s.kind == Step::recv;
  if (requests_.size() < comm_steps) requests_.resize(comm_steps);
  size_t& i = active_;
  // Receives first: a peer's message then finds its receive already posted.
  for (const Step& s : rounds[round_]) {
    if (s.kind != Step::recv) continue;
    Request& r = requests_[i++];
    reset(r, RequestKind::recv);
    const Peer p = peer_of(c, s.peer);
    WEFT_TRY(ctx_.transport->irecv(s.dst, s.bytes, p.world_rank, tag::make(p.context, uint32_t(p.rank), tag_), ~0ull,
                                  &r));
    if (profiled && profiler::wants(WEFT_PROFILER_TRANSFER)) [[unlikely]] {
      profiler::ParentScope under(prof_round_ ? prof_round_ : prof_parent_);
      r.profile = ctx_.transport->transfer_event("recv", p.world_rank, s.bytes);
    }
  }
  for (const Step& s : rounds[round_]) {
    if (s.kind != Step::send) continue;
    Request& r = requests_[i++];
    reset(r, RequestKind::send);
    const Peer p = peer_of(c, s.peer);
    if (profiled && profiler::wants(WEFT_PROFILER_TRANSFER)) [[unlikely]] {
      profiler::ParentScope under(prof_round_ ? prof_round_ : prof_parent_);
      r.profile = ctx_.transport->transfer_event("send", p.world_rank, s.bytes);
    }
    WEFT_TRY(ctx_.transport->isend(s.src, s.bytes, p.world_rank, tag::make(p.context, uint32_t(c.rank), tag_),
                                  SendMode::standard, &r));
  }
  return Status::ok;
}

bool ScheduleRun::test() {
  bool done = test_rounds();
  if (!done) {
    // A rank waiting on a live peer that has already left the call (it saw the failure first)
    // would wait forever: any failed member ends the run. Checked after progress, so a run
    // whose messages have all arrived completes even if a peer has exited since (a survivor
    // that finished first and left MPI_Finalize is not a reason to fail).
    if (Status st = check_members(); st != Status::ok) [[unlikely]] {
      fail_run(st);
      done = true;
    }
  }
  for (auto& lane : lanes_) {
    if (!lane->test()) done = false;
    else if (lane->status() != Status::ok && status_ == Status::ok) status_ = lane->status();
  }
  return done;
}

bool ScheduleRun::test_rounds() {
  auto fail = [this](Status st) {
    fail_run(st);  // the round's other requests may still be posted
    return true;
  };
  while (!done_) {
    if (next_local_ == 0) {
      for (size_t k = 0; k < active_; ++k) {
        const Request& r = requests_[k];
        if (!r.complete) return false;
        if (r.status.error != Status::ok) return fail(r.status.error);
      }
    }
    const auto& steps = schedule_->rounds()[round_];
    for (; next_local_ < steps.size(); ++next_local_) {
      const Step& s = steps[next_local_];
      if (s.kind == Step::reduce) {
        Status st = schedule_->reduction().apply(s.src, s.dst, s.count);
        if (st != Status::ok) return fail(st);
      } else if (s.kind == Step::copy && s.bytes) {
        memmove(s.dst, s.src, s.bytes);
      } else if (s.kind == Step::call) {
        Status st = schedule_->run_call(s.count);
        if (st != Status::ok) return fail(st);
      } else if (s.kind == Step::poll) {
        Status st = schedule_->run_poll(s.count, ctx_);
        if (st == Status::pending) return false;
        if (st != Status::ok) return fail(st);
      } else if (s.kind == Step::join) {
        for (auto& lane : lanes_) {
          if (!lane->test()) return false;
          if (lane->status() != Status::ok) return fail(lane->status());
        }
      }
    }
    next_local_ = 0;
    if (prof_round_ || prof_coll_) [[unlikely]] profile_round_end(Status::ok);
    else if (profiler::wants(WEFT_PROFILER_TRANSFER)) [[unlikely]] profile_round_end(Status::ok);
    ++round_;
    Status st = post_round();
    if (st != Status::ok) return fail(st);
  }
  return true;
}

Status ScheduleRun::wait() {
  WaitBound bound;
  Progress& progress = ctx_.transport->progress_engine();
  uint32_t idle = 0;
  while (!test()) {
    if (!lanes_.empty()) {  // several runs in flight: keep them all moving
      progress.pass(&idle);
      continue;
    }
    Request* open = nullptr;
    if (next_local_ == 0) {
      for (size_t k = 0; k < active_ && !open; ++k)
        if (!requests_[k].complete) open = &requests_[k];
    }
    if (open) ctx_.transport->wait(open, &ctx_.comm);
    else progress.pass(&idle);  // a poll step waits on other ranks: keep everything moving
  }
  return status_;
}

Status run(CollContext& ctx, std::shared_ptr<const Schedule> schedule) {
  // Blocking runs never nest: one request array serves them all without allocating.
  static thread_local std::vector<Request> spare;
  ScheduleRun r(ctx, std::move(schedule));
  r.adopt_requests(std::move(spare));
  Status s = r.start();
  if (s == Status::ok) s = r.wait();
  if (s == Status::ok) spare = r.release_requests();  // a failed start may leave some posted
  return s;
}

}  // namespace weft::coll
