#include "shm.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime/cma.h"
#include "runtime/cuda_ipc.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/staging.h"
#include "shm_cells.h"
#include "tag.h"

namespace weft {

using namespace shm_cells;

// What the receiver publishes about a ring: the bytes it has consumed (cells handled, so their
// space may be written again).
struct ShmRingControl {
  std::atomic<uint64_t> consumed;
};

namespace {

constexpr const char* kShmKey = "weft.shm";
constexpr uint32_t kMagic = 0x77656674;  // "weft"
constexpr uint32_t kLayoutVersion = 4;  // 3: first words carry the lap; 4: IPC descriptors of 104 bytes
constexpr size_t kHeaderBytes = 64;      // segment header
constexpr size_t kControlBytes = 64;     // before each ring: the receiver's consumed count, a line of its own

// Where the ring of the sender with local index `sender` lies in a segment: its control line
// (the receiver's consumed count), then its cells.
struct RingPlace {
  ShmRingControl* control;
  char* cells;
};
RingPlace ring_place(char* segment_base, size_t sender, size_t ring_bytes) {
  char* at = segment_base + kHeaderBytes + sender * (kControlBytes + ring_bytes);
  return {reinterpret_cast<ShmRingControl*>(at), at + kControlBytes};
}

// Asks for the line of the next cell in exclusive state once this one is published, so that
// the next message's stores find it owned (a store there before the publication would hold the
// publication back behind its own request).
inline void prefetch_for_write(const void* line) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(line)));
#else
  __builtin_prefetch(line, 1, 3);
#endif
}

// A copy of the few bytes a small message carries, without a call into the C library: two
// overlapping loads and stores for 4 to 16 bytes (the usual scalars), memcpy otherwise.
inline void copy_small(void* dst, const void* src, size_t n) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if (n) {
    memcpy(d, s, n);
  }
}

// A mark that could not be recorded (the copies were waited for instead).
void* const kFailedMark = reinterpret_cast<void*>(uintptr_t{1});

Status shm_fail(const std::string& msg, Status kind = Status::transport) {
  WEFT_ERROR(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}

constexpr ShmUse kRingsUse{Subsys::pt2pt, "point-to-point rings", "lower WEFT_SHM_CELLS or WEFT_SHM_CELL_SIZE"};

// What a rank publishes about its inbound segment.
struct Blob {
  char name[192];  // room for the job id shm_name puts in
  uint64_t bytes;
  uint32_t rings, cells, cell_size, pad;
};

}  // namespace


// What a ready-to-send cell carries in its payload. The cell stays in the receiver's ring until
// the copy is done, so it also serves as the meeting point of a split copy: the receiver asks
// the sender to write the second half while it reads the first (two cores copy at once).
struct ReadyToSend {
  uint64_t len;   // message bytes
  uint64_t addr;  // the sender's buffer
  int64_t pid;    // the sender's process, for the cma read
  std::atomic<uint32_t> help;  // HelpState
  int32_t receiver_pid;
  uint64_t part_offset;  // the part the sender is asked to write
  uint64_t part_len;
  uint64_t dest_addr;    // the receiver's buffer (start of the whole message)
  IpcDescriptor ipc;     // kDevice: how the receiver maps the sender's device buffer
};
enum HelpState : uint32_t { kNoHelp = 0, kHelpWanted, kHelping, kHelped, kHelpTakenBack, kHelpFailed };

struct ShmEngine::Segment {
  uint32_t magic, version, rings, cells, cell_size;
  char* base() { return reinterpret_cast<char*>(this); }
};

std::string shm_unavailable_reason() {
  // Yama ptrace_scope 2 or 3 forbids cross-process memory access (CMA) between peers.
  if (FILE* f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r")) {
    int scope = 0;
    if (fscanf(f, "%d", &scope) == 1 && scope >= 2) {
      fclose(f);
      return "kernel.yama.ptrace_scope is " + std::to_string(scope) + ", which forbids cma";
    }
    fclose(f);
  }
  // A seccomp filter (containers) may refuse the system call itself.
  char src[8] = "probe", dst[8] = "";
  iovec l{dst, sizeof(src)}, r{src, sizeof(src)};
  if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != ssize_t(sizeof(src)))
    return std::string("process_vm_readv is not permitted: ") + strerror(errno);
  if (access("/dev/shm", W_OK) != 0) return "/dev/shm is not writable";
  return {};
}

Status ShmEngine::create(Bootstrap& boot, Progress& progress, const ShmOptions& options,
                         std::unique_ptr<ShmEngine>* out) {
  std::unique_ptr<ShmEngine> e(new ShmEngine(boot, progress));
  WEFT_TRY(e->init(options));
  *out = std::move(e);
  return Status::ok;
}

Status ShmEngine::init(const ShmOptions& options) {
  opts_ = options;
  if (opts_.cells < 2 || opts_.cell_size < kCellHeaderBytes + sizeof(ReadyToSend) || opts_.cell_size % 64 != 0)
    return shm_fail("shared-memory ring geometry is invalid (cells >= 2, cell size a multiple of 64 and >= " +
                        std::to_string(kCellHeaderBytes + sizeof(ReadyToSend)) + ")",
                    Status::invalid_arg);
  payload_size_ = opts_.cell_size - kCellHeaderBytes;
  static_assert(sizeof(ReadyToSend) % 8 == 0);
  split_min_ = opts_.split_min ? std::max<size_t>(opts_.split_min, 8192) : SIZE_MAX;
  ring_bytes_ = size_t(opts_.cells) * opts_.cell_size;

  const int n = boot_.size();
  local_index_.assign(size_t(n), -1);
  for (int w : boot_.local_peers()) {
    local_index_[size_t(w)] = int(local_world_.size());
    local_world_.push_back(w);
  }
  peers_.assign(size_t(n), nullptr);
  send_.assign(size_t(n), SendRing{});
  for (int w : local_world_) send_[size_t(w)].lines.assign(ring_bytes_ / kCellAlign, kLineZero);
  recv_.assign(local_world_.size(), RecvRing{});
  pending_.assign(size_t(n), {});
  next_message_.assign(size_t(n), 0);

  // Peers read our memory with process_vm_readv: allow it where Yama restricts ptrace.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);

  const size_t bytes = kHeaderBytes + local_world_.size() * (kControlBytes + ring_bytes_);
  files_.resize(size_t(n));
  auto& file = files_[size_t(boot_.rank())];
  file = std::make_unique<ShmSegment>(job_, job_.unique_name("p2p", boot_.rank()), true, kRingsUse);
  WEFT_TRY(file->create(bytes));
  self_ = reinterpret_cast<Segment*>(file->data());
  self_->magic = kMagic;
  self_->version = kLayoutVersion;
  self_->rings = uint32_t(local_world_.size());
  self_->cells = opts_.cells;
  self_->cell_size = opts_.cell_size;
  // A new segment reads as zeros: every ring empty (first word kNone), nothing consumed.
  std::atomic_thread_fence(std::memory_order_release);
  peers_[size_t(boot_.rank())] = self_;

  Blob blob{};
  snprintf(blob.name, sizeof(blob.name), "%s", file->name().c_str());
  blob.bytes = bytes;
  blob.rings = self_->rings;
  blob.cells = opts_.cells;
  blob.cell_size = opts_.cell_size;
  WEFT_TRY(boot_.put(kShmKey, &blob, sizeof(blob)));
  return Status::ok;
}

ShmEngine::~ShmEngine() {
  if (self_) files_[size_t(boot_.rank())]->unlink();  // if map_all_and_unlink never came
}

std::string ShmEngine::describe() const {
  return "weft shared memory (eager up to " + std::to_string(payload_size_) +
         " bytes through " + std::to_string(opts_.cells) + "-cell rings, cma single copy above)";
}

Status ShmEngine::map_peer(int dest, Segment** seg) {
  if (local_index_[size_t(dest)] < 0)
    return shm_fail("rank " + std::to_string(dest) + " is not on this node", Status::internal);
  std::vector<char> raw;
  WEFT_TRY(boot_.get(dest, kShmKey, &raw));
  if (raw.size() != sizeof(Blob)) return shm_fail("malformed shared-memory address of rank " + std::to_string(dest));
  Blob blob;
  memcpy(&blob, raw.data(), sizeof(blob));
  blob.name[sizeof(blob.name) - 1] = '\0';
  if (blob.cells != opts_.cells || blob.cell_size != opts_.cell_size ||
      blob.rings != local_world_.size())
    return shm_fail("rank " + std::to_string(dest) +
                    " uses a different shared-memory geometry (WEFT_SHM_* must match on every rank)",
                    Status::invalid_arg);
  // Tracked until its owner unlinks it, after the barrier in map_all_and_unlink.
  auto file = std::make_unique<ShmSegment>(job_, blob.name, false, kRingsUse);
  WEFT_TRY(file->attach(blob.bytes));
  auto* s = reinterpret_cast<Segment*>(file->data());
  if (s->magic != kMagic || s->version != kLayoutVersion)
    return shm_fail("rank " + std::to_string(dest) + "'s shared segment has an unknown layout");
  files_[size_t(dest)] = std::move(file);
  peers_[size_t(dest)] = s;
  *seg = s;
  WEFT_INFO(Subsys::pt2pt, "peer %d: transports weft-shm (segment %s mapped)", dest, blob.name);
  return Status::ok;
}

// The ring this rank writes in dest's segment, mapped on first use.
Status ShmEngine::open_ring(int dest, SendRing* s) {
  Segment* seg = peers_[size_t(dest)];
  if (!seg) WEFT_TRY(map_peer(dest, &seg));
  const auto [control, cells] = ring_place(seg->base(), size_t(local_index_[size_t(boot_.rank())]), ring_bytes_);
  s->control = control;
  s->cells = cells;
  return Status::ok;
}

// Room for a cell of `bytes` in an open ring: the cell, after a wrap word where it would not fit
// before the end, or null while the ring is full. The sender reads the receiver's consumed
// count only when its last reading leaves too little room, so a stream of small messages costs
// it stores alone. The line past the cell stays free, for the sender may clear its word.
inline ShmEngine::Cell* ShmEngine::claim_cell(int dest, SendRing& s, size_t bytes) {
  const size_t skip = s.offset + bytes > ring_bytes_ ? ring_bytes_ - s.offset : 0;
  const uint64_t end = s.tail + skip + bytes + kCellAlign;
  if (end > s.consumed + ring_bytes_) {
    s.consumed = s.control->consumed.load(std::memory_order_acquire);
    if (end > s.consumed + ring_bytes_) return nullptr;
  }
  if (!outstanding_.empty()) forget_overwritten(dest, end);
  if (skip) {
    clear_for_lap(s, s.cells, 0, s.lap ^ 1);
    reinterpret_cast<std::atomic<uint32_t>*>(s.cells + s.offset)->store(wrap_word(s.lap), std::memory_order_release);
    s.lines[s.offset / kCellAlign] = uint8_t(kLineFirstWord + s.lap);
    s.tail += skip;
    s.offset = 0;
    s.lap ^= 1;
  }
  return reinterpret_cast<Cell*>(s.cells + s.offset);
}

// Makes the claimed cell c (header and payload written) visible to the receiver with one
// release store, and moves the ring on.
inline void ShmEngine::publish_cell(SendRing& s, Cell* c, size_t bytes) {
  const size_t next = s.offset + bytes == ring_bytes_ ? 0 : s.offset + bytes;
  const uint8_t next_lap = next == 0 ? s.lap ^ 1 : s.lap;
  clear_for_lap(s, s.cells, next, next_lap);
  c->word.store(cell_ready_word(s.lap), std::memory_order_release);
#ifndef WEFT_SHM_NO_PREFETCHW
  prefetch_for_write(s.cells + next);
#endif
  const size_t first = s.offset / kCellAlign;
  s.lines[first] = uint8_t(kLineFirstWord + s.lap);
  for (size_t line = first + 1; line < first + bytes / kCellAlign; ++line) s.lines[line] = kLinePayload;
  s.tail += bytes;
  s.offset = next;
  s.lap = next_lap;
}

// Writes one cell to dest's ring if there is room; false when there is not (yet).
bool ShmEngine::try_place(int dest, const Pending& p, Status* st) {
  const uint32_t kind = p.kind;
  const IpcDescriptor* ipc = p.flags & kDevice ? &p.ipc : nullptr;
  SendRing& s = send_[size_t(dest)];
  if (!s.cells) [[unlikely]] {
    *st = open_ring(dest, &s);
    if (*st != Status::ok) return true;
  }
  const size_t payload = kind == kReadyToSend ? sizeof(ReadyToSend) : kind == kEager ? p.len : 0;
  const size_t bytes = cell_bytes(payload);
  Cell* c = claim_cell(dest, s, bytes);
  if (!c) return false;
  c->kind = uint16_t(kind);
  c->flags = uint16_t(p.flags);
  c->message = p.message;
  c->tag = p.tag;
  c->cookie = p.cookie;
  c->len = uint32_t(payload);
  if (kind == kReadyToSend) {
    auto* rts = reinterpret_cast<ReadyToSend*>(c->payload());
    rts->len = p.len;
    rts->addr = reinterpret_cast<uint64_t>(p.buf);
    rts->pid = int64_t(getpid());
    rts->help.store(kNoHelp, std::memory_order_relaxed);
    if (ipc) rts->ipc = *ipc;
    if (p.len >= split_min_ && !ipc)
      outstanding_.push_back(Outstanding{c, p.cookie, static_cast<const char*>(p.buf), dest, s.tail});
  } else if (payload) {
    memcpy(c->payload(), p.buf, payload);
  }
  publish_cell(s, c, bytes);
  *st = Status::ok;
  return true;
}

// An eager cell (len at most payload_size_) placed at once when nothing queues before it in
// an open ring with room; false (nothing written) otherwise.
inline bool ShmEngine::place_eager_now(const void* buf, size_t len, int dest, uint64_t tag, uint32_t message) {
  SendRing& s = send_[size_t(dest)];
  if (!s.cells || !pending_[size_t(dest)].empty()) [[unlikely]] return false;
  const size_t bytes = cell_bytes(len);
  Cell* c = claim_cell(dest, s, bytes);
  if (!c) [[unlikely]] return false;
  c->kind = uint16_t(kEager);
  c->flags = 0;
  c->message = message;
  c->tag = tag;
  c->cookie = 0;
  c->len = uint32_t(len);
  copy_small(c->payload(), buf, len);
  publish_cell(s, c, bytes);
  return true;
}

void ShmEngine::clear_for_lap(SendRing& s, char* ring, size_t offset, uint8_t lap) {
  uint8_t& line = s.lines[offset / kCellAlign];
  if (line == kLineZero || line == kLineFirstWord + (lap ^ 1)) return;
  reinterpret_cast<std::atomic<uint32_t>*>(ring + offset)->store(kNone, std::memory_order_relaxed);
  line = kLineZero;
}

// The ready-to-send cells of dest's ring that the bytes up to `end` overwrite: their receiver
// has consumed them (the copy is done), and their memory is about to hold other cells.
void ShmEngine::forget_overwritten(int dest, uint64_t end) {
  for (size_t i = 0; i < outstanding_.size();) {
    if (outstanding_[i].dest == dest && outstanding_[i].position + ring_bytes_ < end) {
      outstanding_[i] = outstanding_.back();
      outstanding_.pop_back();
    } else {
      ++i;
    }
  }
}

Status ShmEngine::map_all_and_unlink() {
  for (int w : local_world_) {
    if (peers_[size_t(w)]) continue;
    Segment* s = nullptr;
    WEFT_TRY(map_peer(w, &s));
  }
  // Once every local rank has mapped every segment, the names are no longer needed: unlinking
  // now means a crashed job leaves nothing behind in /dev/shm.
  Status st = boot_.barrier();
  if (st != Status::ok) {
    boot_.unlink_tracked_shm();  // a rank died: nobody maps anything any more
    return st;
  }
  for (const auto& file : files_)
    if (file) file == files_[size_t(boot_.rank())] ? file->unlink() : file->forget();
  return Status::ok;
}

void ShmEngine::post(int dest, const Pending& p, Status* st) {
  *st = Status::ok;
  auto& queue = pending_[size_t(dest)];
  if (queue.empty() && try_place(dest, p, st)) {
    if (*st == Status::ok && p.complete_on_place) p.request->complete = true;
    return;
  }
  if (*st != Status::ok) return;
  queue.push_back(p);
  ++pending_count_;
}

int ShmEngine::flush_pending() {
  int placed = 0;
  for (size_t dest = 0; dest < pending_.size() && pending_count_ > 0; ++dest) {
    auto& queue = pending_[dest];
    while (!queue.empty()) {
      const Pending& p = queue.front();
      Status st = Status::ok;
      if (!try_place(int(dest), p, &st)) break;
      if (p.request && (st != Status::ok || p.complete_on_place)) {
        p.request->status.error = st;
        p.request->complete = true;
      }
      queue.pop_front();
      --pending_count_;
      ++placed;
    }
  }
  return placed;
}

Status ShmEngine::isend(const void* buf, size_t bytes, int dest, uint64_t tag, SendMode mode,
                        Request* r) {
  r->peer = dest;
  r->status = RequestStatus{};
  uint32_t& next = next_message_[size_t(dest)];
  if (++next == 0) ++next;  // 0 names no message
  r->message = next;
  // The common small send: complete once its cell is in the ring.
  if (mode == SendMode::standard && bytes <= payload_size_ && !r->device_buffer &&
      place_eager_now(buf, bytes, dest, tag, next)) [[likely]] {
    r->complete = true;
    return Status::ok;
  }
  return isend_queued(buf, bytes, dest, tag, mode, r);
}

// Every other send, out of line so that the small one above sets up no frame for it: device
// memory, ready-to-send, synchronous, or a cell that must wait for room.
[[gnu::noinline]] Status ShmEngine::isend_queued(const void* buf, size_t bytes, int dest, uint64_t tag,
                                                 SendMode mode, Request* r) {
  r->complete = false;
  const uint32_t next = r->message;
  Pending p;  // not value-initialised: the IPC descriptor is set (and read) for device memory only
  p.tag = tag;
  p.buf = buf;
  p.len = bytes;
  p.request = r;
  p.message = next;
  if (r->device_buffer && bytes > 0) {
    // GPU memory: the receiver maps it through CUDA IPC and copies it once, whatever the size.
    Status described = cuda_ipc_describe(buf, &p.ipc);
    if (described == Status::ok) {
      p.kind = kReadyToSend;
      p.flags = kDevice;
      p.cookie = await_answer(r);
      Status st;
      post(dest, p, &st);
      if (st != Status::ok) (void)take_answer(p.cookie);
      return st;
    }
    if (described != Status::not_supported || opts_.require_fast_path) return described;
    // No IPC handle for this memory (e.g. a stream-ordered pool): send a host copy instead.
    if (log_first_time("shm-device-no-ipc"))
      WEFT_WARN(Subsys::gpu, "a device buffer has no CUDA IPC handle (%s); such buffers are copied "
                "to host memory before they are sent", error_detail().c_str());
    r->owned_buffer = staging_buffer(bytes);
    WEFT_TRY(memkind_copy(r->owned_buffer.get(), buf, bytes));
    p.buf = buf = r->owned_buffer.get();
  }
  if (bytes <= payload_size_) {
    p.kind = kEager;
    p.flags = mode == SendMode::synchronous ? uint32_t(kSync) : 0u;
    p.complete_on_place = mode == SendMode::standard;  // sync sends wait for the match ack
  } else {
    p.kind = kReadyToSend;  // completes when the receiver has copied the data (finish cell)
  }
  if (!p.complete_on_place) p.cookie = await_answer(r);
  Status st;
  post(dest, p, &st);
  if (st != Status::ok && !p.complete_on_place) (void)take_answer(p.cookie);
  return st;
}

uint64_t ShmEngine::await_answer(Request* r) {
  uint32_t slot;
  if (free_awaiting_.empty()) {
    slot = uint32_t(awaiting_.size());
    awaiting_.emplace_back();
  } else {
    slot = free_awaiting_.back();
    free_awaiting_.pop_back();
  }
  Awaiting& a = awaiting_[slot];
  a.request = r;
  a.in_use = true;
  return uint64_t(a.generation) << 32 | slot;
}

Request* ShmEngine::take_answer(uint64_t ticket) {
  const uint32_t slot = uint32_t(ticket), generation = uint32_t(ticket >> 32);
  if (slot >= awaiting_.size()) return nullptr;
  Awaiting& a = awaiting_[slot];
  if (!a.in_use || a.generation != generation) return nullptr;
  Request* r = a.request;
  a = Awaiting{nullptr, generation + 1, false};
  free_awaiting_.push_back(slot);
  return r;
}

Status ShmEngine::control(int dest, uint32_t kind, uint64_t cookie) {
  Pending p;  // not value-initialised: no IPC descriptor travels in a control cell
  p.kind = kind;
  p.cookie = cookie;
  Status st;
  post(dest, p, &st);
  return st;
}

bool ShmEngine::try_send_now(const void* buf, size_t bytes, int dest, uint64_t tag) {
  return bytes <= payload_size_ && place_eager_now(buf, bytes, dest, tag, 0);
}

std::unique_ptr<ShmEngine::Unexpected> ShmEngine::take_unexpected(const Unexpected& view) {
  if (spare_unexpected_.empty()) return std::make_unique<Unexpected>(view);
  std::unique_ptr<Unexpected> u = std::move(spare_unexpected_.back());
  spare_unexpected_.pop_back();
  std::vector<char> keep = std::move(u->payload);  // reuse its buffer
  *u = view;
  u->payload = std::move(keep);
  u->payload.clear();
  return u;
}

void ShmEngine::recycle(std::unique_ptr<Unexpected> u) {
  constexpr size_t kSpares = 64;
  if (spare_unexpected_.size() < kSpares) spare_unexpected_.push_back(std::move(u));
}

Status ShmEngine::irecv(void* buf, size_t bytes, int source, uint64_t tag, uint64_t mask,
                        Request* r) {
  r->peer = source;
  r->complete = false;
  r->status = RequestStatus{};
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if ((((*it)->tag ^ tag) & mask) != 0) continue;
    std::unique_ptr<Unexpected> u = std::move(*it);
    if (it == unexpected_.begin()) unexpected_.pop_front();  // the usual case, without erase's shuffle
    else unexpected_.erase(it);
    complete_receive(*u, buf, bytes, r);
    recycle(std::move(u));
    return Status::ok;
  }
  posted_.push_back(PostedRecv{r, buf, bytes, tag, mask});
  return Status::ok;
}

void ShmEngine::complete_receive(const Unexpected& m, void* buf, size_t bytes, Request* r,
                                 Cell* live_cell) {
  RequestStatus& st = r->status;
  st.source = tag::source_of(m.tag);
  st.tag = tag::user_tag_of(m.tag);
  size_t n = m.len <= bytes ? m.len : bytes;
  st.bytes = m.len <= bytes ? m.len : bytes;
  st.error = Status::ok;
  if (m.len > bytes) {
    st.error = Status::truncated;
    set_error_detail("message truncated: " + std::to_string(m.len) + " bytes sent, receive buffer holds " +
                     std::to_string(bytes));
  }
  const bool to_device = r->device_buffer;
  if (m.kind == kEager) {
    if (n) {
      if (!to_device) memcpy(buf, m.payload_ptr, n);
      else if (Status copied = memkind_copy(buf, m.payload_ptr, n); copied != Status::ok) st.error = copied;
    }
    if (m.flags & kSync) (void)control(m.src_world, kSyncAck, m.cookie);
  } else {
    if (n) {
      Status copied;
      if ((m.flags & kDevice) && m.src_world != boot_.rank()) {
        // The copy runs on the GPU's copy engine; progress() completes the receive and sends
        // the finish cell when it is done, so a window of messages is copied back to back.
        copied = cuda_ipc_copy_start(m.src_world, m.ipc, buf, n);
        if (copied == Status::ok) {
          device_copies_.push_back(DeviceCopy{nullptr, r, m.src_world, m.cookie});
          return;
        }
      } else if (m.flags & kDevice) {  // to itself: the buffer is in this process
        copied = memkind_copy(buf, reinterpret_cast<const void*>(m.addr), n);
      } else if (to_device) {  // host data into GPU memory: cma into host memory, then one copy up
        StagingBuffer staged = staging_buffer(n);
        copied = cma_read(m, staged.get(), 0, n);
        if (copied == Status::ok) copied = memkind_copy(buf, staged.get(), n);
      } else {
        copied = live_cell && n >= split_min_ && m.len >= split_min_
                     ? split_copy(m, buf, n, reinterpret_cast<ReadyToSend*>(live_cell->payload()))
                     : cma_read(m, buf, 0, n);
      }
      if (copied != Status::ok) st.error = copied;
    }
    (void)control(m.src_world, kFinish, m.cookie);
  }
  r->complete = true;
}

Status ShmEngine::cma_read(const Unexpected& m, void* buf, size_t offset, size_t n) {
  if (cma_transfer(m.pid, false, static_cast<char*>(buf) + offset, uint64_t(m.addr) + offset, n) == n) return Status::ok;
  const int e = errno;
  std::string msg = "cma read of " + std::to_string(n) + " bytes from rank " +
                    std::to_string(m.src_world) + " failed: " + strerror(e);
  Status kind = e == ESRCH ? Status::peer_failed : Status::transport;
  if (e == EFAULT) {
    // A live sender whose buffer is gone gave the message up: it learned of a failure first.
    boot_.check_liveness_now();
    if (boot_.failures_seen()) {
      msg += " (the sender gave the message up after rank " + std::to_string(boot_.first_failed()) + " failed)";
      kind = Status::peer_failed;
    }
  }
  WEFT_WARN(Subsys::pt2pt, "%s", msg.c_str());
  set_error_detail(msg);
  return kind;
}

// The receiver reads the first half while the sender, asked through the cell, writes the second
// half. If the sender does not take the request before the first half is done (it is busy
// outside MPI, say), the receiver takes it back and copies the rest itself.
Status ShmEngine::split_copy(const Unexpected& m, void* buf, size_t n, ReadyToSend* rts) {
  const size_t half = (n / 2) & ~size_t(4095);
  rts->receiver_pid = int32_t(getpid());
  rts->dest_addr = reinterpret_cast<uint64_t>(buf);
  rts->part_offset = half;
  rts->part_len = n - half;
  rts->help.store(kHelpWanted, std::memory_order_release);
  Status first = cma_read(m, buf, 0, half);
  uint32_t expected = kHelpWanted;
  if (rts->help.compare_exchange_strong(expected, kHelpTakenBack, std::memory_order_acq_rel)) {
    Status rest = cma_read(m, buf, half, n - half);
    return first != Status::ok ? first : rest;
  }
  // The sender is writing: wait for it (it is copying at this moment, unless it died).
  uint32_t state;
  uint32_t spins = 0;
  while ((state = rts->help.load(std::memory_order_acquire)) == kHelping) {
    if ((++spins & 1023) == 0) {
      boot_.poll_local_liveness();
      if (boot_.peer_failed(m.src_world)) {
        set_error_detail("rank " + std::to_string(m.src_world) + " died while copying a message");
        return Status::peer_failed;
      }
    }
  }
  if (state == kHelpFailed) {  // the sender could not write: copy that part here
    Status rest = cma_read(m, buf, half, n - half);
    return first != Status::ok ? first : rest;
  }
  return first;
}

// Sender side: writes the part of a large message its receiver asked for.
int ShmEngine::serve_help_requests() {
  int served = 0;
  for (const Outstanding& o : outstanding_) {
    auto* rts = reinterpret_cast<ReadyToSend*>(o.cell->payload());
    uint32_t expected = kHelpWanted;
    if (rts->help.load(std::memory_order_acquire) != kHelpWanted ||
        !rts->help.compare_exchange_strong(expected, kHelping, std::memory_order_acq_rel))
      continue;
    const size_t put = cma_transfer(rts->receiver_pid, true, const_cast<char*>(o.buf) + rts->part_offset,
                                    rts->dest_addr + rts->part_offset, rts->part_len);
    if (put != rts->part_len) {
      WEFT_WARN(Subsys::pt2pt, "cma write of %zu bytes to a receiver failed (%s); it copies them itself",
                size_t(rts->part_len), strerror(errno));
      rts->help.store(kHelpFailed, std::memory_order_release);
    } else {
      rts->help.store(kHelped, std::memory_order_release);
    }
    ++served;
  }
  return served;
}

// A ring whose sender wrote something no sender of this version writes: it is not read further
// (the sender's messages stop arriving), and the error says whose it is.
void ShmEngine::ring_broken(int sender, const char* what) {
  if (log_first_time("shm-ring-broken:" + std::to_string(sender)))
    WEFT_ERROR(Subsys::pt2pt, "shared-memory ring from rank %d is corrupt (%s); its messages are no longer read",
               sender, what);
}

void ShmEngine::handle(const CellHeader& c, Cell& live, int sender) {
  if (c.kind == kFinish || c.kind == kSyncAck) {
    if (c.kind == kFinish && !outstanding_.empty()) {
      for (size_t i = 0; i < outstanding_.size(); ++i) {
        if (outstanding_[i].cookie != c.cookie) continue;
        outstanding_[i] = outstanding_.back();
        outstanding_.pop_back();
        break;
      }
    }
    if (Request* r = take_answer(c.cookie)) r->complete = true;
    return;
  }
  if (c.kind == kCancel) return drop_message(c, sender);
  if (c.kind == kCancelAnswer) return cancel_answered(c);
  // The usual small message: a standard eager one that the first posted receive takes whole.
  if (c.kind == kEager && c.flags == 0 && !posted_.empty()) {
    const PostedRecv& p = posted_.front();
    if (((c.tag ^ p.tag) & p.mask) == 0 && c.len <= p.bytes && !p.request->device_buffer) [[likely]] {
      Request* r = p.request;
      copy_small(p.buf, live.payload(), c.len);
      r->status.source = tag::source_of(c.tag);
      r->status.tag = tag::user_tag_of(c.tag);
      r->status.bytes = c.len;
      r->status.error = Status::ok;
      r->complete = true;
      posted_.pop_front();
      return;
    }
  }
  // Not value-initialised (a brace list would zero the 64-byte IPC handle with `rep stos` on
  // every message): the descriptor is set, and read, for device memory only.
  Unexpected view;
  view.src_world = sender;
  view.kind = c.kind;
  view.flags = c.flags;
  view.tag = c.tag;
  view.len = c.len;
  view.addr = 0;
  view.cookie = c.cookie;
  view.pid = 0;
  view.message = c.message;
  view.payload_ptr = live.payload();
  if (c.kind == kReadyToSend) {
    if (c.len != sizeof(ReadyToSend)) [[unlikely]] return ring_broken(sender, "a ready-to-send cell of the wrong size");
    const auto* rts = reinterpret_cast<const ReadyToSend*>(live.payload());
    view.len = rts->len;
    view.addr = rts->addr;
    view.pid = int(rts->pid);
    if (c.flags & kDevice) view.ipc = rts->ipc;
  }
  for (auto it = posted_.begin(); it != posted_.end(); ++it) {
    if (((c.tag ^ it->tag) & it->mask) != 0) continue;
    PostedRecv p = *it;
    if (it == posted_.begin()) posted_.pop_front();  // the usual case, without erase's shuffle
    else posted_.erase(it);
    complete_receive(view, p.buf, p.bytes, p.request, &live);
    return;
  }
  std::unique_ptr<Unexpected> u = take_unexpected(view);
  u->payload_ptr = nullptr;
  if (c.kind == kEager) {
    u->payload.assign(live.payload(), live.payload() + c.len);
    u->payload_ptr = u->payload.data();
  }
  unexpected_.push_back(std::move(u));
}

// Device copies finish in the order they were queued (one stream). One event marks the copies
// queued since the last mark, so a window of messages costs one event, not one each.
void ShmEngine::mark_device_copies() {
  if (device_copies_.empty() || device_copies_.back().token) return;
  void* token = nullptr;
  Status marked = cuda_ipc_mark(&token);
  if (marked != Status::ok) {  // wait for the copies here instead
    for (DeviceCopy& c : device_copies_)
      if (!c.token && c.request && c.request->status.error == Status::ok) c.request->status.error = marked;
    token = kFailedMark;
  }
  device_copies_.back().token = token;
}

int ShmEngine::finish_device_copies() {
  int done = 0;
  while (!device_copies_.empty()) {
    auto marked = device_copies_.begin();
    while (marked != device_copies_.end() && !marked->token) ++marked;
    if (marked == device_copies_.end()) break;
    Status result = Status::ok;
    if (marked->token != kFailedMark && !cuda_ipc_copy_test(marked->token, &result)) break;
    for (auto it = device_copies_.begin(); it <= marked; ++it) {
      (void)control(it->src_world, kFinish, it->cookie);
      if (!it->request) continue;  // given up after a failure
      if (result != Status::ok && it->request->status.error == Status::ok) it->request->status.error = result;
      it->request->complete = true;
      ++done;
    }
    device_copies_.erase(device_copies_.begin(), marked + 1);
  }
  return done;
}

int ShmEngine::progress() {
  int events = pending_count_ ? flush_pending() : 0;
  if (!device_copies_.empty()) {
    mark_device_copies();
    events += finish_device_copies();
  }
  if (!outstanding_.empty()) events += serve_help_requests();
  char* base = self_->base();
  for (size_t i = 0; i < local_world_.size(); ++i) {
    const auto [control, ring] = ring_place(base, i, ring_bytes_);
    RecvRing& r = recv_[i];
    const uint64_t head = r.head;
    for (;;) {
      CellHeader h;
      size_t bytes = 0;
      const char* why = nullptr;
      const CellRead read = read_cell(ring, r.offset, ring_bytes_, payload_size_, r.lap, &h, &bytes, &why);
      if (read == CellRead::nothing) break;
      if (read == CellRead::broken) [[unlikely]] {
        ring_broken(local_world_[i], why);
        break;
      }
      if (read == CellRead::cell) {
        handle(h, *reinterpret_cast<Cell*>(ring + r.offset), local_world_[i]);
        ++events;
        // After a long copy, hand queued cells over before the next one, so the peer has work
        // (its own copies) while this process copies: both directions then overlap.
        if (h.kind == kReadyToSend && pending_count_) events += flush_pending();
      }
      r.head += bytes;
      r.offset = r.offset + bytes == ring_bytes_ ? 0 : r.offset + bytes;
      if (r.offset == 0) r.lap ^= 1;
    }
    // Once per pass, not per cell: the sender reads it only when its ring looks full.
    if (r.head != head) control->consumed.store(r.head, std::memory_order_release);
  }
  if (!device_copies_.empty()) mark_device_copies();  // copies queued by this pass start counting at once
  return events;
}

bool ShmEngine::probe(uint64_t tag, uint64_t mask, bool remove, MatchInfo* info, void** message) {
  (void)progress();
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    const Unexpected& u = **it;
    if (((u.tag ^ tag) & mask) != 0) continue;
    info->source = tag::source_of(u.tag);
    info->tag = tag::user_tag_of(u.tag);
    info->bytes = u.len;
    if (remove) {
      *message = it->release();
      unexpected_.erase(it);
    }
    return true;
  }
  return false;
}

Status ShmEngine::mrecv(void* buf, size_t bytes, void* message, Request* r) {
  std::unique_ptr<Unexpected> u(static_cast<Unexpected*>(message));
  r->complete = false;
  r->status = RequestStatus{};
  complete_receive(*u, buf, bytes, r);
  return Status::ok;
}

bool ShmEngine::withdraw(Request* r) {
  for (auto it = posted_.begin(); it != posted_.end(); ++it) {
    if (it->request != r) continue;
    posted_.erase(it);
    return true;
  }
  return false;
}

bool ShmEngine::is_posted(const Request* r) const {
  for (const PostedRecv& p : posted_)
    if (p.request == r) return true;
  return false;
}

void ShmEngine::abandon(Request* r) {
  (void)withdraw(r);
  std::vector<uint64_t> unplaced;  // tickets of cells that never reached the peer
  for (auto& queue : pending_) {
    for (auto it = queue.begin(); it != queue.end();) {
      if (it->request != r) {
        ++it;
        continue;
      }
      if (it->kind == kReadyToSend || (it->flags & kSync)) unplaced.push_back(it->cookie);
      it = queue.erase(it);
      --pending_count_;
    }
  }
  for (uint32_t slot = 0; slot < awaiting_.size(); ++slot) {
    Awaiting& a = awaiting_[slot];
    if (!a.in_use || a.request != r) continue;
    const uint64_t ticket = uint64_t(a.generation) << 32 | slot;
    if (std::find(unplaced.begin(), unplaced.end(), ticket) != unplaced.end()) {
      (void)take_answer(ticket);
      continue;
    }
    a.request = nullptr;  // the answer may still come: it completes nothing
    for (size_t i = 0; i < outstanding_.size();) {  // never write this send's data for its receiver
      if (outstanding_[i].cookie == ticket) {
        outstanding_[i] = outstanding_.back();
        outstanding_.pop_back();
      } else {
        ++i;
      }
    }
  }
  for (DeviceCopy& c : device_copies_)
    if (c.request == r) c.request = nullptr;
}

}  // namespace weft
