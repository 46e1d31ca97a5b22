// One collective call on user buffers, from its arguments to its run: the buffers laid out for
// the algorithm, the plan (reused for a repeated blocking or non-blocking call), and the run, blocking,
// non-blocking or persistent. The MPI bindings check arguments, translate handles and map
// errors; the rest is here.
//
// The caller describes the call (Description: buffers, counts, datatype objects, root,
// reduction), free of handles; Call::plan lays each side out per rank as pieces (pointer,
// count, datatype), keys the plan of a call that may be reused, and asks coll/gpu whether
// device buffers run GPU-native. Contiguous pieces are used in place; otherwise the call packs
// its inputs into scratch memory in a first round and unpacks its outputs in a last one, around
// the algorithm's rounds, so every datatype works in every mode. GPU device pieces are staged
// through host scratch the same way.
#pragma once
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coll.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "schedule.h"

namespace weft::coll {

enum class Mode { blocking, nonblocking, persistent };

struct Piece {
  const void* buf = nullptr;
  size_t count = 0;
  const Datatype* type = nullptr;
};

// The arguments of a blocking or non-blocking call whose schedule can be reused when the same
// call comes again (same mode, buffers, counts, datatypes, operation and root): repeated calls
// then skip planning. Datatypes are compared by object and held by the cache, so a freed and
// recreated type never matches a stale entry; calls with user operations and v/w forms are not
// cached. `op` is the caller's handle of the operation.
struct PlanKey {
  int coll = -1;
  bool blocking = true;
  const void* send = nullptr;
  const void* recv = nullptr;
  long long send_count = 0, recv_count = 0;
  const Datatype* send_type = nullptr;
  const Datatype* recv_type = nullptr;
  int op = 0;
  int root = 0;
  bool operator==(const PlanKey&) const = default;
};

// One side of a described call: a buffer and its datatype, with one count for every rank, or
// (per_rank: the v and w forms) a count per rank and a displacement per rank in extents of
// `type` (displs) or in bytes (byte_displs, w forms, with one datatype per rank in `types`).
// Without displacements rank r's block follows rank r - 1's. in_place: buf is the caller's
// in-place marker, never read. The caller has checked every side its rank uses.
struct Side {
  const void* buf = nullptr;
  bool in_place = false;
  long long count = 0;
  const Datatype* type = nullptr;
  bool per_rank = false;
  const int* counts = nullptr;
  const int* displs = nullptr;
  std::vector<ptrdiff_t> byte_displs{};
  std::vector<const Datatype*> types{};
};

// One collective call as the caller describes it, free of handles: its sides (bcast: recv is
// the buffer, send the same), root, reduction, and for the neighbour collectives the ranks
// received from and sent to. Call::plan lays it out for its collective.
struct Description {
  explicit Description(Collective c) : kind(c) {}
  Collective kind;
  Side send, recv;
  int root = 0;
  // Reductions: the reduction and the elements it combines over the whole vector (of the
  // datatype's packed form); op is the caller's handle of the operation, for the plan key.
  Reduction red{};
  size_t reduce_count = 0;
  int op = 0;
  std::vector<size_t> counts;  // reduce_scatter: datatype elements per rank
  std::vector<int> sources, destinations;  // neighbour collectives (-1: no rank)
  bool cartesian = false;
};

// Keeps a derived datatype alive as long as the holder (null for a predefined one).
std::shared_ptr<const void> hold_type(const Datatype* d);

// A blocking or non-blocking call's plan, remembered in its communicator's state (comm_state.h).
struct CachedPlan {
  PlanKey key;
  std::shared_ptr<const Schedule> schedule;
  std::shared_ptr<const void> send_hold, recv_hold;  // keep the key's datatypes alive
};

// The non-blocking and persistent runs in flight, for one process. Owned by the layer that
// makes the CollContexts, which passes it down in them.
class Calls {
 public:
  // Starts schedule as request r; it completes through poll(). reserved: the tags a persistent
  // request took at its initialization (reserve_tags in schedule.h); none: the next ones.
  Status start(const CollContext& ctx, std::shared_ptr<const Schedule> schedule, Request* r,
               const uint32_t* reserved = nullptr);
  // Registers the progress poller that advances the runs in flight (armed only while some are).
  void attach(Progress* progress);
  static int poll(void* calls);  // returns how many finished
  // Starts the runs handed off to the progress engine (defer_first_steps), in the order they
  // were posted. Every run's start calls it first, so collectives on a communicator take their
  // shared-memory operation numbers in the order the calls were made.
  void start_handed_off();
  // Whether start() leaves even the first steps to the progress engine: when a progress thread
  // on a core of its own polls it, the caller only takes the call's tags and hands it over
  // (start_handed_off), and the steps (copies into shared memory among them) overlap its
  // computation. An error in starting then completes the request.
  void defer_first_steps(bool on) { defer_first_steps_ = on; }

 private:
  // A finished run, kept for the next start (a request array and no allocation per call:
  // with a progress thread, runs finish on that thread and start on the caller's).
  void recycle(std::unique_ptr<ScheduleRun> run);
  // A run for schedule on ctx: a recycled one when there is one.
  std::unique_ptr<ScheduleRun> take_run(const CollContext& ctx, std::shared_ptr<const Schedule> schedule);
  // A call posted with the first steps deferred: the caller only takes its tags and hands it
  // over, so a post touches little of what the progress thread last wrote.
  struct HandedOff {
    Request* request;
    CollContext ctx;
    std::shared_ptr<const Schedule> schedule;
    uint32_t tags;
  };
  std::vector<HandedOff> handed_off_;
  bool starting_ = false;  // in start_handed_off (a run's start calls it again)
  std::vector<std::pair<Request*, std::unique_ptr<ScheduleRun>>> running_;
  std::vector<std::unique_ptr<ScheduleRun>> spare_;
  bool defer_first_steps_ = false;
  Progress* progress_ = nullptr;
  Progress::PollerId poller_ = 0;
};

class Call {
 public:
  // ctx.calls must be set. `what` names the call in log lines (e.g. "MPI_Allreduce").
  Call(const CollContext& ctx, Mode mode, const char* what = "collective") : ctx_(ctx), mode_(mode), what_(what) {}

  // Keeps an object alive as long as the schedule.
  void keep(std::shared_ptr<const void> object) { kept_.push_back(std::move(object)); }

  // The described call, laid out and planned, or a call identical to an earlier one (same
  // mode, buffers, counts, datatypes, op and root) given that call's plan (describe.cpp).
  Status plan(const Description& d);
  // A blocking or non-blocking call identical to an earlier one (same buffers, counts, datatype
  // objects, predefined op handle and root) given that call's plan; d's reduction need not be
  // set up, as the earlier call's was valid. A plan still running (its scratch memory in use)
  // is not given out again. False: plan(d) it.
  bool reused(const Description& d);

  // Runs the planned call to completion (blocking), or starts it as r (non-blocking).
  Status run();
  Status start(Request* r);
  // The planned schedule, for a persistent request to start again and again.
  std::shared_ptr<const Schedule> schedule() const { return planned_; }
  Status error() const;

 private:
  // Blocking and non-blocking calls: reuses the schedule of an identical earlier call (true:
  // planned).
  bool reuse(const PlanKey& key);
  // Plans the algorithm for args and wraps it with the packing rounds; the plan is remembered
  // under *key when given (not for persistent calls, which keep their own, nor for
  // non-blocking ones on device buffers).
  Status plan(const CollArgs& args, const PlanKey* key = nullptr);
  // An empty schedule (e.g. a zero-count reduction): completes at once in every mode.
  void plan_nothing(const PlanKey* key = nullptr);
  // Whether this call's plan goes into the cache.
  bool remembers() const;

  // A call whose buffers may be GPU device memory: `bufs` each at its first byte (contiguous),
  // `red` its reduction (or null), `bytes` its vector's size. True when the call is planned on
  // the device pointers themselves (GPU-native on one node, gpu_hier across nodes; coll/gpu
  // decides, making the workspaces on the first such call: collective), or when that failed
  // with an error that plan() and run() return (WEFT_REQUIRE_FAST_PATH forbids the staging it
  // would take). False: lay the buffers out (staging device memory, with its warning).
  bool device(std::initializer_list<const void*> bufs, const Reduction* red, size_t bytes);

  // Lays out one side of the call; returns the base its blocks' offsets refer to. Inputs are
  // packed before the algorithm runs, outputs unpacked after it. `prepack`: an output piece
  // that also holds this rank's input (in place) and is packed first. `force_pack`: always
  // copy into scratch (in-place alltoall reads its input from there). An error (a device
  // buffer that cannot be staged) is kept for plan() and run() to return.
  char* input(const std::vector<Piece>& pieces, std::vector<Block>* blocks, bool force_pack = false);
  char* output(const std::vector<Piece>& pieces, std::vector<Block>* blocks, int prepack = -1);

  // The layout of each kind of described call (describe.cpp); key: where its plan is kept.
  Status plan_rooted(const Description& d, const PlanKey* key);
  Status plan_allgather(const Description& d, const PlanKey* key);
  Status plan_alltoall(const Description& d, const PlanKey* key);
  Status plan_neighbor(const Description& d);
  Status plan_bcast(const Description& d, const PlanKey* key);
  Status plan_reduce(const Description& d, const PlanKey* key);
  Status plan_vector_reduction(const Description& d, const PlanKey* key);
  Status plan_reduce_scatter(const Description& d);
  // Any call on an intercommunicator (coll/inter): blocks per remote rank, roots as in inter.h.
  Status plan_inter(const Description& d);

  char* lay_out(const std::vector<Piece>& pieces, std::vector<Block>* blocks, bool is_input,
                bool force_pack, int prepack);
  // Whether a GPU device piece may be staged through host memory; keeps the error if not.
  bool staging_allowed(bool contiguous);
  void fail(Status s, std::string message);
  Schedule& outer();  // made on first use: cached and contiguous calls never need it

  CollContext ctx_;
  Mode mode_;
  const char* what_;
  bool device_ = false;  // planned on device pointers: no offload set-up
  Status error_ = Status::ok;  // raised while laying out
  std::string error_message_;
  std::shared_ptr<Schedule> outer_;
  std::vector<std::function<Status()>> pre_, post_;
  std::vector<std::shared_ptr<const void>> kept_;
  std::shared_ptr<const Schedule> planned_;
};

}  // namespace weft::coll
