// The shared-memory collective engine: collectives among the ranks of one node through one
// segment per communicator, with no point-to-point messages. Each rank owns, per slot, a
// 64-byte line (the operation number it posted, plus up to 48 bytes of data inline) and a data
// slot for larger contributions, and one "done" line. An operation writes its data, publishes
// its number, and reads what the other ranks published.
//
// Operations take consecutive numbers in the order the ranks start the calls (claimed when a
// run starts, coll/schedule.h at_start, not when its first step runs), and each rank
// finishes them in that order. Operation n uses slot n % slots, so a rank may publish into a
// slot only once every rank has finished the operation that used it before (their done lines
// say so; after an operation every rank published in, that is known without looking).
//
// The segment is made on first use: communicator rank 0 creates the file, the others open it
// once it exists, and the last rank to map it removes the name. If a member dies before, the
// survivors remove it (when the communicator is freed, and at finalize, which removes every
// name still known). Waits never block: they return Status::pending, and the schedule runs them
// again (schedule.h, Schedule::poll).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <functional>

#include "coll/coll.h"
#include "coll/schedule.h"

namespace weft {
class BootstrapShmJob;
class ShmSegment;
}  // namespace weft

namespace weft::coll::shm {

struct Geometry {
  size_t slot_bytes = 0;                // a rank's largest piece; 0: derived from segment_bytes
  size_t segment_bytes = 4 << 20;       // data slots of one communicator, all ranks together
  uint32_t slots = 4;                   // operations in flight before a rank must wait for the slowest
};
// The geometry of the segments and of the shm algorithms' sizes: coll's settings
// (Settings::shm, WEFT_COLL_SHM_*), or the defaults where the context has none.
const Geometry& geometry_of(const CollContext& ctx);
// The slot size of a communicator of `ranks` ranks: the configured one, or the segment's data
// bytes shared out (64 KiB at most, so that a piece stays in cache; 4 KiB at least).
size_t slot_bytes(const Geometry& g, int ranks);

constexpr size_t kInlineBytes = 48;  // data that travels in the flag's own cache line (16-aligned)

class Segment {
 public:
  Segment(const Comm& c, const Geometry& g);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  size_t slot_bytes() const { return geometry_.slot_bytes; }

  // Numbers the next n operations (the first is returned); called when a call starts.
  uint64_t claim(uint64_t n = 1) {
    const uint64_t first = claimed_ + 1;
    claimed_ += n;
    return first;
  }
  // Pending until this rank may take part in operation op: the segment is mapped and this
  // rank finished the operations before op. With `publishes`, also until every rank finished
  // the operation that last used op's slot.
  Status begin(const CollContext& ctx, uint64_t op, bool publishes);
  // Where rank r's data for op lies (inline for small contributions).
  char* data(int r, uint64_t op, size_t bytes);
  // Makes this rank's data for op visible to the others.
  void publish(uint64_t op);
  // Pending until rank r published op.
  Status wait_for(const CollContext& ctx, int r, uint64_t op);
  // Pending until every rank from *next on published op; *next keeps the progress made.
  Status wait_for_all(const CollContext& ctx, uint64_t op, int* next);
  // Records that this rank is done with op (its reads of others' data included).
  Status finish(const CollContext& ctx, uint64_t op);

 private:
  struct Line;
  Status attach(const CollContext& ctx);
  Status check_peers(const CollContext& ctx, int waiting_for);
  Line& flag(int r, uint64_t op) const;
  std::atomic<uint64_t>& done_of(int r) const;

  // Learns from the header whether every rank has mapped the file (then its name is gone).
  void note_unlinked();

  const Comm& comm_;
  Geometry geometry_;
  int rank_, size_;
  Bootstrap* boot_ = nullptr;
  std::unique_ptr<BootstrapShmJob> job_;
  std::unique_ptr<ShmSegment> file_;  // tracked until every rank has mapped it (then unlinked)
  char* base_ = nullptr;              // file_'s mapping
  size_t bytes_ = 0;
  size_t flags_at_ = 0, done_at_ = 0, slots_at_ = 0;
  bool attached_ = false;  // this rank has mapped the file and counted itself in
  bool unlinked_ = false;  // the name is removed (every rank mapped the file)
  uint64_t claimed_ = 0;     // the last operation number handed out here
  uint64_t finished_ = 0;    // the last operation this rank finished
  uint64_t all_done_ = 0;    // every rank is known to have finished up to here
};

// The communicator's segment (made, not yet mapped, on first call).
std::shared_ptr<Segment> segment_of(const CollContext& ctx);

// One rank's part in a shared-memory collective: whether it publishes (after write() fills its
// data), whose publications it waits for (-1: every rank's), and read(), which uses them.
struct Operation {
  bool publishes = true;
  bool waits = true;
  int wait_rank = -1;
  std::function<Status(Segment&, uint64_t op)> write;  // an error is reported once the call ends
  std::function<Status(Segment&, uint64_t op)> read;
  PollWork work;  // what write and read copy and reduce at this rank (for coll/replay.h)
};
// Appends the operations to s, one poll step each, run in turn; they take consecutive numbers
// when a run of s starts. (A schedule runs one call at a time, so each step keeps the state of
// the call in progress.)
void add_operations(Schedule& s, const CollContext& ctx, std::vector<Operation> ops);
inline void add_operation(Schedule& s, const CollContext& ctx, Operation op) {
  std::vector<Operation> one;
  one.push_back(std::move(op));
  add_operations(s, ctx, std::move(one));
}

// While alive, every group of operations added on this thread takes its numbers from one
// claim made when the first group starts. A composition (coll/hier) needs it when a later
// group starts after messages that ranks may finish in different orders: claimed then,
// concurrent non-blocking calls could number their operations differently on different ranks.
class JointClaim {
 public:
  JointClaim();
  ~JointClaim();
  JointClaim(const JointClaim&) = delete;
  JointClaim& operator=(const JointClaim&) = delete;
  struct Numbers {
    uint64_t total = 0;  // operations of every group
    uint64_t first = 0;  // the first one's number, once claimed
  };

 private:
  std::shared_ptr<Numbers> numbers_;
  std::shared_ptr<Numbers> previous_;
  friend void add_operations(Schedule&, const CollContext&, std::vector<Operation>);
};

// One-shot reductions (reduce, allreduce): the communicator is on one node and the vector fits
// a slot; their time: a flag exchange, then every rank's vector read and reduced.
bool fits_one_slot(const CollArgs& a, const CollContext& c);
double one_shot_us(const CollArgs& a, const CollContext& c, const CostModel& m);
// dst = the vectors all ranks published for op, combined in rank order (so that every rank
// that does it gets the same bits, and non-commutative operations are honoured).
Status reduce_published(Segment& g, uint64_t op, size_t bytes, size_t count, const Reduction& red, void* dst);

// The modelled time of one flag exchange among `ranks` ranks: the last rank's flag reaches
// the others (one hand-off), then each reads every other rank's line. Misses on lines that are
// already written overlap, so the reads grow like log2 of the ranks rather than linearly.
double flag_exchange_us(const CostModel& m, int ranks);
// Unknown shared-memory parameters (a tuning file without them): such estimates are infinite.
bool model_known(const CostModel& m);

// One-way hand-off of a flag between job ranks 0 and 1 through a shared file, in us, and the
// cost per byte of a copy. Every rank calls it; ranks other than 0 and 1 return at once.
Status measure(Transport& t, const Comm& world, double* alpha_us, double* beta_us_per_byte);

}  // namespace weft::coll::shm
