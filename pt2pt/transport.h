// Point-to-point transport over UCX UCP tag matching. One worker per process, that of the
// process's UCX service (runtime/ucx_service.h), which the transport makes at init; endpoints
// are created on first use from the peer's worker address published through the bootstrap.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "comm.h"
#include "pmix/bootstrap.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "runtime/status.h"

namespace weft {

enum class SendMode : uint8_t { standard, synchronous };

enum class Pt2ptPath : uint8_t { automatic, ucx, shm };

struct TransportOptions {
  bool thread_multiple = false;
  bool peer_error_mode = false;  // UCP_ERR_HANDLING_MODE_PEER on endpoints
  bool require_fast_path = false;
  bool process_fault_scope = false;  // WEFT_FAULT_SCOPE=process (Transport::fails_with_member)
  Pt2ptPath path = Pt2ptPath::automatic;
  uint32_t shm_cells = 16;
  uint32_t shm_cell_size = 4096;
  size_t shm_split_min = 64 * 1024;
};

// What a receive or probe matched.
struct MatchInfo {
  int source = -1;  // communicator rank of the sender
  int tag = -1;     // user tag
  size_t bytes = 0;
};

// How GPU device buffers to or from a peer travel when handed to the transport as they are
// (Request::device_buffer).
enum class DevicePath : uint8_t {
  staged,     // they are not: callers stage the whole message through host memory
  cuda_ipc,   // weft shared memory, the receiver copying from the sender's buffer (CUDA IPC)
  pipelined,  // UCX, double-buffered through two pinned host chunks (device_staging.h)
  mixed,      // a wildcard receive in hybrid mode: CUDA IPC or pipelined, whichever matches
};

class ShmEngine;
class UcxService;

class Transport {
 public:
  static Status create(Bootstrap& boot, Progress& progress, RequestPool& pool,
                       const TransportOptions& options, std::unique_ptr<Transport>* out);
  ~Transport();

  // Non-blocking: the request completes through progress. dest is a job rank.
  Status isend(const void* buf, size_t bytes, int dest, uint64_t tag, SendMode mode, Request* r);
  // source: the sender's job rank, or -1 for any source (used to detect a dead peer).
  Status irecv(void* buf, size_t bytes, int source, uint64_t tag, uint64_t mask, Request* r);
  // Blocking fast paths: no request object. scope: the communicator, whose failed members fail
  // the call (failure is contagious within a communicator).
  Status send(const void* buf, size_t bytes, int dest, uint64_t tag, SendMode mode, const Comm* scope = nullptr);
  Status recv(void* buf, size_t bytes, int source, uint64_t tag, uint64_t mask, MatchInfo* info,
              const Comm* scope = nullptr);
  // The profiler's TRANSFER event of a message ("send" or "recv") to or from job rank `peer`
  // (-1: any source), started now under the thread's innermost event (the caller asks only
  // when TRANSFER events are wanted; the transport's own calls make none).
  void* transfer_event(const char* kind, int peer, size_t bytes) const;

  // What this rank has sent, by path (the MPI_T performance variables): self is a message to
  // this rank itself outside shared memory.
  enum class Path : uint8_t { shm, ucx, self };
  struct Traffic { uint64_t messages = 0, bytes = 0; };
  Traffic sent_via(Path path) const;
  // Messages waiting in weft's own unexpected queue (shared memory); UCX matches its own.
  size_t unexpected_messages() const;

  // Probe once (after a progress pass). With remove, the message is taken out of matching and
  // *message keeps it for mrecv.
  bool probe(uint64_t tag, uint64_t mask, bool remove, MatchInfo* info, void** message);
  Status mrecv(void* buf, size_t bytes, void* message, Request* r);

  // How GPU device buffers to or from a job rank (-1: any rank) travel: directly through weft
  // shared memory and CUDA IPC, pipelined through pinned host chunks over UCX, or (staged) not
  // at all, and then *why_staged says why and callers stage them through host memory.
  // Requests carrying device buffers set Request::device_buffer.
  DevicePath device_path(int peer, std::string* why_staged = nullptr) const;
  bool device_direct(int peer) const { return device_path(peer) != DevicePath::staged; }

  // Cancels r: a receive not yet matched completes as cancelled. A send to a rank of this node
  // (weft shared memory) is recalled if its receiver has not matched it, and completes, possibly
  // later, as cancelled or as sent; one over UCX cannot be recalled and completes as sent.
  Status cancel(Request* r);
  // Waits for r, failing it (Status::peer_failed) once its peer, or any member of scope, is
  // known to have failed.
  void wait(Request* r, const Comm* scope = nullptr);
  // One look: fails r (true) if its peer, or any member of scope, is known to have failed.
  // Send and receive requests only: a collective fails through its schedule.
  bool check_failure(Request* r, const Comm* scope = nullptr);
  // Failure is contagious within a communicator: the communicator rank of a member known to
  // have failed, or -1. Cheap (looks again only when the count of failures changed); the
  // caller polls liveness.
  int failed_member(const Comm& c);
  // Whether a pending or new operation on c with `peer` (a live job rank; -1: any source;
  // kCollectiveStep: a collective's own message) fails now that c has a failed member.
  // WEFT_FAULT_SCOPE=communicator (the default): always. process (ULFM): a collective's always,
  // a live peer's never, a wildcard receive's while some failed member is not acknowledged
  // (Comm::acked_failures, MPIX_Comm_failure_ack).
  static constexpr int kCollectiveStep = -3;
  bool fails_with_member(const Comm& c, int peer);
  // The members of c known to have failed.
  int failed_count(const Comm& c);
  // Names a failed job rank, by its rank in c when c is given: "rank 3 of MPI_COMM_WORLD (job
  // rank 3) has terminated".
  static std::string failure_detail(const Comm* c, int job_rank);
  // Gives up an incomplete send or receive: takes it out of both engines, so that nothing
  // touches r afterwards (a late answer from a peer is dropped; UCX stops reporting it), and
  // completes it with `why` (Status::peer_failed, or Status::timed_out). A complete request is
  // left as it is.
  void fail_request(Request* r, Status why = Status::peer_failed);
  // WEFT_TIMEOUT passed during a wait on r (a send or receive not complete): fails r with
  // Status::timed_out, the detail naming the peer and the communicator. True if it did.
  bool fail_timed_out(Request* r, const Comm* scope);

  // Revocation (MPIX_Comm_revoke): every later and pending operation on a revoked communicator
  // fails with Status::revoked, except the fault-tolerant agreements (coll/fault/). revoke()
  // marks c here and sends a notice to each live member (a message on the notice context, the
  // tag naming c's context id); members take notices in when they look for them:
  // poll_notices(), which the wait loops' checks run at each turn the bootstrap's
  // liveness check gives (every 20 ms while a rank waits in MPI), and the fault-tolerance calls
  // at once.
  void revoke(const Comm& c);
  bool revoked(const Comm& c) const;
  // Takes in revocation and failure notices; sends those of deaths found on this host.
  void poll_notices();
  // Failure notices: a death this rank found on its host (Bootstrap::failures_to_announce) is
  // sent, on the notice context, to every live rank of the other hosts, which mark the rank
  // failed as if they had seen it die: their launcher tells them nothing, and a rank waiting on
  // a live peer sends nothing that would break on the dead one. Sent without waiting.
  void send_failure_notices();
  // A communicator is freed: its context id may serve another one.
  void forget_revocation(const Comm& c);

  int progress();
  // Waits until everything this process queued for its peers has been handed over (finish
  // and acknowledgement cells included), so it can stop progressing (e.g. at finalize).
  void quiesce();
  // Transports UCX chose for the endpoint to a peer, e.g. "posix/memory cma/memory".
  std::string transports_to(int dest);
  // Every transport this process's UCX context can use, for weft_info.
  static std::string available_transports();

  // One-sided access over UCX RMA and atomics (pt2pt/rma.cpp), for rma/. Memory a peer may
  // access is registered (its packed remote key travels to the peers, which unpack it for
  // their endpoint to this rank). Put and get return once this rank's buffer may be reused
  // (put) or holds the data (get); a put is visible at the target only after rma_flush.
  struct RmaRegistration {
    void* memh = nullptr;           // ucp_mem_h
    std::vector<unsigned char> rkey;  // packed remote key
  };
  Status rma_register(void* base, size_t bytes, RmaRegistration* out);
  void rma_deregister(RmaRegistration* r);
  // A remote key of `peer` (job rank), for rma_put/get/atomic to it; release with rma_release.
  Status rma_unpack(int peer, const void* packed, size_t len, void** rkey);
  static void rma_release(void* rkey);
  Status rma_put(int peer, const void* buf, size_t bytes, uint64_t remote, void* rkey);
  Status rma_get(int peer, void* buf, size_t bytes, uint64_t remote, void* rkey);
  enum class RmaAtomic : uint8_t { add, band, bor, bxor, swap, cswap };
  // A fetching atomic on a 4- or 8-byte word: *result gets the old value. cswap compares with
  // *result and swaps in value when equal.
  Status rma_atomic(int peer, RmaAtomic op, const void* value, void* result, size_t size, uint64_t remote,
                    void* rkey);
  // Completes every put and atomic issued so far to `peer` (job rank; -1: every peer) at the
  // target.
  Status rma_flush(int peer);

  // WEFT_REQUIRE_FAST_PATH: a slower path is an error instead of a logged fallback.
  bool require_fast_path() const { return require_fast_path_; }
  bool process_fault_scope() const { return process_fault_scope_; }
  RequestPool& pool() { return pool_; }
  Bootstrap& boot() { return boot_; }
  Progress& progress_engine() { return progress_; }
  // The path point-to-point messages take, for logs and weft_info.
  std::string path_description() const;

 private:
  Transport(Bootstrap& boot, Progress& progress, RequestPool& pool);
  Status init(const TransportOptions& options);
  Status endpoint(int dest, void** ep);
  // Waits for a one-sided UCX request (a ucs_status_ptr_t) to `peer` (-1: any); rma.cpp.
  Status rma_wait(void* request, int peer, const char* what);
  // rma_put and rma_get: `issue` starts the UCX transfer on the endpoint to `peer`; rma.cpp.
  template <class Issue>
  Status rma_transfer(int peer, size_t bytes, void* rkey, const char* what, Issue issue);
  Status connect(int dest, void** ep);
  // A send UCX refused at once (st: a ucs_status_t); a broken endpoint marks dest failed.
  Status send_failed(int dest, int st);

  Bootstrap& boot_;
  Progress& progress_;
  RequestPool& pool_;
  std::unique_ptr<UcxService> ucx_;  // the process's UCX context and worker
  void* worker_ = nullptr;           // ucx_'s ucp_worker_h, kept here for the message paths
  std::vector<void*> eps_;   // ucp_ep_h per job rank, created lazily
  // Messages and bytes sent to each job rank, reported per peer and transport at INFO when
  // the transport closes (which path the traffic took, for users and tests).
  std::vector<Traffic> sent_;
  void count_sent(int dest, size_t bytes) {
    if (size_t(dest) >= sent_.size()) return;  // the call itself reports the bad rank
    ++sent_[size_t(dest)].messages;
    sent_[size_t(dest)].bytes += bytes;
  }
  std::vector<uint32_t> revoked_contexts_;
  struct FailureNotice {
    int32_t rank;  // the payload: the dead job rank
    Request request;
  };
  std::deque<std::unique_ptr<FailureNotice>> notices_;  // sent, not yet complete
  bool peer_error_mode_ = false;
  bool require_fast_path_ = false;
  bool process_fault_scope_ = false;
  // Registered one-sided regions: while there are any, progress also drives the UCX worker in
  // shared-memory mode, since peers' one-sided operations may need this rank's progress.
  int rma_regions_ = 0;
  bool rma_poller_ = false;  // the worker's poller for them is registered (shared-memory mode)
  std::unique_ptr<ShmEngine> shm_;  // weft's shared memory, for this node's ranks
  bool hybrid_ = false;             // shm_ for this node's ranks, UCX for the others
  // Whether messages to or from a job rank go through weft's shared memory.
  bool via_shm(int rank) const { return shm_ && (!hybrid_ || boot_.is_local(rank)); }
  Path path_to(int rank) const {
    return via_shm(rank) ? Path::shm : rank == boot_.rank() ? Path::self : Path::ucx;
  }
  Status choose_path(const TransportOptions& options, bool* use_shm);
  Status ucx_recv_message(void* buf, size_t bytes, void* message, Request* r);
  Status ucx_isend(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode, Request* r);
  Status ucx_send(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode, const Comm* scope);
  Status shm_send_queued(const void* buf, size_t bytes, int dest, uint64_t t, SendMode mode, const Comm* scope);
  Status irecv_routed(void* buf, size_t bytes, int source, uint64_t t, uint64_t mask, Request* r);
  // UCX generic datatype (ucp_datatype_t) of device buffers pipelined through pinned chunks;
  // 0 when that is not usable (device_staging_off_ says why).
  uint64_t device_dt_ = 0;
  std::string device_staging_off_;
  // A device buffer sent or received over UCX: takes its staging set (Request::device_staging)
  // and makes *ucx_buf the generic datatype's buffer, setting the datatype in *param.
  Status stage_device(Request* r, void* buf, size_t bytes, bool send, void* param, void** ucx_buf);

  // Hybrid mode: a wildcard receive is posted to the shared-memory engine and watched on UCX
  // (probed in posting order); receives from other nodes posted after a pending wildcard are
  // watched too instead of posted, so that a message both could take goes to the earlier one.
  struct Watched {
    Request* request;
    void* buf;
    size_t bytes;
    uint64_t tag, mask;
    bool wildcard;
  };
  std::deque<Watched> watched_;
  size_t pending_wildcards_ = 0;
  int resolve_watched();
  bool forget_watched(Request* r);
};

}  // namespace weft
