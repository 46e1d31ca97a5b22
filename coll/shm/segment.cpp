#include "segment.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "coll/algorithm.h"
#include "coll/comm_state.h"
#include "coll/settings.h"
#include "pt2pt/shm.h"
#include "runtime/log.h"
#include "runtime/shm_segment.h"

namespace weft::coll::shm {

namespace {

constexpr uint32_t kReady = 0x77636f6c;  // "wcol": the creator finished laying the segment out
constexpr size_t kLine = 64;
constexpr size_t kPage = 4096;
// Spins on a flag before a wait reports pending: a flag usually turns within a few hundred
// nanoseconds, and going back through the schedule costs more than that.
constexpr int kSpins = 64;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Spinning on a line another core will write: pause between loads, so that many spinners do
// not starve the writer of the line (and a sibling hyperthread of the core).
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

struct Header {
  std::atomic<uint32_t> ready;
  std::atomic<uint32_t> attached;
  uint32_t ranks, slots;
  uint64_t slot_bytes;
};

// Named after the job, the leader's job rank and the context id: every member can name the
// file, so any survivor can remove it.
std::string file_name(const ShmJob& job, const char* kind, int leader, uint32_t context) {
  return job.name(kind, std::to_string(leader) + "-" + std::to_string(context));
}

constexpr ShmUse kCollUse{Subsys::coll, "collectives", "lower WEFT_COLL_SHM_SEGMENT"};

Status fail(const std::string& msg) {
  WEFT_ERROR(Subsys::coll, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::transport;
}

}  // namespace

const Geometry& geometry_of(const CollContext& ctx) {
  static const Geometry defaults;
  return ctx.settings ? ctx.settings->shm : defaults;
}

size_t slot_bytes(const Geometry& g, int ranks) {
  if (g.slot_bytes) return round_up(g.slot_bytes, kLine);
  constexpr size_t kMost = 64 * 1024, kLeast = 4 * 1024;
  const size_t share = g.segment_bytes / (size_t(std::max(ranks, 1)) * g.slots);
  return std::clamp(share, kLeast, kMost) / kLine * kLine;
}

struct Segment::Line {
  std::atomic<uint64_t> op;   // the last operation published through this line
  uint64_t unused;            // keeps the data 16-byte aligned (long double, pair types)
  alignas(16) char inline_data[kInlineBytes];
};


Segment::Segment(const Comm& c, const Geometry& g)
    : comm_(c), geometry_(g), rank_(c.rank), size_(c.size) {
  static_assert(sizeof(Line) == kLine);
  geometry_.slot_bytes = shm::slot_bytes(g, size_);
  const size_t p = size_t(size_), k = geometry_.slots;
  flags_at_ = kPage;
  done_at_ = flags_at_ + p * k * kLine;
  slots_at_ = round_up(done_at_ + p * 2 * kLine, kPage);  // done lines 128 bytes apart
  bytes_ = slots_at_ + p * k * round_up(geometry_.slot_bytes, kLine);
}

Segment::~Segment() {
  if (base_ && !unlinked_) note_unlinked();
  if (!file_ || unlinked_) return;
  // Not every rank has mapped the file. With a member failed, some never will: whoever goes
  // first removes the name. Otherwise a late rank still needs it (this one may have finished a
  // bcast before the others started it): it stays tracked, and finalize removes it.
  if (boot_->failures_seen()) file_->unlink();
}

void Segment::note_unlinked() {
  auto* h = reinterpret_cast<Header*>(base_);
  if (h->attached.load(std::memory_order_acquire) < uint32_t(size_)) return;
  unlinked_ = true;
  file_->forget();
}

Segment::Line& Segment::flag(int r, uint64_t op) const {
  return *reinterpret_cast<Line*>(base_ + flags_at_ + (size_t(r) * geometry_.slots + op % geometry_.slots) * kLine);
}

std::atomic<uint64_t>& Segment::done_of(int r) const {
  return *reinterpret_cast<std::atomic<uint64_t>*>(base_ + done_at_ + size_t(r) * 2 * kLine);
}

char* Segment::data(int r, uint64_t op, size_t bytes) {
  if (bytes <= kInlineBytes) return flag(r, op).inline_data;
  return base_ + slots_at_ + (size_t(r) * geometry_.slots + op % geometry_.slots) * round_up(geometry_.slot_bytes, kLine);
}

Status Segment::attach(const CollContext& ctx) {
  if (!file_) {
    boot_ = &ctx.transport->boot();
    if (!job_) job_ = std::make_unique<BootstrapShmJob>(*boot_);
    file_ = std::make_unique<ShmSegment>(*job_, file_name(*job_, "coll", comm_.world_rank(0), comm_.context_id),
                                         rank_ == 0, kCollUse);
  }
  auto* h = reinterpret_cast<Header*>(base_);
  if (!base_) {
    if (rank_ == 0) {
      if (Status made = file_->create(bytes_, true); made != Status::ok) {
        file_.reset();  // spent: a later call names it again
        return made;
      }
      base_ = file_->data();
      h = reinterpret_cast<Header*>(base_);
      h->ranks = uint32_t(size_);
      h->slots = geometry_.slots;
      h->slot_bytes = geometry_.slot_bytes;
      h->attached.store(1, std::memory_order_relaxed);
      h->ready.store(kReady, std::memory_order_release);
      attached_ = true;
      WEFT_INFO(Subsys::coll, "%s: shared-memory collective segment %s (%zu bytes)", comm_.label().c_str(),
                 file_->name().c_str(), bytes_);
      return Status::ok;
    }
    Status s = file_->attach(bytes_, true);
    if (s != Status::ok) return s;
    base_ = file_->data();
    h = reinterpret_cast<Header*>(base_);
  }
  if (h->ready.load(std::memory_order_acquire) != kReady) return Status::pending;
  if (h->ranks != uint32_t(size_) || h->slots != geometry_.slots || h->slot_bytes != geometry_.slot_bytes) {
    file_.reset();  // unmapped; the name stays tracked
    base_ = nullptr;
    return fail("the ranks of " + comm_.label() + " disagree on the shared-memory collective geometry "
                "(set WEFT_COLL_SHM_SLOT, WEFT_COLL_SHM_SEGMENT and WEFT_COLL_SHM_SLOTS alike on every rank)");
  }
  attached_ = true;
  // The last rank to map the file removes its name: nobody needs it any more, and a job that
  // dies later leaves nothing in /dev/shm.
  if (h->attached.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(size_)) {
    file_->unlink();
    unlinked_ = true;
  }
  return Status::ok;
}

Status Segment::check_peers(const CollContext& ctx, int waiting_for) {
  Bootstrap& boot = ctx.transport->boot();
  boot.poll_local_liveness();
  if (boot.failures_seen() == 0) [[likely]] return Status::pending;
  int dead = -1;
  if (waiting_for >= 0 && boot.peer_failed(comm_.world_rank(waiting_for))) dead = waiting_for;
  for (int r = 0; r < size_ && dead < 0; ++r)
    if (boot.peer_failed(comm_.world_rank(r))) dead = r;
  if (dead < 0) return Status::pending;
  std::string msg = "rank " + std::to_string(dead) + " of " + comm_.label() + " (job rank " +
                    std::to_string(comm_.world_rank(dead)) +
                    ") terminated during a shared-memory collective";
  WEFT_WARN(Subsys::coll, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::peer_failed;
}

Status Segment::begin(const CollContext& ctx, uint64_t op, bool publishes) {
  if (!attached_) {
    Status s = attach(ctx);
    if (s == Status::pending) return check_peers(ctx, 0);
    WEFT_TRY(s);
  }
  // Operations finish in order here; an earlier one still running holds this one back.
  if (finished_ + 1 != op) return check_peers(ctx, -1);
  if (!publishes || op <= geometry_.slots) return Status::ok;
  const uint64_t needed = op - geometry_.slots;  // the operation that used op's slot last
  if (all_done_ >= needed) return Status::ok;
  uint64_t least = UINT64_MAX;
  for (int r = 0; r < size_; ++r) {
    const uint64_t d = done_of(r).load(std::memory_order_acquire);
    if (d < needed) return check_peers(ctx, r);
    least = std::min(least, d);
  }
  all_done_ = least;
  return Status::ok;
}

void Segment::publish(uint64_t op) { flag(rank_, op).op.store(op, std::memory_order_release); }

Status Segment::wait_for(const CollContext& ctx, int r, uint64_t op) {
  std::atomic<uint64_t>& f = flag(r, op).op;
  for (int i = 0; i < kSpins; ++i) {
    if (f.load(std::memory_order_acquire) >= op) return Status::ok;
    relax();
  }
  return check_peers(ctx, r);
}

Status Segment::wait_for_all(const CollContext& ctx, uint64_t op, int* next) {
  // Each rank starts with its right neighbour: the spinners spread over the lines instead of
  // all waiting on rank 0's.
  for (; *next < size_; ++*next) {
    Status s = wait_for(ctx, (rank_ + 1 + *next) % size_, op);
    if (s != Status::ok) return s;
  }
  // Each rank publishes op only after finishing op - 1, so all of them are done with it.
  all_done_ = std::max(all_done_, op - 1);
  return Status::ok;
}

Status Segment::finish(const CollContext&, uint64_t op) {
  if (!unlinked_) [[unlikely]] note_unlinked();  // until then, finalize would remove the name
  done_of(rank_).store(op, std::memory_order_release);
  finished_ = op;
  return Status::ok;
}

std::shared_ptr<Segment> segment_of(const CollContext& ctx) {
  CommState& st = state_of(ctx);
  if (!st.shm) st.shm = std::make_shared<Segment>(ctx.comm, geometry_of(ctx));
  return st.shm;
}

namespace {
thread_local std::shared_ptr<JointClaim::Numbers> t_joint;
}  // namespace

JointClaim::JointClaim() : numbers_(std::make_shared<Numbers>()), previous_(t_joint) { t_joint = numbers_; }
JointClaim::~JointClaim() { t_joint = previous_; }

void add_operations(Schedule& s, const CollContext& ctx, std::vector<Operation> ops) {
  struct State {
    enum Phase : uint8_t { idle, joining, collecting, finishing } phase = idle;
    uint64_t op = 0;
    int next = 0;
    Status error = Status::ok;  // a failed read: reported once the operation is finished
  };
  auto seg = segment_of(ctx);
  // The numbers: this group's own, or a share of a joint claim (the group at base 0 claims).
  auto numbers = t_joint ? t_joint : std::make_shared<JointClaim::Numbers>();
  const uint64_t count = ops.size(), base = numbers->total;
  numbers->total += count;
  // Claimed when the run starts, in the order the calls are made on every rank: a non-blocking
  // call's first step may run later, on the progress thread, after a later call's.
  if (base == 0) s.at_start([seg, numbers] { numbers->first = seg->claim(numbers->total); });
  for (uint64_t index = 0; index < count; ++index) {
    auto state = std::make_shared<State>();
    const PollWork work = ops[index].work;
    s.poll([seg, state, numbers, base, index, o = std::move(ops[index])](const CollContext& ctx) -> Status {
      Segment& g = *seg;
      State& st = *state;
      Status result = Status::ok;
      switch (st.phase) {
        case State::idle:
          st.op = numbers->first + base + index;
          st.phase = State::joining;
          [[fallthrough]];
        case State::joining:
          result = g.begin(ctx, st.op, o.publishes);
          if (result != Status::ok) break;
          if (o.publishes) {
            // The others wait for the flag even when writing failed; the error comes at the end.
            if (o.write) st.error = o.write(g, st.op);
            g.publish(st.op);
          }
          st.phase = State::collecting;
          st.next = 0;
          [[fallthrough]];
        case State::collecting:
          if (o.waits) {
            result = o.wait_rank >= 0 ? g.wait_for(ctx, o.wait_rank, st.op) : g.wait_for_all(ctx, st.op, &st.next);
            if (result != Status::ok) break;
          }
          if (o.read) {
            Status r = o.read(g, st.op);
            if (st.error == Status::ok) st.error = r;
          }
          st.phase = State::finishing;
          [[fallthrough]];
        case State::finishing:
          result = g.finish(ctx, st.op);
          if (result == Status::ok) {
            st.phase = State::idle;
            result = std::exchange(st.error, Status::ok);
          }
          break;
      }
      if (result != Status::ok && result != Status::pending) st.phase = State::idle;
      return result;
    }, work);
  }
}

bool model_known(const CostModel& m) { return m.shm_alpha_us > 0; }

bool fits_one_slot(const CollArgs& a, const CollContext& ctx) {
  return ctx.comm.single_node && ctx.comm.size > 1 && !a.any_start_order &&
         a.bytes <= slot_bytes(geometry_of(ctx), ctx.comm.size);
}

double one_shot_us(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  if (!model_known(m)) return std::numeric_limits<double>::infinity();
  const double n = double(a.bytes);
  return flag_exchange_us(m, ctx.comm.size) + n * m.shm_beta_us_per_byte +
         ctx.comm.size * n * (m.shm_beta_us_per_byte + m.gamma_us_per_byte);
}

Status reduce_published(Segment& g, uint64_t op, size_t bytes, size_t count, const Reduction& red, void* dst) {
  memcpy(dst, g.data(g.size() - 1, op, bytes), bytes);
  for (int r = g.size() - 2; r >= 0; --r) WEFT_TRY(red.apply(g.data(r, op, bytes), dst, count));
  return Status::ok;
}

double flag_exchange_us(const CostModel& m, int ranks) {
  return m.shm_alpha_us * double(1 + ceil_log2(ranks));
}

// ------------------------------------------------------------------------------ calibration

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double copy_us_per_byte() {
  // Source and destination half a page apart (mod 4 KiB): two separate vectors would sit a
  // malloc header apart, and that 4K-aliasing stall made copies ten times slower than the
  // segment's own on some machines.
  constexpr size_t kBytes = 64 * 1024;
  std::vector<char> space(2 * kBytes + 2 * kPage, 1);
  char* from = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(space.data()), kPage));
  char* to = from + kBytes + kPage / 2;
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const double t0 = now_us();
    memcpy(to, from, kBytes);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    best = std::min(best, now_us() - t0);
  }
  return best / double(kBytes);
}

}  // namespace

Status measure(Transport& t, const Comm& world, double* alpha_us, double* beta_us_per_byte) {
  *alpha_us = 0;
  *beta_us_per_byte = copy_us_per_byte();
  // Rank 0 creates the file, then tells rank 1 (every rank runs the schedule to keep the
  // collective sequence in step).
  const int me = world.rank;
  constexpr size_t kBytes = kPage;
  BootstrapShmJob job(t.boot());
  std::unique_ptr<ShmSegment> file;
  if (me <= 1) file = std::make_unique<ShmSegment>(job, file_name(job, "cal", world.world_rank(0), world.context_id),
                                                    me == 0, kCollUse);
  if (me == 0) WEFT_TRY(file->create(kBytes, true));
  auto s = std::make_shared<Schedule>("calibration");
  char token = 0;
  if (me == 0) s->send(1, &token, 1);
  else if (me == 1) s->recv(0, &token, 1);
  CostModel unused;
  CollContext ctx{&t, world, unused};
  Status st = run(ctx, s);
  if (st == Status::ok && me == 1) st = file->attach(kBytes, true);
  if (st == Status::pending) st = fail("the calibration file " + file->name() + " did not appear");
  if (st != Status::ok || me > 1) {
    if (me == 0) file->unlink();
    if (me == 1) file->forget();
    return st;
  }
  char* base = file->data();
  auto* ping = reinterpret_cast<std::atomic<uint64_t>*>(base);
  auto* pong = reinterpret_cast<std::atomic<uint64_t>*>(base + 2 * kLine);
  const bool yield = t.progress_engine().yields_at_once();
  Bootstrap& boot = t.boot();
  const int partner = world.world_rank(1 - me);
  bool partner_died = false;
  auto await = [&](std::atomic<uint64_t>* f, uint64_t v) {
    for (uint32_t spins = 0; f->load(std::memory_order_acquire) != v && !partner_died; ++spins) {
      if (yield) sched_yield();
      if ((spins & 1023) == 1023) {
        boot.poll_local_liveness();
        partner_died = boot.peer_failed(partner);
      }
    }
  };
  constexpr int kTrips = 200, kBatches = 4;
  double best = 1e30;
  uint64_t n = 0;
  for (int b = 0; b <= kBatches; ++b) {  // batch 0 warms up
    const double t0 = now_us();
    for (int i = 0; i < kTrips; ++i) {
      ++n;
      if (me == 0) {
        ping->store(n, std::memory_order_release);
        await(pong, n);
      } else {
        await(ping, n);
        pong->store(n, std::memory_order_release);
      }
    }
    if (b > 0) best = std::min(best, (now_us() - t0) / kTrips);
    if (b == 0 && me == 0) file->unlink();  // rank 1 has it mapped: it answered
  }
  if (partner_died) {
    file->unlink();  // rank 0 may have died before it removed the name
    std::string msg = Transport::failure_detail(&world, partner) + " during the shared-memory calibration";
    WEFT_WARN(Subsys::coll, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::peer_failed;
  }
  file->forget();
  *alpha_us = best / 2;
  return Status::ok;
}

}  // namespace weft::coll::shm
