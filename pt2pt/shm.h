// Node-local point-to-point over weft's own shared memory: one inbound segment per process,
// holding a single-producer byte ring per local sender, in which cells of any size follow one
// another. Small messages are copied through a ring cell (eager); larger ones send a
// ready-to-send cell and the receiver copies the payload
// straight from the sender's memory with one process_vm_readv (CMA), then answers with a
// finish cell. Matching (posted and unexpected queues) happens here, in weft, not in UCX.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "pmix/bootstrap.h"
#include "runtime/cuda_ipc.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "runtime/shm_segment.h"
#include "runtime/status.h"
#include "transport.h"

namespace weft {

namespace shm_cells {
struct CellHeader;  // shm_cell_read.h
}
struct ShmRingControl;  // shm.cpp

// The job's shared-memory names and their tracking (runtime/shm_segment.h) are the bootstrap's.
class BootstrapShmJob final : public ShmJob {
 public:
  explicit BootstrapShmJob(Bootstrap& boot) : boot_(boot) {}
  std::string name(std::string_view kind, std::string_view rest) const override { return boot_.shm_name(kind, rest); }
  void track(const std::string& name, bool created) override { boot_.track_shm(name, created); }
  void untrack(const std::string& name) override { boot_.untrack_shm(name); }

 private:
  Bootstrap& boot_;
};

struct ShmOptions {
  // A ring holds cells × cell_size bytes; cell_size bounds one cell (header included), so an
  // eager message carries up to cell_size - 32 bytes.
  uint32_t cells = 16;
  uint32_t cell_size = 4096;
  size_t split_min = 64 * 1024;  // copies from here up are split between receiver and sender; 0: never
  bool require_fast_path = false;  // a device buffer without an IPC handle is an error, not a host copy
};

struct ReadyToSend;

// Why the shared-memory path cannot be used on this machine, or empty if it can.
std::string shm_unavailable_reason();

class ShmEngine {
 public:
  // Creates this process's inbound segment and publishes its name (before the modex exchange).
  static Status create(Bootstrap& boot, Progress& progress, const ShmOptions& options,
                       std::unique_ptr<ShmEngine>* out);
  ~ShmEngine();

  Status isend(const void* buf, size_t bytes, int dest, uint64_t tag, SendMode mode, Request* r);
  Status irecv(void* buf, size_t bytes, int source, uint64_t tag, uint64_t mask, Request* r);
  bool probe(uint64_t tag, uint64_t mask, bool remove, MatchInfo* info, void** message);
  Status mrecv(void* buf, size_t bytes, void* message, Request* r);
  // Cancels r (shm_cancel.cpp). A posted receive that has not matched yet is removed and
  // completes as cancelled. A send still queued for a full ring is removed likewise; one
  // placed (complete or not) asks its receiver to drop the message if no receive has matched
  // it yet, and r completes on the answer: cancelled, or as the send it was (its finish or
  // acknowledgement still completes it if the message matched).
  void cancel(Request* r);
  // Takes back a posted receive that has not matched yet, without completing it: true if it was
  // still posted (another engine matched the message instead).
  bool withdraw(Request* r);
  bool is_posted(const Request* r) const;
  // Gives up r after a failure, without completing it: a posted receive or queued cell is
  // removed, and the answer a placed send waits for (finish, acknowledgement) will find
  // nothing to complete, so r may be reused or freed at once.
  void abandon(Request* r);

  int progress();
  // True when no cell waits for room in a peer's ring and no device copy (whose finish cell
  // a peer waits for) is running.
  bool idle() const { return pending_count_ == 0 && device_copies_.empty(); }
  size_t eager_limit() const { return payload_size_; }
  std::string describe() const;
  // Messages that arrived before a matching receive was posted (the MPI_T pvar).
  size_t unexpected_count() const { return unexpected_.size(); }

 // Called once every rank has published its segment (after the modex exchange).
  Status map_all_and_unlink();
  // Blocking-send fast path: an eager message placed at once; false if it must queue.
  bool try_send_now(const void* buf, size_t bytes, int dest, uint64_t tag);

  struct Cell;

 private:
  struct Segment;
  struct PostedRecv {
    Request* request;
    void* buf;
    size_t bytes;
    uint64_t tag, mask;
  };
  // A message that arrived before its receive was posted, or a view of a ring cell.
  struct Unexpected {
    int src_world;
    uint32_t kind, flags;
    uint64_t tag, len, addr, cookie;
    int pid;
    uint32_t message = 0;              // the send's number (Cell::message)
    std::vector<char> payload;         // eager data, copied out of the ring
    const char* payload_ptr = nullptr;  // the data: payload, or the cell while it is handled
    IpcDescriptor ipc;                 // flags & kDevice: the sender's buffer (unset otherwise)
  };
  // A cell waiting for room in a full ring (later sends to the same rank queue behind it).
  struct Pending {
    uint32_t kind = 0, flags = 0;
    uint64_t tag = 0;
    const void* buf = nullptr;
    size_t len = 0;
    uint64_t cookie = 0;
    Request* request = nullptr;
    bool complete_on_place = false;
    IpcDescriptor ipc;  // flags & kDevice (its handle is left unset otherwise)
    uint32_t message = 0;  // Cell::message
  };

  ShmEngine(Bootstrap& boot, Progress& progress) : boot_(boot), job_(boot), progress_(progress) {}
  Status init(const ShmOptions& options);
  Status map_peer(int dest, Segment** seg);
  bool try_place(int dest, const Pending& p, Status* st);
  void post(int dest, const Pending& p, Status* st);
  int flush_pending();
  Status control(int dest, uint32_t kind, uint64_t cookie);
  // A cell read from a ring (shm_cell_read.h): its checked header, and the cell itself for its
  // payload (and a ready-to-send's help field).
  void handle(const shm_cells::CellHeader& cell, Cell& live, int sender);
  void forget_overwritten(int dest, uint64_t end);
  void ring_broken(int sender, const char* what);
  // live_cell: the ring cell of a ready-to-send still held (a split copy meets there).
  void complete_receive(const Unexpected& msg, void* buf, size_t bytes, Request* r,
                        Cell* live_cell = nullptr);
  Status cma_read(const Unexpected& msg, void* buf, size_t offset, size_t n);
  Status split_copy(const Unexpected& msg, void* buf, size_t n, ReadyToSend* rts);
  int serve_help_requests();
  // Send cancellation (shm_cancel.cpp): the sender's side, the receiver's answer to a cancel
  // cell, and the sender's handling of that answer.
  void cancel_send(Request* r);
  void drop_message(const shm_cells::CellHeader& c, int sender);
  void cancel_answered(const shm_cells::CellHeader& c);

  // Large sends in flight whose receiver may ask for help with the copy. position: where the
  // cell starts in the ring (bytes placed before it); once the sender writes past position +
  // ring size, the cell is gone (its receiver is done with it).
  struct Outstanding {
    Cell* cell;
    uint64_t cookie;
    const char* buf;
    int dest;
    uint64_t position;
  };
  std::vector<Outstanding> outstanding_;
  // Receives whose data the GPU is still copying through CUDA IPC, in the order queued.
  struct DeviceCopy {
    void* token;
    Request* request;
    int src_world;
    uint64_t cookie;
  };
  std::deque<DeviceCopy> device_copies_;  // token: set on the last copy a mark covers
  void mark_device_copies();
  int finish_device_copies();
  size_t split_min_ = SIZE_MAX;

  Bootstrap& boot_;
  BootstrapShmJob job_;
  Progress& progress_;
  ShmOptions opts_;
  size_t payload_size_ = 0;
  size_t ring_bytes_ = 0;
  Segment* self_ = nullptr;         // my inbound segment
  // The files mapped (this rank's inbound one and its peers'), by job rank.
  std::vector<std::unique_ptr<ShmSegment>> files_;
  std::vector<int> local_index_;    // job rank -> index among this node's ranks (-1: remote)
  std::vector<int> local_world_;    // index -> job rank
  std::vector<Segment*> peers_;     // inbound segments of this node's ranks, by job rank
  // A sender's view of its ring in a peer's segment: bytes placed so far (tail), where the next
  // cell goes (offset), the receiver's count of bytes consumed as last read, the lap the next
  // cell belongs to (shm_cell_read.h), and what the first word of each line of the ring holds
  // (LineWord), so that the sender knows which lines it must clear before the receiver looks.
  struct SendRing {
    uint64_t tail = 0, offset = 0, consumed = 0;
    uint8_t lap = 0;
    std::vector<uint8_t> lines;
    char* cells = nullptr;               // the ring in the receiver's segment; null until opened
    ShmRingControl* control = nullptr;   // the receiver's consumed count
  };
  Status open_ring(int dest, SendRing* s);
  Cell* claim_cell(int dest, SendRing& s, size_t bytes);
  void publish_cell(SendRing& s, Cell* c, size_t bytes);
  bool place_eager_now(const void* buf, size_t len, int dest, uint64_t tag, uint32_t message);
  Status isend_queued(const void* buf, size_t bytes, int dest, uint64_t tag, SendMode mode, Request* r);
  struct RecvRing {
    uint64_t head = 0, offset = 0;  // bytes consumed; where the next cell starts
    uint8_t lap = 0;
  };
  // A line's first word as its sender last left it: zero, payload bytes, or the first word of a
  // cell or wrap of lap 0 or 1 (kLineFirstWord + lap).
  enum LineWord : uint8_t { kLineZero = 0, kLinePayload = 1, kLineFirstWord = 2 };
  // Clears the first word at `offset`, which the receiver reads next in lap `lap`, unless it
  // already reads as "nothing yet" there.
  static void clear_for_lap(SendRing& s, char* ring, size_t offset, uint8_t lap);
  std::vector<SendRing> send_;          // by job rank
  std::vector<uint32_t> next_message_;  // the last send's number (Cell::message), by job rank
  std::vector<RecvRing> recv_;          // by local index
  std::vector<std::deque<Pending>> pending_;  // by job rank
  size_t pending_count_ = 0;
  // Deques and a pool of spent messages: the common path (the first entry matches) allocates
  // nothing per message, where list nodes and fresh buffers cost a malloc and free each.
  // Sends that wait for an answer (a finish or acknowledgement cell). Their cells carry a
  // ticket (slot index, generation) rather than the request's address, so that an answer to
  // a send given up after a failure (its slot emptied) completes nothing.
  struct Awaiting {
    Request* request = nullptr;
    uint32_t generation = 0;
    bool in_use = false;
    bool cancel = false;  // the answer to a cancel cell
  };
  std::vector<Awaiting> awaiting_;
  std::vector<uint32_t> free_awaiting_;
  uint64_t await_answer(Request* r);
  Request* take_answer(uint64_t ticket);  // null for a send given up (or a stale ticket)
  std::deque<PostedRecv> posted_;
  std::deque<std::unique_ptr<Unexpected>> unexpected_;
  std::vector<std::unique_ptr<Unexpected>> spare_unexpected_;
  std::unique_ptr<Unexpected> take_unexpected(const Unexpected& view);
  void recycle(std::unique_ptr<Unexpected> u);
};

}  // namespace weft
