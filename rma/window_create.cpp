// Making an MPI window over its communicator and freeing it. Every rank registers its memory
// with a transport Window, the ranks agree that every rank could, and they exchange their
// records (address, size, displacement unit, keys). Shared windows, and allocated windows on
// one node, get their memory here: one segment every rank of the node maps, so that accesses
// are loads, stores and CPU atomics. The agreements are allreduces on the window's own
// communicator, as the runtime's other agreements are.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "coll/offload/offload.h"
#include "coll/schedule.h"
#include "mpi_window.h"
#include "pmix/bootstrap.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/memkind.h"

namespace weft::rma {

namespace {

// Parts of a window allocated in one node segment start on their own cache lines.
constexpr size_t kSegmentPartAlign = 64;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The bitwise or of every rank's `words`: where each word has one writer and zeros elsewhere,
// every rank gets what each wrote (a gather, or a broadcast from one rank).
Status or_all(const coll::CollContext& ctx, void* words, size_t bytes) {
  const coll::Reduction bor{ReduceOp::bor, BasicType::u64, sizeof(uint64_t)};
  return coll::allreduce(ctx, words, words, bytes / 8, bor);
}

Status max_all(const coll::CollContext& ctx, int64_t* values, size_t n) {
  const coll::Reduction max{ReduceOp::max, BasicType::i64, sizeof(int64_t)};
  return coll::allreduce(ctx, values, values, n, max);
}

// Whether window memory [base, size) is CUDA device memory; it must be one kind from its first
// byte to its last.
Outcome memory_on_device(void* base, size_t size, bool* device) {
  *device = false;
  if (size == 0 || !base || !memkind_device_possible()) return Status::ok;
  const MemKind first = memkind_query(base).kind, last = memkind_query(static_cast<char*>(base) + size - 1).kind;
  if (first == MemKind::unsupported_device || last == MemKind::unsupported_device) return unusable_device_memory(base);
  if ((first == MemKind::cuda_device) != (last == MemKind::cuda_device))
    return refuse(Status::not_supported,
                  "window memory %p + %zu bytes is partly GPU device memory and partly host memory; a window must be "
                  "of one kind",
                  base, size);
  *device = first == MemKind::cuda_device;
  return Status::ok;
}

// The first rank of c that runs on another node than this rank (virtual nodes of
// WEFT_FAKE_NODES count), or -1 when every rank is on this rank's node.
int off_node_rank(const Comm& c, const Bootstrap& boot) {
  for (int q = 0; q < c.size; ++q) {
    const bool local = c.nodes.size() == size_t(c.size) ? c.nodes[size_t(q)] == c.nodes[size_t(c.rank)]
                                                        : boot.is_local(c.world_rank(q));
    if (!local) return q;
  }
  return -1;
}

}  // namespace

Outcome refuse(Outcome kind, const char* fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  set_error_detail(detail);
  return kind;
}

Outcome unusable_device_memory(const void* buf) {
  return refuse(Status::invalid_buffer,
                "buffer %p is CUDA device memory, but this weft was built without CUDA support (rebuild with a CUDA "
                "toolkit)",
                buf);
}

Outcome MpiWindow::create(const coll::CollContext& ctx, Flavor flavor, void* base, size_t size, int disp_unit,
                          std::unique_ptr<MpiWindow>* out) {
  // Every rank sees the same node ids, so every rank fails here alike (no rank is left waiting).
  if (const int q = off_node_rank(ctx.comm, ctx.transport->boot()); flavor == Flavor::shared && q >= 0)
    return refuse(Breach::shared,
                  "rank %d of the communicator runs on another node: a shared window needs a node-local "
                  "communicator (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED)",
                  q);
  std::unique_ptr<MpiWindow> w(new MpiWindow(ctx, flavor));
  if (Outcome o = w->build(base, size, disp_unit); !o.ok()) return o;
  *out = std::move(w);
  return Status::ok;
}

MpiWindow::~MpiWindow() {
  window_.reset();  // remote keys, then registrations, before the memory goes
  segment_.reset();
  if (owns_memory_) free(base_);
}

// Shared windows: the node ranks' parts in one segment, in rank order, each part starting at
// a multiple of `align` (1 for MPI_Win_allocate_shared: contiguous, MPI's default). Rank 0
// makes the segment, the others map it by name, and the name goes once every rank has mapped
// it. (*offsets)[q]: where rank q's part starts; one more entry, the end.
Outcome MpiWindow::map_node_segment(size_t bytes, size_t align, std::vector<size_t>* offsets) {
  const Comm& c = ctx_.comm;
  Bootstrap& boot = ctx_.transport->boot();
  std::vector<uint64_t> sizes(size_t(c.size), 0);
  sizes[size_t(c.rank)] = bytes;
  WEFT_TRY(or_all(ctx_, sizes.data(), sizes.size() * 8));
  offsets->assign(size_t(c.size) + 1, 0);
  for (size_t q = 0; q < sizes.size(); ++q) (*offsets)[q + 1] = round_up((*offsets)[q] + sizes[q], align);
  const size_t total = offsets->back();
  char name[256] = {};  // a name carries the job id (Bootstrap::shm_name)
  Status s = Status::ok;
  if (c.rank == 0 && (s = SharedSegment::create(boot, total, &segment_)) == Status::ok)
    snprintf(name, sizeof name, "%s", segment_->name().c_str());
  WEFT_TRY(or_all(ctx_, name, sizeof name));
  if (!name[0])
    return c.rank == 0 ? Outcome(s) : refuse(Status::no_memory, "rank 0 could not make the shared window's memory");
  if (c.rank != 0) s = SharedSegment::open(boot, name, total, &segment_);
  int64_t bad = s != Status::ok;
  const Status agreed = max_all(ctx_, &bad, 1);
  if (segment_) segment_->unlink();  // every rank has tried to map it
  WEFT_TRY(agreed);
  if (bad)
    return s != Status::ok ? Outcome(s)
                           : refuse(Status::no_memory, "another rank could not map the shared window's memory");
  base_ = segment_->data() + (*offsets)[size_t(c.rank)];
  return Status::ok;
}

Outcome MpiWindow::build(void* base, size_t size, int disp_unit) {
  const Comm& c = ctx_.comm;
  Bootstrap& boot = ctx_.transport->boot();
  // An allocated window on one node is a segment every rank maps: puts and gets become memcpy,
  // atomics the CPU's (WEFT_RMA_SEGMENT=0 keeps it private and reached through UCX).
  const bool one_node = setting_bool("WEFT_RMA_SEGMENT") && off_node_rank(c, boot) < 0;
  const bool in_segment = flavor_ == Flavor::shared || (flavor_ == Flavor::allocate && one_node);
  // Created and dynamic windows on one node keep the user's memory (reached by cross-memory
  // attach or UCX) but put the control blocks in a segment every rank maps, so that locks, the
  // accumulate mutex, the counters and the directory of attached regions are the CPU's atomics
  // and loads, with no round trip that needs the target's progress.
  const bool control_only = (flavor_ == Flavor::create || flavor_ == Flavor::dynamic) && one_node;
  base_ = base;
  Status allocated = Status::ok;  // an allocation failure is agreed on with the registrations
  if (flavor_ == Flavor::allocate && !in_segment && size > 0) {
    base_ = calloc(1, size);
    owns_memory_ = base_ != nullptr;
    if (!base_) allocated = refuse(Status::no_memory, "cannot allocate %zu bytes", size).status;
  }
  window_ = std::make_unique<Window>(*ctx_.transport, c.world_ranks, c.rank, flavor_);
  window_->use_context(c.pt2pt_context());  // the window's own communicator: nothing else uses it
  // An allocated window in a segment keeps each rank's control block at the start of its part,
  // where every rank maps it (MPI_Win_allocate_shared's parts must be contiguous: not there).
  const bool control_in_segment = (in_segment && flavor_ == Flavor::allocate) || control_only;
  const size_t control = control_in_segment ? round_up(window_->control_bytes(), kSegmentPartAlign) : 0;
  // Their accumulates go to mailboxes next to the control blocks (mailbox.cpp).
  const size_t mail = control_only && setting_bool("WEFT_RMA_MAILBOX")
                          ? round_up(mailbox::area_bytes(size_t(c.size)), kSegmentPartAlign)
                          : 0;
  std::vector<size_t> offsets;
  if (in_segment || control_only) {
    const size_t part = control + mail + (control_only ? 0 : size);
    if (Outcome o = map_node_segment(part, flavor_ == Flavor::shared ? 1 : kSegmentPartAlign, &offsets); !o.ok())
      return o;
    if (control_in_segment) {
      char* own_part = static_cast<char*>(base_);
      window_->place_control(reinterpret_cast<uint64_t*>(own_part));
      if (mail) window_->place_mailboxes(own_part + control);
      base_ = control_only ? base : own_part + control;
    }
  }
  bool device = false;
  Outcome mine = allocated;
  if (mine.ok()) mine = memory_on_device(base_, size, &device);
  if (mine.ok()) mine = window_->register_memory(base_, size, disp_unit, device);
  // Every rank learns whether every rank registered, and the largest record, before any
  // exchange of keys. Records are whole words, for the exchange.
  int64_t agreed[2] = {mine.ok() ? 0 : 1, int64_t(window_->key_space())};
  WEFT_TRY(max_all(ctx_, agreed, 2));
  if (!mine.ok()) return mine;
  if (agreed[0] != 0) return refuse(Breach::win, "another rank could not register its window memory");
  const size_t record_bytes = round_up(sizeof(PeerHeader) + size_t(agreed[1]), 8);
  std::vector<unsigned char> records(record_bytes * size_t(c.size), 0);
  const std::vector<unsigned char> own = window_->record(record_bytes - sizeof(PeerHeader));
  memcpy(records.data() + record_bytes * size_t(c.rank), own.data(), record_bytes);
  WEFT_TRY(or_all(ctx_, records.data(), records.size()));
  WEFT_TRY(window_->connect(records, record_bytes));
  if (segment_)  // every node rank's part is accessed directly, in this process's mapping
    for (int q = 0; q < c.size; ++q) {
      char* part = segment_->data() + offsets[size_t(q)];
      if (!control_only) window_->map_peer(q, part + control);
      if (control_in_segment) window_->map_peer_control(q, reinterpret_cast<uint64_t*>(part));
      if (mail) window_->map_peer_mailboxes(q, part + control);
    }
  access_to_.assign(size_t(c.size), 0);
  if (control_in_segment && !control_only)
    WEFT_INFO(Subsys::rma, "MPI_Win_allocate on %s: node-local, memory in a shared segment, accessed directly",
              c.label().c_str());
  else if (control_only)
    WEFT_INFO(Subsys::rma,
              "%s window on %s: node-local, control blocks in a shared segment, user memory reached by %s, "
              "accumulates %s",
              flavor_ == Flavor::create ? "created" : "dynamic", c.label().c_str(),
              setting_bool("WEFT_RMA_CMA") ? "cross-memory attach where allowed" : "UCX",
              mail ? "applied by the target from mailboxes while it is in MPI" : "read and written by the origin");
  return Status::ok;
}

Status MpiWindow::barrier() {
  coll::CollContext ctx = ctx_;
  if (!barrier_) {
    const coll::CollArgs args{coll::Collective::barrier};
    WEFT_TRY(coll::offload::prepare(ctx, args));
    WEFT_TRY(coll::plan(ctx, args, &barrier_));
  }
  return coll::run(ctx, barrier_);
}

Outcome MpiWindow::close() {
  if (lock_all_) return refuse(Breach::sync, "the window is still locked (MPI_Win_unlock_all first)");
  if (pscw_open())
    return refuse(Breach::sync, "a general active target epoch is open (MPI_Win_complete or MPI_Win_wait first)");
  for (int q = 0; q < size(); ++q)
    if (window_->locked(q) != LockType::none) return refuse(Breach::sync, "rank %d of the window is still locked", q);
  // Every rank's accesses have completed before any rank's memory goes away. Where that
  // cannot be known (a rank failed), the window stays, for release at finalize.
  WEFT_TRY(window_->peer_alive(-1));
  return barrier();
}

void MpiWindow::release(std::vector<void*>* memory) {
  window_.reset();
  segment_.reset();
  if (owns_memory_) memory->push_back(base_);
  owns_memory_ = false;
}

Outcome MpiWindow::shared_query(int rank, size_t* size, int* disp_unit, void** base) const {
  int q = rank;
  if (rank == kNoRank) {  // the lowest rank with memory mapped here
    q = 0;
    while (q + 1 < this->size() && (window_->peer_size(q) == 0 || !window_->mapped(q))) ++q;
  } else if (rank < 0 || rank >= this->size()) {
    return refuse(Status::invalid_rank, "invalid rank %d (argument 'rank')", rank);
  }
  // Created and allocated windows (MPI-4.0): memory this process does not map is size 0 and
  // a null base, as MPI_Alloc_mem of 0 bytes gives; so is a part of 0 bytes.
  char* mapped = window_->peer_size(q) > 0 ? window_->mapped(q) : nullptr;
  *size = mapped ? size_t(window_->peer_size(q)) : 0;
  *disp_unit = window_->peer_disp_unit(q);
  *base = mapped;
  return Status::ok;
}

Outcome MpiWindow::attach(void* base, size_t size) {
  if (size > 0 && memkind_device_possible()) {
    const MemKind k = memkind_query(base).kind;
    if (k == MemKind::unsupported_device) return unusable_device_memory(base);
    if (k == MemKind::cuda_device)
      return refuse(Status::not_supported,
                    "attaching GPU device memory %p to a dynamic window is not supported (MPI_Win_create takes it)",
                    base);
  }
  const Status s = window_->attach(base, size);
  if (s == Status::invalid_arg || s == Status::no_memory) return Breach::attach;  // the detail says why
  return s;
}

Outcome MpiWindow::detach(const void* base) {
  bool found = false;
  WEFT_TRY(window_->detach(base, &found));
  if (!found) return refuse(Breach::attach, "no region of this rank is attached at %p", base);
  return Status::ok;
}

}  // namespace weft::rma
