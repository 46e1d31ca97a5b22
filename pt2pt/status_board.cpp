#include "pt2pt/status_board.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "pt2pt/shm.h"
#include "runtime/log.h"
#include "runtime/shm_segment.h"
#include "runtime/wait_deadline.h"

namespace weft {

namespace {
constexpr uint32_t kMagic = 0x77667362;  // "wfsb"
constexpr uint32_t kEntries = 127;
constexpr size_t kOpChars = 48;

// The segments' job: lives as long as the process (finalize unlinks the tracked names).
ShmJob& board_job(Bootstrap& boot) {
  static BootstrapShmJob* job = new BootstrapShmJob(boot);
  return *job;
}
}  // namespace

struct alignas(64) BoardEntry {
  std::atomic<uint32_t> context_plus_one;  // 0: free
  std::atomic<uint32_t> started;
  std::atomic<uint32_t> finished;
  std::atomic<uint32_t> failed;  // the number of the last one that returned an error
  char op[kOpChars];
};

struct StatusBoard::Page {
  std::atomic<uint32_t> magic;
  int32_t rank;
  uint32_t next_victim;  // the entry reused when every one is taken
  char pad[52];
  BoardEntry entries[kEntries];
};
static_assert(sizeof(BoardEntry) == 64);

StatusBoard::StatusBoard(Bootstrap& boot) : boot_(boot) {}
StatusBoard::~StatusBoard() = default;

bool StatusBoard::open() {
  if (page_) return true;
  if (unavailable_ || boot_.singleton()) return false;
  auto seg = std::make_unique<ShmSegment>(board_job(boot_), boot_.shm_name("diag", std::to_string(boot_.rank())), true,
                                          ShmUse{Subsys::coll, "the collective status board"});
  if (seg->create(sizeof(Page), true) != Status::ok) {
    WEFT_INFO(Subsys::coll, "no collective status board: a timeout will not name late ranks");
    unavailable_ = true;
    return false;
  }
  page_ = reinterpret_cast<Page*>(seg->data());
  page_->rank = boot_.rank();
  page_->magic.store(kMagic, std::memory_order_release);
  own_ = std::move(seg);
  return true;
}

int StatusBoard::entry_of(const Comm& c) {
  if (c.board_entry >= 0) return c.board_entry;
  if (!open()) return -1;
  const uint32_t key = c.context_id + 1;
  int free_entry = -1;
  for (uint32_t k = 0; k < kEntries; ++k) {
    const uint32_t held = page_->entries[k].context_plus_one.load(std::memory_order_relaxed);
    if (held == key || (held == 0 && free_entry < 0)) {
      free_entry = int(k);
      if (held == key) break;  // a freed communicator's context, used again: counts restart
    }
  }
  if (free_entry < 0) free_entry = int(page_->next_victim++ % kEntries);
  BoardEntry& e = page_->entries[free_entry];
  e.started.store(0, std::memory_order_relaxed);
  e.finished.store(0, std::memory_order_relaxed);
  e.failed.store(0, std::memory_order_relaxed);
  e.op[0] = '\0';
  e.context_plus_one.store(key, std::memory_order_release);
  c.board_entry = free_entry;
  return free_entry;
}

void StatusBoard::enter(const Comm& c, const char* op) {
  if (g_wait_timeout_ns == 0) [[likely]] return;  // read only when a collective times out
  const int k = entry_of(c);
  if (k < 0) return;
  BoardEntry& e = page_->entries[k];
  strncpy(e.op, op, kOpChars - 1);
  e.op[kOpChars - 1] = '\0';
  e.started.store(e.started.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void StatusBoard::leave(const Comm& c, bool failed) {
  if (c.board_entry < 0 || !page_) return;
  BoardEntry& e = page_->entries[c.board_entry];
  (failed ? e.failed : e.finished).store(e.started.load(std::memory_order_relaxed), std::memory_order_release);
}

StatusBoard::Record StatusBoard::read(int job_rank, uint32_t context) {
  Record rec;
  const Page* page = nullptr;
  std::unique_ptr<ShmSegment> seg;
  if (job_rank == boot_.rank()) {
    page = page_;
    rec.known = true;  // no file yet: no collective started
  } else {
    const auto& host = boot_.host_peers();
    if (std::find(host.begin(), host.end(), job_rank) == host.end()) return rec;
    seg = std::make_unique<ShmSegment>(board_job(boot_), boot_.shm_name("diag", std::to_string(job_rank)), false,
                                       ShmUse{Subsys::coll, "a peer's collective status board"});
    const Status s = seg->attach(sizeof(Page), true);
    seg->forget();  // its owner removes it
    rec.known = true;  // a member that never started a collective has no file
    if (s == Status::ok) page = reinterpret_cast<const Page*>(seg->data());
  }
  if (!page || page->magic.load(std::memory_order_acquire) != kMagic) return rec;
  for (uint32_t k = 0; k < kEntries; ++k) {
    const BoardEntry& e = page->entries[k];
    if (e.context_plus_one.load(std::memory_order_acquire) != context + 1) continue;
    rec.started = e.started.load(std::memory_order_acquire);
    rec.finished = e.finished.load(std::memory_order_acquire);
    rec.failed = e.failed.load(std::memory_order_acquire);
    char op[kOpChars];
    memcpy(op, e.op, kOpChars);
    op[kOpChars - 1] = '\0';
    rec.op = op;
    break;
  }
  return rec;
}

std::string StatusBoard::describe_stall(const Comm& c) {
  const Record mine = read(boot_.rank(), c.context_id);
  std::string late, unknown, by_rank;
  int listed = 0;
  for (int k = 0; k < c.size; ++k) {
    const Record r = read(c.world_rank(k), c.context_id);
    if (!r.known) {
      unknown += (unknown.empty() ? "" : ", ") + std::to_string(k);
      continue;
    }
    if (r.started < mine.started) late += (late.empty() ? "" : ", ") + std::to_string(k);
    if (listed++ == 64) by_rank += ", ...";
    if (listed > 64) continue;
    by_rank += (k ? ", " : "") + std::to_string(k) + " #" + std::to_string(r.started);
    if (r.started > 0)
      by_rank += " " + r.op + (r.finished == r.started ? " (finished)" : r.failed == r.started ? " (failed)" : " (waiting)");
  }
  std::string msg = "collective #" + std::to_string(mine.started) + " on " + c.label() +
                    ": ranks that never arrived: " + (late.empty() ? "none" : late);
  if (!unknown.empty()) msg += "; on other hosts, not readable from here: " + unknown;
  msg += "; last collective by rank: " + by_rank;
  return msg;
}

}  // namespace weft
