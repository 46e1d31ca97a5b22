// Bootstrap: who am I, who are my peers, and a key-value exchange (modex), through the PMIx
// client, or through a key-value store a launcher without PMIx hands over before init
// (include/weft/store.h: torchrun's TCP store, via torch_weft). Without either (no PMIX_RANK
// in the environment, no store) the process is a job of one.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/status.h"
#include "include/weft/store.h"

namespace weft {

// The store the next Bootstrap::init uses (a copy of *ops; null: none). The caller has checked
// it (weft_bootstrap_use_store).
void set_bootstrap_store(const weft_store_ops* ops);

class Bootstrap {
 public:
  static Status init(std::unique_ptr<Bootstrap>* out);
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  uint32_t node_id() const { return node_id_; }
  const std::string& hostname() const { return hostname_; }
  const std::vector<int>& local_peers() const { return local_peers_; }
  // The ranks on this host, as the launcher placed them (WEFT_FAKE_NODES does not split them):
  // they compete for its CPUs.
  const std::vector<int>& host_peers() const { return host_peers_; }
  // Whether a job rank runs on this node.
  bool is_local(int rank) const { return rank >= 0 && rank < size_ && local_mask_[size_t(rank)]; }
  bool singleton() const { return singleton_; }
  // WEFT_FAKE_NODES split this host into virtual nodes (traffic between them must not use
  // shared memory).
  bool fake_nodes() const { return fake_nodes_; }
  const char* launcher() const { return launcher_; }
  // Names this job among the jobs of the host (the PMIx namespace; a singleton's pid), for
  // names of node-wide resources such as shared-memory files.
  const std::string& job_id() const { return job_id_; }

  // Modex: publish a blob, make every rank's blobs visible, read a peer's blob.
  Status put(std::string_view key, const void* data, size_t len);
  Status exchange();
  // What every rank must share (pmix/job_agreement.h: weft's build, settings that must agree),
  // published before the first exchange. That exchange then compares every rank's with rank
  // 0's and fails on every rank (Status::mismatch, the detail naming each difference) if any
  // rank's differ.
  Status require_agreement(const std::string& encoded_facts);
  Status get(int rank, std::string_view key, std::vector<char>* out);
  // Node id of any rank of the job.
  Status node_of(int rank, uint32_t* node);

  // A job-wide barrier through the launcher (no data). It gives up, with Status::peer_failed
  // and a detail naming the rank, once a rank is known to have failed: the launcher would wait
  // for it forever. while_waiting runs every 10 ms of the wait (the transport takes in failure
  // notices there: a death on another host).
  Status barrier(const std::function<void()>& while_waiting = {});

  [[noreturn]] void abort(int code, const char* message);
  Status finalize();

  // Peer failure, as reported by the launcher's termination events. Set from PMIx's thread.
  bool peer_failed(int rank) const {
    return rank >= 0 && rank < size_ && failed_[size_t(rank)].load(std::memory_order_relaxed);
  }
  uint32_t failures_seen() const { return failures_.load(std::memory_order_acquire); }
  // Fault events so far: ranks found failed and communicators revoked (note_revocation). While
  // it is 0, the bindings and wait loops skip every failure and revocation check.
  uint32_t fault_events() const { return events_.load(std::memory_order_acquire); }
  void note_revocation() { events_.fetch_add(1, std::memory_order_release); }
  // The lowest job rank known to have failed, or -1.
  int first_failed() const;
  void mark_failed(int rank);
  // Deaths this rank found on its own host (the liveness poll) and has not yet told the ranks
  // of other hosts, whose launcher tells them nothing: the transport sends them notices.
  bool failures_to_announce() const { return !to_announce_.empty(); }
  std::vector<int> take_failures_to_announce() { return std::exchange(to_announce_, {}); }
  // Whether a job rank runs on this host (WEFT_FAKE_NODES's virtual nodes all do).
  bool on_this_host(int rank) const {
    return std::find(host_peers_.begin(), host_peers_.end(), rank) != host_peers_.end();
  }
  // Marks this rank as finalizing, through the launcher: from now on its exit is no failure.
  // A peer whose process is gone is taken to have failed only if it never made the mark.
  void announce_finalize();
  // PMIx reports the connection to its server lost (from PMIx's thread).
  void mark_launcher_lost() { launcher_lost_.store(true, std::memory_order_relaxed); }
  // Checks that the processes of this host's peers still exist (at most every 20 ms; cheap to
  // call from wait loops). Catches deaths the launcher does not report as events. Also checks
  // that the launcher is still there: a rank whose launcher is gone (its parent process changed,
  // or PMIx lost the connection to its server) exits at once, with a message.
  void poll_local_liveness() {
    if ((++liveness_calls_ & 255) == 0) [[unlikely]] liveness_due();  // inline: fast paths call it
  }
  // Set by each liveness check (every 20 ms while a rank waits in MPI), taken by the wait loops'
  // checks of the layers above, which then do their own periodic work at a point where they may
  // (the transport looks for revocation notices): true once per check.
  bool take_periodic_turn() {
    if (!periodic_turn_) [[likely]] return false;
    periodic_turn_ = false;
    return true;
  }
  // The same checks at once (on an error path, where a recent death may explain the error).
  void check_liveness_now() {
    check_launcher();
    check_liveness();
  }

  // Shared-memory files (names under /dev/shm). Every weft file of a job is named by
  // shm_name, which carries the job id, and is tracked from the moment its name is known until
  // it is unlinked: finalize, and a rank leaving because its launcher is gone, unlink what is
  // still tracked. A file this process creates is also registered with the launcher's PMIx
  // server for removal when the job ends, where the server supports it.
  std::string shm_name(std::string_view kind, std::string_view rest) const;
  void track_shm(const std::string& name, bool created);
  void untrack_shm(const std::string& name);
  void unlink_tracked_shm();

 private:
  Bootstrap() = default;
  Status init_pmix();
  Status init_store(const weft_store_ops& ops);
  // The store's operations on keys under "weft/", failures logged and set as the detail.
  Status store_set(const std::string& key, const void* data, size_t len);
  Status store_get(const std::string& key, std::vector<char>* out);
  Status store_has(const std::string& key, bool* exists);
  Status store_barrier(const std::function<void()>& while_waiting);
  // A barrier's periodic check while it waits (liveness, the launcher, while_waiting): the
  // lowest failed rank, or -1; and the error a barrier gives up with.
  int failed_while_waiting(const std::function<void()>& while_waiting);
  Status barrier_given_up(int dead, const char* which);
  void liveness_due();  // every 256th poll: the clock, and the checks every 20 ms
  void check_liveness();
  // Whether a rank made the finalize mark (asks the launcher's server, without waiting).
  bool announced_finalize(int rank);
  void check_launcher();
  [[noreturn]] void leave_orphaned(const char* why);
  // WEFT_FAKE_NODES: one host's ranks split into virtual nodes (node ids, local peers).
  Status split_into_fake_nodes(const char* value);

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  uint32_t node_id_ = 0;
  std::string hostname_;
  std::string job_id_;
  std::vector<int> local_peers_{0};
  std::vector<int> host_peers_{0};
  std::vector<bool> local_mask_;
  // Node id of every rank, read from PMIx once each (kUnknownNode until then); with
  // WEFT_FAKE_NODES, the virtual nodes, all set at init.
  static constexpr uint32_t kUnknownNode = UINT32_MAX;
  std::vector<uint32_t> node_ids_;
  bool fake_nodes_ = false;
  bool singleton_ = true;
  bool pmix_initialised_ = false;
  std::unique_ptr<weft_store_ops> store_;  // bootstrapping through a store
  uint64_t store_barriers_ = 0;            // barriers so far (every rank counts alike)
  bool agreement_pending_ = false;  // require_agreement published facts; the next exchange checks them
  Status check_agreement();
  const char* launcher_ = "none (singleton)";
  std::map<std::string, std::vector<char>, std::less<>> local_store_;  // singleton modex
  std::unique_ptr<std::atomic<bool>[]> failed_;
  std::atomic<uint32_t> failures_{0};
  std::atomic<uint32_t> events_{0};  // failures_ plus revocations
  struct LocalPeer { int rank; int pid; uint64_t start_time; bool departed = false; };
  std::vector<LocalPeer> local_pids_;
  std::vector<int> to_announce_;  // failures_to_announce  // this host's peers, filled on first poll, from the modex
  bool local_pids_loaded_ = false;
  uint64_t next_liveness_ns_ = 0;
  uint32_t liveness_calls_ = 0;
  bool periodic_turn_ = false;
  size_t event_handler_id_ = 0;
  bool event_handler_registered_ = false;
  size_t lost_handler_id_ = 0;
  bool lost_handler_registered_ = false;
  int launcher_pid_ = 0;  // the parent process at init: the launcher (or its node daemon)
  std::atomic<bool> launcher_lost_{false};  // PMIx lost the connection to its server
  std::vector<std::string> shm_files_;  // tracked shared-memory names
  struct PmixProc;
  std::unique_ptr<PmixProc> proc_;
};

}  // namespace weft
