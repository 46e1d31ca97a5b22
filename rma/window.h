// MPI windows over UCX RMA and atomics (rma/): each rank registers its window memory and one
// control block with the transport, the ranks exchange (address, size, displacement unit,
// remote keys) once at creation, and every access goes straight to the target's memory: put,
// get, fetching atomics on 4- and 8-byte words, and flush. The control block holds the lock
// word (exclusive: compare-and-swap from 0 to a mark naming the holder; shared: one bit per
// holder, or a count with a slot per holder; control.h), the counters of general
// active target synchronisation (pscw.cpp), the mutex every accumulate takes and,
// in dynamic windows, the directory of attached regions (dynamic.cpp). Memory this process
// maps (its own, and its node peers' in a shared window, shared.cpp) is accessed with the
// CPU's loads, stores and atomics. A window in CUDA device memory publishes the CUDA IPC
// handle of its allocation instead of a UCX key: origins of its node map it and copy
// (memkind_copy); its control block stays in host memory, reached as above. Origins on other
// nodes cannot map it: their puts and gets travel as tagged messages that the target applies
// when it progresses (staged.cpp). The caller (mpi_window.h) checks epochs and argument
// ranges.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "control.h"
#include "mailbox.h"
#include "pt2pt/transport.h"
#include "runtime/cuda_ipc.h"
#include "runtime/op.h"

namespace weft::rma {

enum class Flavor : int { create = 1, allocate = 2, dynamic = 3, shared = 4 };
enum class LockType : uint8_t { none, shared, exclusive };

// What one rank publishes about its window at creation (fixed size; the remote keys follow
// as `rkey_bytes` + `ctrl_rkey_bytes` bytes).
struct PeerHeader {
  uint64_t base = 0, size = 0, ctrl_addr = 0;
  uint32_t disp_unit = 1, rkey_bytes = 0, ctrl_rkey_bytes = 0;
  uint8_t device = 0;   // the window memory is CUDA device memory
  uint8_t has_ipc = 0;  // device: `ipc` describes it (else only its own rank can reach it)
  uint8_t serves = 0;   // the rank applies the puts and gets of ranks on other nodes (staged.cpp)
  uint8_t reader_slots = 0;  // the rank asks that shared locks be counted, with reader slots (control.h)
  uint32_t pid = 0;  // the process, for cross-memory attach from ranks of its node
  uint32_t pad2 = 0;
  IpcDescriptor ipc{};
};

// Where an access lands at its target: a remote address and key, or (direct) a pointer into
// memory this process maps. [lo, hi) is the registered region holding it. device: the target's
// window is CUDA device memory (direct for the own window, else mapped through CUDA IPC at each
// access); only copies reach it, no CPU or UCX atomics.
struct Location {
  uint64_t addr = 0;
  void* rkey = nullptr;
  char* direct = nullptr;
  uint64_t lo = 0, hi = 0;
  bool device = false;
  int pid = 0;  // host memory of a process on this node: reached by cross-memory attach at addr
  bool staged = false;     // puts and gets go to the target as requests it applies (staged.cpp)
  bool via_mutex = false;  // no remote atomics on this memory (accumulates read and write it)
};

class Window {
 public:
  // `job_ranks` maps window ranks to job ranks.
  Window(Transport& t, std::vector<int> job_ranks, int rank, Flavor flavor);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  // Registers base[0, size) (nothing for a dynamic window) and the control block. device:
  // base[0, size) is CUDA device memory, in one allocation; it is described for CUDA IPC
  // rather than registered with UCX.
  Status register_memory(void* base, size_t size, int disp_unit, bool device = false);
  // This rank's header and keys, to be gathered by every rank (a fixed-size record of
  // record_bytes(), the same on every rank after agreeing on the largest key size).
  std::vector<unsigned char> record(size_t key_space) const;
  size_t key_space() const;  // bytes this rank's keys need
  // The context id of the window's own tagged messages (staged.cpp); before connect.
  void use_context(uint32_t context) { context_ = context; }
  // Every rank's record (record_bytes each, in window rank order).
  Status connect(const std::vector<unsigned char>& records, size_t record_bytes);
  // Shared windows: the target's memory is mapped here at `at` (accessed directly).
  void map_peer(int target, char* at) { peers_[size_t(target)].direct = at; }
  // Bytes of this window's control block (what place_control needs).
  size_t control_bytes() const { return control_.size() * 8; }
  // Windows whose ranks all map each other's memory: this rank's control block lives at `at`
  // (control_bytes(), 8-byte aligned, zeroed; before register_memory), and the target's is
  // mapped here, so that locks, completions and the accumulate mutex are CPU atomics. Every
  // rank of the window must map every other's, so no word is changed both ways.
  void place_control(uint64_t* at) { control_at_ = at; }
  void map_peer_control(int target, uint64_t* at) {
    if (!peers_[size_t(target)].ctrl_direct) ++controls_mapped_;
    peers_[size_t(target)].ctrl_direct = at;
  }
  // Whether every rank's control block is mapped here (and so, by place_control's rule, every
  // rank maps every other's): accumulates may then all go through the accumulate mutex and
  // plain loads and stores, since no origin updates an element with an atomic of its own.
  bool control_mapped() const { return controls_mapped_ == peers_.size(); }
  char* mapped(int target) const { return peers_[size_t(target)].direct; }
  // Accumulate mailboxes (mailbox.cpp, mailbox.h): created and dynamic windows whose control
  // blocks are mapped also map every rank's mailbox area (mailbox::area_bytes, zeroed); this
  // rank's own (its poller applies what origins post there) and each target's.
  void place_mailboxes(char* own);
  void map_peer_mailboxes(int target, char* area) { peers_[size_t(target)].mailbox = area; }
  bool has_mailbox(int target) const { return target != rank_ && peers_[size_t(target)].mailbox != nullptr; }
  // An accumulate or compare-and-swap the target applies to its own memory at `addr` (its
  // address): `bytes` of `type` elements, operand (none for MPI_NO_OP), compare (one element),
  // result (the old contents, or null). Long ones go in pieces; *done says how many bytes were
  // applied when the target did not take a piece in time (Status::ok: the caller goes on
  // another way from there).
  struct MailboxRequest {
    mailbox::Kind kind;
    ReduceOp op;
    BasicType type;
    uint64_t addr;
    size_t bytes;
    const char* operand;
    const char* compare;
    char* result;
  };
  Status mailbox_call(int target, const MailboxRequest& r, size_t* done);
  uint64_t peer_size(int target) const { return peers_[size_t(target)].size; }
  int peer_disp_unit(int target) const { return int(peers_[size_t(target)].disp_unit); }

  // Where the `bytes` bytes from byte `at` of the target's window are (a dynamic window: from
  // the address `at`, in a region attached there, whose table is fetched again when the one
  // cached has no such region). *found is false when they may not be accessed. A device
  // window this rank cannot reach (another node, no CUDA IPC) is Status::not_supported.
  Status locate(int target, uint64_t at, size_t bytes, Location* out, bool* found);

  // Accesses at byte `off` from a located place (checked by the caller). `buf` may be device
  // memory only where the place is (Location::device); elsewhere the caller stages it.
  Status put(int target, const Location& at, uint64_t off, const void* buf, size_t bytes) {
    return copy(target, at, off, const_cast<void*>(buf), bytes, true);
  }
  Status get(int target, const Location& at, uint64_t off, void* buf, size_t bytes) {
    return copy(target, at, off, buf, bytes, false);
  }
  // A fetching atomic on one 4- or 8-byte element; *result gets the old value (cswap: holds
  // the compare value on entry). Not on device windows (their accumulates take the mutex).
  Status atomic(int target, const Location& at, uint64_t off, Transport::RmaAtomic op, const void* value,
                void* result, size_t size);
  // Synchronisation fails with Status::peer_failed, naming the rank, once a rank it depends on
  // is known dead (the target; for -1 and fences every rank; for a lock, a dead holder too):
  // accesses to mapped memory cannot fail by themselves, so the failure shows here.
  // serve: where nothing is left to wait for, make one pass of progress all the same (the MPI
  // calls; the accumulate mutex's release, inside one, does not).
  Status flush(int target, bool serve = true);  // -1: every target
  // One pass of the progress engine. A rank may spin in one-sided calls that complete at once
  // (flushing a target reached by copies, reading its own window) while peers' accesses need
  // its progress (UCX emulates atomics and RMA on user memory with active messages), so such
  // calls make progress too.
  void progress() { (void)t_.progress_engine().poll(); }
  Status lock(int target, LockType type);
  // Releases the lock even where the flush before it failed (except on a dead target).
  Status unlock(int target);
  // The target's accumulate mutex, held around every accumulate and compare-and-swap.
  Status mutex_lock(int target);
  Status mutex_unlock(int target);
  // Failed ranks (the bootstrap's flags, after its throttled poll of this host's processes):
  // Status::ok while `target` (-1: every rank of the window) is not known dead, else
  // Status::peer_failed with a message naming it. Cheap: no system call.
  Status peer_alive(int target) {
    Bootstrap& b = t_.boot();
    b.poll_local_liveness();
    if (b.failures_seen() == 0) [[likely]] return Status::ok;
    return find_dead(target);
  }

  // General active target (pscw.cpp). post: tells each origin this rank's window is exposed
  // (notify false: MPI_MODE_NOCHECK). start: waits until each target has posted (unless
  // !wait). complete: completes the accesses at each target and tells it so. wait_complete:
  // waits until `origins` ranks have completed (block false: only looks once; *done says).
  Status post(const std::vector<int>& origins, bool notify);
  Status start(const std::vector<int>& targets, bool wait);
  Status complete(const std::vector<int>& targets);
  Status wait_complete(int origins, bool block, bool* done);

  // Dynamic windows (dynamic.cpp): regions of this rank's memory made accessible.
  Status attach(void* base, size_t size);
  Status detach(const void* base, bool* found);

  int rank() const { return rank_; }
  int size() const { return int(job_ranks_.size()); }
  Flavor flavor() const { return flavor_; }
  LockType locked(int target) const { return locks_[size_t(target)]; }

 private:
  Status copy(int target, const Location& at, uint64_t off, void* local, size_t bytes, bool write);
  // Device windows (register_memory): describes the own memory for CUDA IPC.
  Status describe_device();
  // The address in this process of byte `off` from a located place in a device window.
  Status device_at(int target, const Location& at, uint64_t off, char** out);
  // Cross-memory attach to node peers (user memory): whether it is on, whether it reaches
  // `pid`, and one copy to (write) or from the memory of window rank `target` (process `pid`;
  // not once the rank is known dead).
  static bool cma_allowed();
  static bool cma_reaches(int pid, uint64_t address);
  Status cma_copy(int target, int pid, bool write, void* local, uint64_t remote, size_t bytes);
  Status find_dead(int target);  // peer_alive once some rank has failed
  bool rank_failed(int q) const { return t_.boot().peer_failed(job_ranks_[size_t(q)]); }
  Status rank_gone(int q);  // the error for a dead window rank q (logged once per rank)
  // A transport result on the way to `target`: a dead peer is reported by its window rank.
  Status on_target(int target, Status s) { return s == Status::peer_failed ? rank_gone(target) : s; }
  // Whether a dead rank holds the lock whose word at `target` read `word` (the exclusive
  // holder, or a shared one by its bit or reader slot): then Status::peer_failed naming it.
  Status check_lock_holders(int target, uint64_t word);
  Status holder_gone(int target, int holder, const char* what);
  // WEFT_TIMEOUT passed while waiting on `target` for `what`: Status::timed_out, detail set.
  Status waited_too_long(int target, const char* what);
  // What a shared lock adds to the lock word: this rank's bit, or 1 where holders are counted.
  uint64_t shared_delta() const { return reader_slots_ ? 1 : uint64_t(1) << rank_; }
  size_t own_reader_slot() const { return ctrl::reader_slots(job_ranks_.size()) + 8 * size_t(rank_); }
  // Requests the target applies (staged.cpp): whether this rank applies them for ranks of
  // other nodes (decided at registration), the poller that applies them, and the origin's side.
  bool decide_serving() const;
  Status start_serving();  // connect: registers the poller, logs the staged peers
  static int serve_poll(void* window);
  int serve();
  Status apply_request(int origin, void* message, size_t bytes);
  Status reply(int origin, Status result, const void* from, size_t bytes);
  Status copy_window(void* to, const void* from, size_t bytes) const;  // own memory, device or host
  bool request_in_window(uint64_t addr, uint64_t bytes) const;
  Status staged_put(int target, uint64_t addr, const void* buf, size_t bytes, bool device_buf);
  Status staged_get(int target, uint64_t addr, void* buf, size_t bytes, bool device_buf);
  Status staged_flush(int target);
  Status staged_call(int target, int op, uint64_t addr, size_t bytes, void* out, bool device_out);
  // The target's side of the mailboxes (mailbox.cpp).
  char* slot_at(char* area, int origin) const;
  static int mailbox_poll(void* window);
  int serve_mailboxes();
  Status apply_mail(int origin, const mailbox::SlotHeader& h, char* data);
  // Atomics on memory this process maps.
  static Status atomic_at(void* at, Transport::RmaAtomic op, const void* value, void* result, size_t size);
  // A fetching atomic on the 8-byte word at byte `off` of the target's control block (a mapped
  // one only while the target is not known dead; checked: the caller just asked peer_alive).
  Status ctrl_atomic(int target, size_t off, Transport::RmaAtomic op, const uint64_t* value, uint64_t* old,
                     bool checked = false);
  uint64_t* ctrl_word(size_t off) { return ctrl() + off / 8; }
  // Reads the word at byte `off` of the target's control block (a load where it is mapped).
  Status ctrl_read(int target, size_t off, uint64_t* value);
  // The lock protocol (locks.cpp): one attempt at the lock word (*taken, else *seen holds the
  // word that kept this rank out), the way through the queue, and a waiter's failure check,
  // given the queue word it read last.
  Status try_lock_word(int target, LockType type, bool* taken, uint64_t* seen);
  Status queued_lock(int target, LockType type);
  Status unblock_queue(int target, uint64_t queue);
  uint64_t* ctrl() { return control_at_ ? control_at_ : control_.data(); }
  const uint64_t* ctrl() const { return control_at_ ? control_at_ : control_.data(); }
  // Waits (polling progress) until the own control word at `off` is at least `value`, or
  // until a rank of `from`, which would raise it, is known dead (Status::peer_failed).
  Status await_ctrl(size_t off, uint64_t value, std::span<const int> from);
  size_t dir_offset() const;  // where the directory of attached regions starts in the block
  Status fetch_directory(int target);
  Status publish_directory();
  struct Region {
    uint64_t base = 0, size = 0;
    void* rkey = nullptr;  // remote regions: the unpacked key
  };
  struct Local {  // a region this rank attached
    void* base;
    size_t size;
    Transport::RmaRegistration reg;
  };
  struct Peer {
    uint64_t base = 0, size = 0, ctrl_addr = 0;
    uint32_t disp_unit = 1;
    void* rkey = nullptr;
    void* ctrl_rkey = nullptr;
    char* direct = nullptr;       // the target's window memory mapped here
    int cma_pid = 0;              // on this node and reachable by cross-memory attach: its pid
    uint64_t* ctrl_direct = nullptr;  // the target's control block mapped here
    bool device = false;          // the window memory is CUDA device memory
    IpcDescriptor ipc{};          // device: its CUDA IPC description
    std::string unreachable;      // device: why this rank cannot reach it (empty: through CUDA IPC)
    std::vector<Region> regions;  // dynamic windows: the target's attached regions, as last fetched
    bool serves = false;          // it applies requests of ranks on other nodes
    bool staged = false;          // this rank reaches it by such requests
    uint64_t unflushed = 0;       // staged puts sent since the last flush
    char* mailbox = nullptr;      // its mailbox area, mapped here
    uint32_t mailbox_skip = 0;    // accumulates still to go the other way after a withdrawal
    uint32_t mailbox_backoff = 0; // the last such count (doubled by each withdrawal in a row)
  };
  Transport& t_;
  std::vector<int> job_ranks_;
  int rank_ = 0;
  Flavor flavor_;
  void* base_ = nullptr;
  size_t size_ = 0;
  int disp_unit_ = 1;
  bool device_ = false, has_ipc_ = false;  // own window memory: CUDA device memory, described for IPC
  IpcDescriptor ipc_{};
  // Control block: lock word, completions, accumulate mutex, posts by origin rank, directory.
  std::vector<uint64_t> control_;
  uint64_t* control_at_ = nullptr;  // the control block placed in mapped memory (place_control)
  size_t controls_mapped_ = 0;      // peers whose control block is mapped here
  Transport::RmaRegistration mem_, ctrl_reg_;
  std::vector<Peer> peers_;
  std::vector<LockType> locks_;
  // Shared locks are counted, each holder also setting its reader slot at the target (windows
  // of more than ctrl::kReaderBits ranks, or WEFT_RMA_LOCK_READER_SLOTS on any rank), rather
  // than recorded as one bit per rank in the lock word.
  bool reader_slots_ = false;
  std::vector<int> exposure_origins_;  // the origins of the open exposure epoch (MPI_Win_post)
  std::vector<char> reported_dead_;    // by window rank: its failure was logged
  std::vector<Local> attached_;
  // Staged accesses (staged.cpp).
  uint32_t context_ = 0;
  bool serves_ = false;     // this rank applies requests (its poller is registered)
  bool serving_ = false;    // a request is being applied: the poller does not start another
  std::vector<Status> refused_;  // by origin: a put refused since its last flush (reported then)
  std::vector<char> stage_;          // the origin's request, or the reply it waits for
  std::vector<char> inbox_, outbox_;  // the target's request being applied, and its reply
  // Accumulate mailboxes (mailbox.cpp).
  char* mailbox_own_ = nullptr;  // this rank's area (its poller is registered while set)
};

}  // namespace weft::rma
