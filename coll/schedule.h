// Collectives are schedules: rounds of point-to-point steps, each followed by local steps
// (reduce, copy). One schedule runs blocking, non-blocking (as an MPI request) or persistently
// (built once, started many times); WEFT_COLL_DUMP prints it.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coll.h"
#include "runtime/staging.h"

namespace weft::coll {

// On an intercommunicator, a send or receive step's peer names a rank of the remote group;
// local_peer(r) names rank r of the local group instead (steps among the local group).
inline constexpr int local_peer(int r) { return -2 - r; }
inline constexpr int local_rank_of(int peer) { return -2 - peer; }

struct Step {
  enum Kind : uint8_t { send, recv, reduce, copy, call, poll, join };
  Kind kind;
  int peer = -1;               // send / recv: communicator rank (or local_peer)
  const void* src = nullptr;   // send: data; reduce: `in`; copy: source
  void* dst = nullptr;         // recv: buffer; reduce: `inout`; copy: destination
  size_t bytes = 0;            // send / recv / copy
  size_t count = 0;            // reduce: elements; call / poll: index of the function
};

// What a poll step does besides waiting, in bytes this rank copies and reduces (the shared-
// memory engine's operations say; coll/replay.h costs the step by them).
struct PollWork {
  size_t copied = 0, reduced = 0;
};

class Schedule {
 public:
  explicit Schedule(const char* name) : name_(name) {}
  // A schedule whose reduce steps apply red.
  Schedule(const char* name, const Reduction& red) : name_(name), reduction_(red) {}
  void set_name(const char* name) { name_ = name; }
  // Rounds run in order; in a round, every send and receive is posted at once, and the local
  // steps run once they have all completed.
  void new_round() { rounds_.emplace_back(); }
  void send(int peer, const void* buf, size_t bytes) { add({Step::send, peer, buf, nullptr, bytes, 0}); }
  void recv(int peer, void* buf, size_t bytes) { add({Step::recv, peer, nullptr, buf, bytes, 0}); }
  void reduce(const void* in, void* inout, size_t count) { add({Step::reduce, -1, in, inout, 0, count}); }
  void copy(const void* src, void* dst, size_t bytes) { add({Step::copy, -1, src, dst, bytes, 0}); }
  // A local function (e.g. packing a non-contiguous buffer), run in order with the other
  // local steps of its round.
  void call(std::function<Status()> fn) {
    calls_.push_back(std::move(fn));
    add({Step::call, -1, nullptr, nullptr, 0, calls_.size() - 1});
  }
  // A local step that waits without blocking (e.g. on flags in shared memory): it returns
  // Status::pending until done, and runs again on later tests from where it left off. Later
  // steps of its round wait for it.
  using PollFn = std::function<Status(const CollContext&)>;
  void poll(PollFn fn, PollWork work = {}) {
    polls_.push_back(std::move(fn));
    poll_work_.push_back(work);
    add({Step::poll, -1, nullptr, nullptr, 0, polls_.size() - 1});
  }
  PollWork poll_work(size_t index) const { return index < poll_work_.size() ? poll_work_[index] : PollWork{}; }
  // A function every run calls when it starts, in the calling thread and in call order (the
  // shared-memory engine numbers its operations there: coll/shm/segment.h), before any step.
  void at_start(std::function<void()> fn) { starts_.push_back(std::move(fn)); }
  void run_starts() const {
    for (const auto& f : starts_) f();
  }
  // Starts a new round unless the last one is still empty.
  void next_round() { if (rounds_.empty() || !rounds_.back().empty()) new_round(); }
  // Scratch memory that lives as long as the schedule. Large scratch starts at the same offset
  // within a 4 KiB page as the call's buffers (ScratchAlignment): copies and reductions between
  // them then never pay the 4K-aliasing stall that a 16-byte skew costs on x86.
  char* scratch(size_t bytes);
  void set_reduction(const Reduction& r) { reduction_ = r; }
  // Keeps an object alive as long as the schedule (e.g. what a user reduction points to).
  void keep(std::shared_ptr<const void> object) { kept_.push_back(std::move(object)); }
  // Appends another schedule's rounds after this one's (and takes over its scratch memory,
  // functions, start functions, kept objects and lanes); if this one has lanes already, they
  // are joined first.
  void append(Schedule& other);
  // The same, for a schedule built on a group of this communicator's ranks: its peers are
  // group ranks, translated through ranks[group rank] (compositions such as coll/hier).
  void append_mapped(Schedule& other, const std::vector<int>& ranks);
  // The same for a schedule built on an intercommunicator's local group (Comm::local): its
  // peers become local_peer ranks.
  void append_local(Schedule& other);
  // Lanes: schedules that run alongside this one's rounds, each under a tag of its own (the
  // ones after the call's), so that their messages never match each other's; a pipeline runs
  // its fragments as lanes. Every rank must give a call as many lanes, in the same order.
  void add_lane(std::shared_ptr<Schedule> lane) { lanes_.push_back(std::move(lane)); }
  // A round of its own that waits (without blocking) until every lane of the run has finished:
  // the rounds added after it see the lanes' results (e.g. unpacking a staged output). The
  // main rounds alone may finish long before the lanes do.
  void join_lanes() {
    next_round();
    add({Step::join, -1, nullptr, nullptr, 0, 0});
    new_round();
  }
  const std::vector<std::shared_ptr<Schedule>>& lanes() const { return lanes_; }

  const char* name() const { return name_; }
  // The algorithm's place in algorithms() when the selector built this schedule for a call
  // (its runs are counted per algorithm), else -1.
  int algorithm() const { return algorithm_; }
  void set_algorithm(int index) { algorithm_ = index; }
  const std::vector<std::vector<Step>>& rounds() const { return rounds_; }
  const Reduction& reduction() const { return reduction_; }
  Status run_call(size_t index) const { return calls_[index](); }
  Status run_poll(size_t index, const CollContext& ctx) const { return polls_[index](ctx); }
  std::string dump() const;
  // Counts of (send, recv, reduce, copy) steps, for tests of schedule shapes.
  size_t count(Step::Kind k) const;

 private:
  void add(const Step& s) {
    if (rounds_.empty()) new_round();
    rounds_.back().push_back(s);
  }
  const char* name_;
  int algorithm_ = -1;
  std::vector<std::vector<Step>> rounds_;
  std::vector<StagingBuffer> scratch_;
  std::vector<std::shared_ptr<const void>> kept_;
  std::vector<std::function<Status()>> calls_;
  std::vector<PollFn> polls_;
  std::vector<PollWork> poll_work_;  // beside polls_
  std::vector<std::function<void()>> starts_;
  std::vector<std::shared_ptr<Schedule>> lanes_;
  Reduction reduction_{};
};

// While alive, scratch memory of schedules built on this thread is placed at the page offset
// of `like` (coll::plan sets it to the call's receive buffer).
class ScratchAlignment {
 public:
  explicit ScratchAlignment(const void* like);
  ~ScratchAlignment();
  ScratchAlignment(const ScratchAlignment&) = delete;
  ScratchAlignment& operator=(const ScratchAlignment&) = delete;

 private:
  size_t previous_;
};

// Runs a schedule on a communicator. The tag (the communicator's collective sequence number)
// keeps concurrent collectives on one communicator apart.
class ScheduleRun {
 public:
  ScheduleRun(CollContext ctx, std::shared_ptr<const Schedule> schedule);
  // A run given up unfinished takes its requests out of the transport first.
  ~ScheduleRun();
  ScheduleRun(const ScheduleRun&) = delete;
  ScheduleRun& operator=(const ScheduleRun&) = delete;
  // Fails at once (Status::peer_failed) when a member of the communicator is known to have
  // failed; once running, the run fails as soon as one is (failure is contagious within a
  // communicator), whichever rank it waits for. Takes the next tags of the communicator, or
  // those reserved (reserve_tags) when given.
  Status start(const uint32_t* reserved = nullptr);
  // Advances as far as possible without waiting; true once finished (status() says how).
  bool test();
  Status wait();
  Status status() const { return status_; }
  // Lends the run a request array to reuse (blocking runs recycle one), and takes it back.
  void adopt_requests(std::vector<Request>&& spare) {
    requests_ = std::move(spare);
    active_ = 0;
  }
  std::vector<Request> release_requests() { return std::move(requests_); }
  // A finished run made ready to run schedule on ctx, keeping its request array (and the
  // memory of the run itself) instead of allocating anew: non-blocking calls recycle theirs.
  void reuse(CollContext ctx, std::shared_ptr<const Schedule> schedule);
  // Lets go of the schedule once finished, so that the plan cache sees the plan free again.
  void drop_schedule() { schedule_.reset(); }

 private:
  Status start_with_tag(uint32_t tag);
  bool test_rounds();
  Status post_round();
  // Status::peer_failed (with the detail naming the rank) once a member is known to have failed.
  Status check_members();
  // Gives up the current round's incomplete requests and ends the run with st.
  void fail_run(Status st);
  // Profiler events (runtime/profiler.h): the collective (a top-level run's own), the parent of
  // this run's rounds (that event, or the top-level run's for a lane), the current round.
  void profile_start();
  void profile_round_start();
  void profile_round_end(Status st);
  void profile_end(Status st);
  void* prof_coll_ = nullptr;
  void* prof_parent_ = nullptr;
  void* prof_round_ = nullptr;
  CollContext ctx_;
  std::shared_ptr<const Schedule> schedule_;
  uint32_t tag_ = 0;
  size_t round_ = 0;
  size_t next_local_ = 0;  // where the current round's local steps resume (after a pending poll)
  std::vector<Request> requests_;  // [0, active_) belong to the current round; kept between rounds
  size_t active_ = 0;
  bool done_ = false;
  Status status_ = Status::ok;
  std::vector<std::unique_ptr<ScheduleRun>> lanes_;
};

// Takes the tags (collective sequence numbers) one run of schedule uses on comm, for a
// persistent collective when it is initialized: MPI matches persistent collectives in the order
// of their initialization, whatever order they are started in. Each start then uses these tags
// (runs of one request never overlap, and messages of one tag do not overtake each other).
uint32_t reserve_tags(const Comm& comm, const Schedule& schedule);

// Blocking execution: start and wait.
Status run(CollContext& ctx, std::shared_ptr<const Schedule> schedule);

}  // namespace weft::coll
