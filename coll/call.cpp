// The call machinery of call.h: lay-out and packing of user buffers, the plan cache and the
// runs in flight.
#include "call.h"

#include <cstdint>
#include <cstdio>

#include "comm_state.h"
#include "gpu/gpu_coll.h"
#include "inter/inter.h"
#include "hier/hierarchy.h"
#include "offload/offload.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/typemap.h"

namespace weft::coll {

namespace {
constexpr size_t kPlanCache = 8;  // per communicator

size_t piece_bytes(const Piece& p) { return p.count ? type_packed_size(p.type, p.count) : 0; }

// The plan remembered for key, or null. A plan that a run in flight still holds (an earlier
// non-blocking call, e.g. two MPI_Ibarrier at once) shares its scratch memory with that run:
// null, and the caller plans anew.
std::shared_ptr<const Schedule> find_plan(CommState& st, const PlanKey& key) {
  std::vector<CachedPlan>& plans = st.plans;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!(plans[i].key == key)) continue;
    if (plans[i].schedule.use_count() > 1) return nullptr;
    if (i) std::swap(plans[i], plans[0]);
    return plans[0].schedule;
  }
  return nullptr;
}

void remember_plan(CommState& st, const PlanKey& key, std::shared_ptr<const Schedule> schedule) {
  std::vector<CachedPlan>& plans = st.plans;
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].key == key) {  // replaced: the one there is still running
      plans.erase(plans.begin() + ptrdiff_t(i));
      break;
    }
  if (plans.size() >= kPlanCache) plans.pop_back();
  plans.insert(plans.begin(), CachedPlan{key, std::move(schedule), hold_type(key.send_type), hold_type(key.recv_type)});
}
}  // namespace

std::shared_ptr<const void> hold_type(const Datatype* d) {
  if (!d || d->predefined) return nullptr;
  type_retain(d);
  return std::shared_ptr<const void>(d, [](const void* p) { type_release(static_cast<const Datatype*>(p)); });
}

// ------------------------------------------------------------------------------------ Calls

Status Calls::start(const CollContext& ctx, std::shared_ptr<const Schedule> schedule, Request* r,
                    const uint32_t* reserved) {
  r->complete = false;
  r->status = RequestStatus{};
  if (defer_first_steps_) {
    const uint32_t tags = reserved ? *reserved : reserve_tags(ctx.comm, *schedule);
    handed_off_.push_back(HandedOff{r, ctx, std::move(schedule), tags});
    if (progress_) progress_->arm(poller_);
    return Status::ok;
  }
  std::unique_ptr<ScheduleRun> run = take_run(ctx, std::move(schedule));
  WEFT_TRY(run->start(reserved));
  if (run->test()) {
    r->status.error = run->status();
    r->complete = true;
    recycle(std::move(run));
  } else {
    running_.emplace_back(r, std::move(run));
    if (progress_) progress_->arm(poller_);
  }
  return Status::ok;
}

void Calls::start_handed_off() {
  if (handed_off_.empty() || starting_) return;
  starting_ = true;
  for (HandedOff& h : handed_off_) {
    std::unique_ptr<ScheduleRun> run = take_run(h.ctx, std::move(h.schedule));
    // A run that cannot start (a member known to have failed) completes its request with the
    // error; one that failed part way is dropped, which takes its posted requests back.
    if (Status st = run->start(&h.tags); st != Status::ok) {
      h.request->status.error = st;
      h.request->complete = true;
      continue;
    }
    running_.emplace_back(h.request, std::move(run));
  }
  handed_off_.clear();
  starting_ = false;
}

std::unique_ptr<ScheduleRun> Calls::take_run(const CollContext& ctx, std::shared_ptr<const Schedule> schedule) {
  if (spare_.empty()) return std::make_unique<ScheduleRun>(ctx, std::move(schedule));
  std::unique_ptr<ScheduleRun> run = std::move(spare_.back());
  spare_.pop_back();
  run->reuse(ctx, std::move(schedule));
  return run;
}

void Calls::recycle(std::unique_ptr<ScheduleRun> run) {
  constexpr size_t kSpareRuns = 8;
  if (spare_.size() >= kSpareRuns) return;
  run->drop_schedule();
  spare_.push_back(std::move(run));
}

void Calls::attach(Progress* progress) {
  progress_ = progress;
  poller_ = progress->add_poller(poll, this, false);
}

int Calls::poll(void* ctx) {
  auto* calls = static_cast<Calls*>(ctx);
  calls->start_handed_off();
  auto& running = calls->running_;
  int done = 0;
  for (size_t i = 0; i < running.size();) {
    auto& [r, run] = running[i];
    if (run->test()) {
      r->status.error = run->status();
      r->complete = true;
      calls->recycle(std::move(run));
      running[i] = std::move(running.back());
      running.pop_back();
      ++done;
    } else {
      ++i;
    }
  }
  if (running.empty() && calls->progress_) calls->progress_->disarm(calls->poller_);
  return done;
}

// ------------------------------------------------------------------------------------- Call

Schedule& Call::outer() {
  if (!outer_) outer_ = std::make_shared<Schedule>("call");
  return *outer_;
}

void Call::fail(Status s, std::string message) {
  if (error_ != Status::ok) return;  // the first error is the one reported
  WEFT_INFO(Subsys::coll, "%s", message.c_str());
  error_ = s;
  error_message_ = std::move(message);
}

Status Call::error() const {
  if (error_ != Status::ok) set_error_detail(error_message_);
  return error_;
}

char* Call::input(const std::vector<Piece>& pieces, std::vector<Block>* blocks, bool force_pack) {
  return lay_out(pieces, blocks, true, force_pack, -1);
}

char* Call::output(const std::vector<Piece>& pieces, std::vector<Block>* blocks, int prepack) {
  return lay_out(pieces, blocks, false, false, prepack);
}

char* Call::lay_out(const std::vector<Piece>& pieces, std::vector<Block>* blocks, bool is_input,
                    bool force_pack, int prepack) {
  const size_t n = pieces.size();
  blocks->assign(n, Block{});
  std::vector<ptrdiff_t> offsets(n, 0);
  std::vector<char> contiguous(n, 1), device(n, 0);
  bool in_place = !force_pack;
  for (size_t i = 0; i < n; ++i) {
    if (!pieces[i].count) continue;
    contiguous[i] = type_is_contiguous(pieces[i].type, pieces[i].count, &offsets[i]);
    if (!contiguous[i]) in_place = false;
  }
  // GPU device buffers are staged through host scratch memory, like non-contiguous data. A
  // build without CUDA asks only while the CUDA driver is loaded, and refuses device memory.
  if (memkind_device_possible()) {
    for (size_t i = 0; i < n; ++i) {
      if (!piece_bytes(pieces[i])) continue;
      const MemInfo kind = memkind_query(pieces[i].buf);
      if (kind.kind == MemKind::unsupported_device) {
        // Refused. Laid out as it is (the caller's size checks still see the blocks); plan()
        // and run() return the error, so nothing ever touches the buffer.
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "buffer %p is CUDA device memory, but this weft was built without CUDA support "
                 "(rebuild with a CUDA toolkit)", pieces[i].buf);
        fail(Status::invalid_buffer, msg);
        continue;
      }
      if (host_accessible(kind)) continue;
      if (!staging_allowed(contiguous[i])) return nullptr;
      device[i] = 1;
      in_place = false;
    }
  }
  if (in_place) {  // every piece is one run of bytes: use the buffers as they are
    const char* base = nullptr;
    for (size_t i = 0; i < n; ++i) {
      if (!piece_bytes(pieces[i])) continue;
      const char* at = static_cast<const char*>(pieces[i].buf) + offsets[i];
      if (!base || at < base) base = at;
    }
    for (size_t i = 0; i < n; ++i)
      if (const size_t bytes = piece_bytes(pieces[i]))
        (*blocks)[i] = Block{size_t(static_cast<const char*>(pieces[i].buf) + offsets[i] - base), bytes};
    return const_cast<char*>(base);
  }
  // Packed: the pieces' packed forms back to back in scratch memory.
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t bytes = piece_bytes(pieces[i]);
    (*blocks)[i] = Block{total, bytes};
    total += bytes;
    if (pieces[i].count) keep(hold_type(pieces[i].type));
  }
  char* staging = outer().scratch(total + 1);
  const std::vector<Block> where = *blocks;
  auto pack_piece = [pieces, where, staging, device, offsets](size_t i) {
    if (!where[i].bytes) return Status::ok;
    if (device[i])
      return memkind_copy(staging + where[i].offset, static_cast<const char*>(pieces[i].buf) + offsets[i],
                          where[i].bytes);
    type_pack(pieces[i].type, pieces[i].buf, pieces[i].count, staging + where[i].offset, 0, SIZE_MAX);
    return Status::ok;
  };
  if (is_input) {
    pre_.push_back([n, pack_piece] {
      for (size_t i = 0; i < n; ++i) WEFT_TRY(pack_piece(i));
      return Status::ok;
    });
  } else {
    if (prepack >= 0) pre_.push_back([prepack, pack_piece] { return pack_piece(size_t(prepack)); });
    post_.push_back([pieces, where, staging, device, offsets] {
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (!where[i].bytes) continue;
        void* buf = const_cast<void*>(pieces[i].buf);
        if (device[i])
          WEFT_TRY(memkind_copy(static_cast<char*>(buf) + offsets[i], staging + where[i].offset, where[i].bytes));
        else
          type_unpack(pieces[i].type, staging + where[i].offset, where[i].bytes, buf, pieces[i].count, 0);
      }
      return Status::ok;
    });
  }
  return staging;
}

bool Call::staging_allowed(bool contiguous) {
  if (!contiguous) {
    fail(Status::invalid_type, "non-contiguous datatypes on GPU device buffers are not supported yet");
    return false;
  }
  if (ctx_.require_fast_path) {
    fail(Status::not_supported,
         "a GPU device buffer would be staged through host memory (GPU-native algorithms exist for "
         "Allreduce, Bcast, Reduce, Allgather and Reduce_scatter(_block) on one node only), and "
         "WEFT_REQUIRE_FAST_PATH forbids slower paths");
    return false;
  }
  if (log_first_time("coll-device-staging"))
    WEFT_WARN(Subsys::gpu, "collectives on GPU device buffers are staged through host memory "
              "(cudaMemcpy in and out, host algorithms) except Allreduce, Bcast, Reduce, Allgather "
              "and Reduce_scatter(_block) on one node, which run GPU-native when they can");
  return true;
}

bool Call::device(std::initializer_list<const void*> bufs, const Reduction* red, size_t bytes) {
  std::string why;
  switch (gpu::gate(ctx_, mode_ == Mode::blocking, bufs, red, bytes, &why)) {
    case gpu::Gate::host: return false;
    case gpu::Gate::native: break;
    case gpu::Gate::hier:
      if (log_first_time(std::string("gpu-hier:") + what_ + ctx_.comm.label()))
        WEFT_INFO(Subsys::gpu,
                  "%s on %s with device buffers across nodes: GPU-native stages within each node (%d ranks "
                  "here), host staging between the node leaders",
                  what_, ctx_.comm.label().c_str(), int(hierarchy(ctx_.comm).node.size()));
      break;
    case gpu::Gate::staged:
      if (ctx_.require_fast_path) {
        fail(Status::not_supported, "a GPU device buffer would be staged through host memory (" + why +
                                        "), and WEFT_REQUIRE_FAST_PATH forbids slower paths");
        return true;
      }
      if (log_first_time(std::string("gpu-coll-fallback:") + what_ + why))
        WEFT_INFO(Subsys::gpu, "%s on device buffers staged through host memory: %s", what_, why.c_str());
      return false;
  }
  device_ = true;
  return true;
}

bool Call::reuse(const PlanKey& key) {
  if (mode_ == Mode::persistent) return false;
  planned_ = find_plan(state_of(ctx_), key);
  return planned_ != nullptr;
}

Status Call::plan(const CollArgs& call_args, const PlanKey* key) {
  WEFT_TRY(error());
  CollArgs persistent_args;
  if (mode_ == Mode::persistent) {
    persistent_args = call_args;
    persistent_args.any_start_order = true;
  }
  const CollArgs& args = mode_ == Mode::persistent ? persistent_args : call_args;
  // A persistent allreduce on device memory registers its buffers once, here (collective, as
  // the init is), so every start reads and writes them in place; the plan keeps them registered.
  if (mode_ == Mode::persistent && device_ && args.coll == Collective::allreduce && !ctx_.comm.inter &&
      ctx_.comm.single_node)
    kept_.push_back(gpu::register_for_call(ctx_, {args.send, args.recv}, args.bytes));
  std::shared_ptr<Schedule> inner;
  // The first offloadable call of a communicator spanning nodes sets it up among its leaders.
  if (ctx_.comm.inter) {
    WEFT_TRY(coll::plan_inter(ctx_, args, &inner));
  } else {
    if (!device_) WEFT_TRY(offload::prepare(ctx_, args));
    WEFT_TRY(coll::plan(ctx_, args, &inner));
  }
  if (pre_.empty() && post_.empty()) {
    for (auto& k : kept_) inner->keep(std::move(k));
    planned_ = std::move(inner);
  } else {
    Schedule& o = outer();
    o.set_name(inner->name());
    o.set_algorithm(inner->algorithm());
    if (!pre_.empty()) {
      o.new_round();
      for (auto& f : pre_) o.call(std::move(f));
    }
    o.append(*inner);
    if (!post_.empty()) {
      // The result is complete only once the inner schedule's lanes (hier_pipelined's
      // fragments) have finished too, not when its own rounds have: unpack it after they all have.
      if (!o.lanes().empty()) o.join_lanes();
      o.next_round();
      for (auto& f : post_) o.call(std::move(f));
    }
    for (auto& k : kept_) o.keep(std::move(k));
    planned_ = outer_;
  }
  if (key && remembers()) remember_plan(state_of(ctx_), *key, planned_);
  return Status::ok;
}

void Call::plan_nothing(const PlanKey* key) {
  outer();
  planned_ = outer_;
  if (key && remembers()) remember_plan(state_of(ctx_), *key, planned_);
}

bool Call::remembers() const {
  // A non-blocking GPU-native run keeps device state (events, staging) of its own: planned anew.
  return mode_ == Mode::blocking || (mode_ == Mode::nonblocking && !device_);
}

Status Call::run() {
  WEFT_TRY(error());
  return coll::run(ctx_, planned_);
}

Status Call::start(Request* r) {
  WEFT_TRY(error());
  return ctx_.calls->start(ctx_, planned_, r);
}

}  // namespace weft::coll
