#include "bootstrap.h"

#include <algorithm>

#include <pmix.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "job_agreement.h"
#include "runtime/config.h"
#include "runtime/log.h"

namespace weft {

struct Bootstrap::PmixProc {
  pmix_proc_t self;
};

namespace {

Status pmix_fail(const char* what, pmix_status_t rc) {
  std::string msg = std::string(what) + " failed: " + PMIx_Error_string(rc);
  WEFT_ERROR(Subsys::init, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::internal;
}

// The value of key for proc. With quiet, a key PMIx does not have is not logged (the caller
// has another way).
Status get_u32(const pmix_proc_t& proc, const char* key, uint32_t* out, bool quiet = false) {
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &val);
  if (rc == PMIX_ERR_NOT_FOUND && quiet) return Status::transport;
  if (rc != PMIX_SUCCESS) return pmix_fail(key, rc);
  Status st = Status::ok;
  switch (val->type) {
    case PMIX_UINT32: *out = val->data.uint32; break;
    case PMIX_UINT16: *out = val->data.uint16; break;
    case PMIX_INT: *out = uint32_t(val->data.integer); break;
    case PMIX_UINT64: *out = uint32_t(val->data.uint64); break;
    case PMIX_PROC_RANK: *out = val->data.rank; break;
    default: st = pmix_fail(key, PMIX_ERR_TYPE_MISMATCH);
  }
  PMIX_VALUE_RELEASE(val);
  return st;
}

constexpr const char* kPidKey = "weft.pid";
// This rank's node id (PMIX_NODEID), for peers whose launcher does not tell other nodes' ids.
constexpr const char* kNodeKey = "weft.node";
constexpr const char* kFinalizingKey = "weft.finalizing";
constexpr const char* kAgreementKey = "weft.agreement";
constexpr uint64_t kLivenessPeriodNs = 20'000'000;  // 20 ms between checks of local peers

// Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat): with the pid
// it identifies the process, so a recycled pid is not mistaken for the peer.
// Returns 0 if the process does not exist; sets *zombie when it has exited but is not reaped.
uint64_t process_start_time(int pid, bool* zombie) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');  // the command name may hold spaces
  if (!p) return 0;
  char state = 0;
  unsigned long long start = 0;
  // After ')': state (3), then fields 4..21, then starttime (22).
  if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
             &state, &start) != 2)
    return 0;
  if (zombie) *zombie = state == 'Z' || state == 'X';
  return start;
}

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

Bootstrap* g_event_target = nullptr;  // the PMIx event callback has no context pointer

void on_proc_event(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
                   void* cbdata) {
  int failed_rank = -1;
  for (size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
      failed_rank = int(info[i].value.data.proc->rank);
  }
  if (failed_rank < 0 && source) failed_rank = int(source->rank);
  if (g_event_target && failed_rank >= 0 && uint32_t(failed_rank) != PMIX_RANK_WILDCARD) {
    g_event_target->mark_failed(failed_rank);
    WEFT_WARN(Subsys::init, "launcher reports rank %d terminated (%s)", failed_rank,
              PMIx_Error_string(status));
  }
  if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

// The PMIx server (the launcher) is gone: the wait loops see it and the rank leaves.
void on_lost_server(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*, size_t,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  if (g_event_target) g_event_target->mark_launcher_lost();
  if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

// A launcher fence waited for without blocking in PMIx, so that the wait can give up when a
// rank dies. Whichever of the waiter (giving up) and the callback comes last frees it.
struct FenceWait {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false, abandoned = false;
  pmix_status_t status = PMIX_SUCCESS;
};

void fence_done(pmix_status_t status, void* cbdata) {
  auto* w = static_cast<FenceWait*>(cbdata);
  std::unique_lock lock(w->mutex);
  if (w->abandoned) {
    lock.unlock();
    delete w;
    return;
  }
  w->status = status;
  w->done = true;
  w->done_cv.notify_one();
}

// Whether the launcher refused a cleanup registration: later files are not offered to it.
std::atomic<bool> g_cleanup_refused{false};

void cleanup_registered(pmix_status_t status, pmix_info_t*, size_t, void* cbdata, pmix_release_cbfunc_t release,
                        void* release_data) {
  auto* request = static_cast<pmix_info_t*>(cbdata);
  PMIX_INFO_FREE(request, 1);
  if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED && !g_cleanup_refused.exchange(true))
    WEFT_INFO(Subsys::init, "the launcher does not remove files at the job's end (%s): weft removes its "
              "shared-memory files itself", PMIx_Error_string(status));
  if (release) release(release_data);
}

std::unique_ptr<weft_store_ops> g_store;  // set_bootstrap_store: for the next init

// The longest value weft reads from a store (a modex blob: transport addresses, agreed facts).
constexpr size_t kStoreValueMax = size_t(1) << 20;

}  // namespace

void set_bootstrap_store(const weft_store_ops* ops) {
  g_store = ops ? std::make_unique<weft_store_ops>(*ops) : nullptr;
}

Status Bootstrap::init(std::unique_ptr<Bootstrap>* out) {
  std::unique_ptr<Bootstrap> b(new Bootstrap());
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  b->hostname_ = host;
  if (getenv("PMIX_RANK") == nullptr && !g_store) {
    WEFT_INFO(Subsys::init, "no launcher found (PMIX_RANK unset): running as a singleton");
    b->job_id_ = "single" + std::to_string(getpid());
  } else {
    if (g_store) WEFT_TRY(b->init_store(*g_store));
    else WEFT_TRY(b->init_pmix());
    // Published with the modex so node-local peers can check that this process still exists.
    uint64_t self[2] = {uint64_t(getpid()), process_start_time(getpid(), nullptr)};
    WEFT_TRY(b->put(kPidKey, self, sizeof(self)));
    WEFT_TRY(b->put(kNodeKey, &b->node_id_, sizeof b->node_id_));
    // Unset or empty: no split (the registered default, 1, says the same).
    const Config& cfg = process_config();
    if (const std::string fake(cfg.value("WEFT_FAKE_NODES")); cfg.is_set("WEFT_FAKE_NODES") && !fake.empty())
      WEFT_TRY(b->split_into_fake_nodes(fake.c_str()));
  }
  b->local_mask_.assign(size_t(b->size_), false);
  for (int r : b->local_peers_)
    if (r >= 0 && r < b->size_) b->local_mask_[size_t(r)] = true;
  b->failed_.reset(new std::atomic<bool>[size_t(b->size_)]);
  for (int i = 0; i < b->size_; ++i) b->failed_[size_t(i)] = false;
  *out = std::move(b);
  return Status::ok;
}

Status Bootstrap::init_pmix() {
  proc_ = std::make_unique<PmixProc>();
  pmix_status_t rc = PMIx_Init(&proc_->self, nullptr, 0);
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Init", rc);
  pmix_initialised_ = true;
  singleton_ = false;
  launcher_ = getenv("SLURM_JOB_ID") && !getenv("OMPI_COMM_WORLD_SIZE") ? "slurm (pmix)"
                                                                          : "pmix";
  if (getenv("OMPI_COMM_WORLD_SIZE")) launcher_ = "mpirun (pmix)";
  rank_ = int(proc_->self.rank);
  job_id_ = proc_->self.nspace;

  pmix_proc_t job;
  PMIX_PROC_CONSTRUCT(&job);
  PMIX_LOAD_PROCID(&job, proc_->self.nspace, PMIX_RANK_WILDCARD);
  uint32_t v = 0;
  WEFT_TRY(get_u32(job, PMIX_JOB_SIZE, &v));
  size_ = int(v);
  WEFT_TRY(get_u32(proc_->self, PMIX_LOCAL_RANK, &v));
  local_rank_ = int(v);
  WEFT_TRY(get_u32(job, PMIX_LOCAL_SIZE, &v));
  local_size_ = int(v);
  WEFT_TRY(get_u32(proc_->self, PMIX_NODEID, &node_id_));

  pmix_value_t* val = nullptr;
  if (PMIx_Get(&proc_->self, PMIX_HOSTNAME, nullptr, 0, &val) == PMIX_SUCCESS) {
    if (val->type == PMIX_STRING && val->data.string) hostname_ = val->data.string;
    PMIX_VALUE_RELEASE(val);
  }
  local_peers_.clear();
  if (PMIx_Get(&job, PMIX_LOCAL_PEERS, nullptr, 0, &val) == PMIX_SUCCESS) {
    if (val->type == PMIX_STRING && val->data.string) {
      for (const char* p = val->data.string; *p;) {
        local_peers_.push_back(atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    }
    PMIX_VALUE_RELEASE(val);
  }
  if (local_peers_.empty()) local_peers_.push_back(rank_);
  host_peers_ = local_peers_;

  // Termination events, so waits on a dead peer fail instead of hanging.
  g_event_target = this;
  pmix_status_t codes[] = {PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_ABORTED,
                           PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_EXIT_NONZERO_TERM,
                           PMIX_PROC_TERMINATED};
  rc = PMIx_Register_event_handler(codes, sizeof(codes) / sizeof(codes[0]), nullptr, 0,
                                   on_proc_event, nullptr, nullptr);
  if (rc < 0) {
    WEFT_INFO(Subsys::init, "peer termination events unavailable: %s", PMIx_Error_string(rc));
  } else {
    event_handler_id_ = size_t(rc);
    event_handler_registered_ = true;
  }
  // A rank outliving its launcher (killed, say) would wait forever: it watches for the loss of
  // the PMIx server and for a change of its parent process.
  pmix_status_t lost[] = {PMIX_ERR_LOST_CONNECTION};
  rc = PMIx_Register_event_handler(lost, 1, nullptr, 0, on_lost_server, nullptr, nullptr);
  if (rc < 0) {
    WEFT_INFO(Subsys::init, "launcher connection events unavailable: %s", PMIx_Error_string(rc));
  } else {
    lost_handler_id_ = size_t(rc);
    lost_handler_registered_ = true;
  }
  launcher_pid_ = int(getppid());
  WEFT_INFO(Subsys::init, "bootstrap through %s: rank %d of %d, local %d of %d, node %u (%s)",
            launcher_, rank_, size_, local_rank_, local_size_, node_id_, hostname_.c_str());
  return Status::ok;
}

Bootstrap::~Bootstrap() {
  if (pmix_initialised_) (void)finalize();
}

Status Bootstrap::put(std::string_view key, const void* data, size_t len) {
  if (store_) return store_set("m/" + std::to_string(rank_) + "/" + std::string(key), data, len);
  if (singleton_) {
    local_store_[std::string(key)].assign(static_cast<const char*>(data),
                                          static_cast<const char*>(data) + len);
    return Status::ok;
  }
  pmix_value_t val;
  PMIX_VALUE_CONSTRUCT(&val);
  val.type = PMIX_BYTE_OBJECT;
  val.data.bo.bytes = static_cast<char*>(const_cast<void*>(data));
  val.data.bo.size = len;
  std::string k(key);
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &val);
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Put", rc);
  return Status::ok;
}

Status Bootstrap::exchange() {
  if (singleton_) return Status::ok;
  if (store_) {  // every put is in the store already: a barrier makes them all there
    WEFT_TRY(store_barrier({}));
    return agreement_pending_ ? check_agreement() : Status::ok;
  }
  pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Commit", rc);
  pmix_info_t info;
  bool collect = true;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  rc = PMIx_Fence(nullptr, 0, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Fence", rc);
  if (agreement_pending_) return check_agreement();
  return Status::ok;
}

Status Bootstrap::require_agreement(const std::string& encoded_facts) {
  agreement_pending_ = !singleton_;
  return put(kAgreementKey, encoded_facts.data(), encoded_facts.size());
}

Status Bootstrap::check_agreement() {
  agreement_pending_ = false;
  std::vector<std::string> facts(static_cast<size_t>(size_));
  std::vector<char> blob;
  for (int r = 0; r < size_; ++r) {
    // A rank that published nothing runs a library without the check: an older weft.
    if (get(r, kAgreementKey, &blob) == Status::ok) facts[size_t(r)].assign(blob.begin(), blob.end());
    else facts[size_t(r)] = "weft=(a build that publishes no facts)\n";
  }
  const std::string differences = describe_disagreement(facts);
  if (differences.empty()) return Status::ok;
  const std::string msg = "the ranks of this job disagree on what must be the same everywhere: " + differences;
  WEFT_ERROR(Subsys::init, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::mismatch;
}

Status Bootstrap::get(int rank, std::string_view key, std::vector<char>* out) {
  if (store_) {
    if (rank < 0 || rank >= size_) return Status::invalid_rank;
    // A key the peer never put is not found (not waited for: the exchange came before).
    const std::string k = "m/" + std::to_string(rank) + "/" + std::string(key);
    bool published = false;
    WEFT_TRY(store_has(k, &published));
    if (!published) {
      set_error_detail("rank " + std::to_string(rank) + " published no " + std::string(key) + " in the store");
      return Status::transport;
    }
    return store_get(k, out);
  }
  if (singleton_) {
    auto it = local_store_.find(key);
    if (it == local_store_.end()) return pmix_fail("modex lookup", PMIX_ERR_NOT_FOUND);
    *out = it->second;
    return Status::ok;
  }
  pmix_proc_t peer;
  PMIX_PROC_CONSTRUCT(&peer);
  PMIX_LOAD_PROCID(&peer, proc_->self.nspace, pmix_rank_t(rank));
  pmix_value_t* val = nullptr;
  std::string k(key);
  pmix_status_t rc = PMIx_Get(&peer, k.c_str(), nullptr, 0, &val);
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Get of a peer's address", rc);
  if (val->type != PMIX_BYTE_OBJECT) {
    PMIX_VALUE_RELEASE(val);
    return pmix_fail("PMIx_Get of a peer's address", PMIX_ERR_TYPE_MISMATCH);
  }
  out->assign(val->data.bo.bytes, val->data.bo.bytes + val->data.bo.size);
  PMIX_VALUE_RELEASE(val);
  return Status::ok;
}

Status Bootstrap::split_into_fake_nodes(const char* value) {
  char* end = nullptr;
  const long n = strtol(value, &end, 10);
  auto fail = [](const std::string& msg) {
    WEFT_ERROR(Subsys::init, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::invalid_arg;
  };
  if (!end || *end || n < 1) return fail(std::string("WEFT_FAKE_NODES='") + value + "' is not a positive number");
  if (n == 1) return Status::ok;
  if (local_size_ != size_)
    return fail("WEFT_FAKE_NODES splits the ranks of one host, and this job spans several nodes");
  if (n > size_)
    return fail("WEFT_FAKE_NODES=" + std::to_string(n) + " asks for more virtual nodes than the job's " +
                std::to_string(size_) + " ranks");
  // Consecutive blocks of the host's ranks (in local-rank order) form the virtual nodes.
  std::vector<int> host = local_peers_;
  std::sort(host.begin(), host.end());
  node_ids_.assign(size_t(size_), 0);
  for (size_t i = 0; i < host.size(); ++i)
    if (host[i] >= 0 && host[i] < size_) node_ids_[size_t(host[i])] = uint32_t(i * size_t(n) / host.size());
  fake_nodes_ = true;
  node_id_ = node_ids_[size_t(rank_)];
  local_peers_.clear();
  for (int r : host)
    if (node_ids_[size_t(r)] == node_id_) local_peers_.push_back(r);
  local_rank_ = int(std::find(local_peers_.begin(), local_peers_.end(), rank_) - local_peers_.begin());
  local_size_ = int(local_peers_.size());
  WEFT_INFO(Subsys::init, "WEFT_FAKE_NODES=%ld: rank %d is local rank %d of %d on virtual node %u", n, rank_,
            local_rank_, local_size_, node_id_);
  return Status::ok;
}

Status Bootstrap::node_of(int rank, uint32_t* node) {
  if (store_ && rank >= 0 && rank < size_) {  // all known since init
    *node = node_ids_[size_t(rank)];
    return Status::ok;
  }
  if (singleton_ || rank == rank_) {
    *node = node_id_;
    return Status::ok;
  }
  if (rank < 0 || rank >= size_) return Status::invalid_rank;
  if (node_ids_.empty()) node_ids_.assign(size_t(size_), kUnknownNode);
  uint32_t& known = node_ids_[size_t(rank)];
  if (known == kUnknownNode) {
    pmix_proc_t peer;
    PMIX_PROC_CONSTRUCT(&peer);
    PMIX_LOAD_PROCID(&peer, proc_->self.nspace, pmix_rank_t(rank));
    uint32_t id = 0;
    if (get_u32(peer, PMIX_NODEID, &id, true) != Status::ok) {
      // Open MPI 4.1's mpirun tells no node id of ranks on other hosts: the one the rank
      // published with the modex (there after the exchange).
      std::vector<char> blob;
      WEFT_TRY(get(rank, kNodeKey, &blob));
      if (blob.size() != sizeof id) return pmix_fail("a peer's node id", PMIX_ERR_TYPE_MISMATCH);
      memcpy(&id, blob.data(), sizeof id);
    }
    known = id;
  }
  *node = known;
  return Status::ok;
}

Status Bootstrap::barrier(const std::function<void()>& while_waiting) {
  if (singleton_) return Status::ok;
  if (store_) return store_barrier(while_waiting);
  auto* w = new FenceWait;
  pmix_status_t rc = PMIx_Fence_nb(nullptr, 0, nullptr, 0, fence_done, w);
  if (rc == PMIX_OPERATION_SUCCEEDED) {
    delete w;
    return Status::ok;
  }
  if (rc != PMIX_SUCCESS) {
    delete w;
    return pmix_fail("PMIx_Fence_nb", rc);
  }
  // Ranks that never arrive (dead) would hold the fence forever: look for failures while
  // waiting, every 10 ms, without spinning (the others may take long to get here).
  std::unique_lock lock(w->mutex);
  while (!w->done) {
    if (w->done_cv.wait_for(lock, std::chrono::milliseconds(10), [w] { return w->done; })) break;
    lock.unlock();
    const int dead = failed_while_waiting(while_waiting);
    lock.lock();
    if (dead >= 0 && !w->done) {
      w->abandoned = true;  // the callback frees it, if it ever comes
      return barrier_given_up(dead, "launcher");
    }
  }
  rc = w->status;
  lock.unlock();
  delete w;
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Fence", rc);
  return Status::ok;
}

void Bootstrap::abort(int code, const char* message) {
  unlink_tracked_shm();  // the job ends: the other ranks are killed
  if (pmix_initialised_) {
    PMIx_Abort(code, message, nullptr, 0);
  }
  fflush(stdout);
  fflush(stderr);
  _exit(code == 0 ? 1 : code);
}

Status Bootstrap::finalize() {
  if (!pmix_initialised_) return Status::ok;
  if (event_handler_registered_) {
    PMIx_Deregister_event_handler(event_handler_id_, nullptr, nullptr);
    event_handler_registered_ = false;
  }
  if (lost_handler_registered_) {
    PMIx_Deregister_event_handler(lost_handler_id_, nullptr, nullptr);
    lost_handler_registered_ = false;
  }
  g_event_target = nullptr;
  pmix_initialised_ = false;
  pmix_status_t rc = PMIx_Finalize(nullptr, 0);
  if (rc != PMIX_SUCCESS) return pmix_fail("PMIx_Finalize", rc);
  return Status::ok;
}

void Bootstrap::liveness_due() {
  if (singleton_) return;
  uint64_t now = monotonic_ns();
  if (now < next_liveness_ns_) return;
  next_liveness_ns_ = now + kLivenessPeriodNs;
  check_launcher();
  check_liveness();
  periodic_turn_ = true;
}

// Every process of this host, not only of this (virtual) node: /proc shows them all.
void Bootstrap::check_liveness() {
  if (singleton_ || host_peers_.size() <= 1) return;
  if (!local_pids_loaded_) {
    // Through a store, a peer's pid may not be there yet (a barrier before the first
    // exchange): try again at the next check until every peer's is.
    bool all = true;
    local_pids_.clear();
    for (int peer : host_peers_) {
      if (peer == rank_) continue;
      std::vector<char> blob;
      if (get(peer, kPidKey, &blob) != Status::ok || blob.size() != 2 * sizeof(uint64_t)) {
        all = false;
        continue;
      }
      uint64_t v[2];
      memcpy(v, blob.data(), sizeof(v));
      local_pids_.push_back({peer, int(v[0]), v[1]});
    }
    local_pids_loaded_ = all || !store_;
  }
  for (LocalPeer& p : local_pids_) {
    if (p.departed || peer_failed(p.rank)) continue;
    bool zombie = false;
    uint64_t start = process_start_time(p.pid, &zombie);
    if (start == 0 || start != p.start_time || zombie) {
      if (announced_finalize(p.rank)) {  // it left after MPI_Finalize: no failure
        p.departed = true;
        WEFT_INFO(Subsys::init, "rank %d (pid %d on this host) has exited after finalize", p.rank, p.pid);
        continue;
      }
      WEFT_WARN(Subsys::init, "rank %d (pid %d on this host) has terminated", p.rank, p.pid);
      mark_failed(p.rank);
      if (host_peers_.size() < size_t(size_)) to_announce_.push_back(p.rank);
    }
  }
}

void Bootstrap::announce_finalize() {
  if (store_) {
    const uint8_t yes = 1;
    (void)store_set("fin/" + std::to_string(rank_), &yes, 1);
    return;
  }
  if (singleton_ || !pmix_initialised_) return;
  const uint8_t yes = 1;
  // Committed before PMIx_Finalize, whose answer from the server comes after: by the time
  // this process is gone, the server holds the mark.
  if (put(kFinalizingKey, &yes, 1) == Status::ok) (void)PMIx_Commit();
}

bool Bootstrap::announced_finalize(int rank) {
  if (store_) {
    // Quiet: liveness checks ask again and again, and at a job's end the store may be gone
    // (a failed check counts as no mark).
    const std::string k = "weft/fin/" + std::to_string(rank);
    int found = 0;
    return store_->check(store_->ctx, k.c_str(), &found) == 0 && found != 0;
  }
  if (singleton_ || !pmix_initialised_) return false;
  pmix_proc_t peer;
  PMIX_PROC_CONSTRUCT(&peer);
  PMIX_LOAD_PROCID(&peer, proc_->self.nspace, pmix_rank_t(rank));
  pmix_info_t info;
  bool immediate = true;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &immediate, PMIX_BOOL);
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(&peer, kFinalizingKey, &info, 1, &val);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS) return false;
  PMIX_VALUE_RELEASE(val);
  return true;
}

void Bootstrap::check_launcher() {
  if (singleton_) return;
  if (launcher_lost_.load(std::memory_order_relaxed)) leave_orphaned("the connection to its pmix server is lost");
  if (launcher_pid_ > 1 && int(getppid()) != launcher_pid_) leave_orphaned("its parent process (the launcher) has exited");
}

void Bootstrap::leave_orphaned(const char* why) {
  WEFT_ERROR(Subsys::init, "rank %d: %s; the job is over, exiting", rank_, why);
  fprintf(stderr, "weft: rank %d (pid %d): %s; the job is over, exiting\n", rank_, int(getpid()), why);
  fflush(stderr);
  unlink_tracked_shm();
  _exit(1);
}

int Bootstrap::first_failed() const {
  if (failures_seen() == 0) return -1;
  for (int r = 0; r < size_; ++r)
    if (peer_failed(r)) return r;
  return -1;
}

std::string Bootstrap::shm_name(std::string_view kind, std::string_view rest) const {
  // Shared-memory names allow no '/' after the first character.
  std::string clean;
  for (char ch : job_id_.substr(0, 96)) clean += isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return "/weft-" + std::string(kind) + "-" + clean + "-" + std::string(rest);
}

void Bootstrap::track_shm(const std::string& name, bool created) {
  if (std::find(shm_files_.begin(), shm_files_.end(), name) == shm_files_.end()) shm_files_.push_back(name);
  if (!created || !pmix_initialised_ || g_cleanup_refused.load(std::memory_order_relaxed)) return;
  // The launcher's PMIx server removes the file when the job's namespace ends, even if no rank
  // of the job lives to do it. The request is kept until the answer comes.
  const std::string path = "/dev/shm" + name;
  pmix_proc_t job;
  PMIX_PROC_CONSTRUCT(&job);
  PMIX_LOAD_PROCID(&job, proc_->self.nspace, PMIX_RANK_WILDCARD);
  pmix_info_t* request = nullptr;
  PMIX_INFO_CREATE(request, 1);
  PMIX_INFO_LOAD(request, PMIX_REGISTER_CLEANUP, path.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_Job_control_nb(&job, 1, request, 1, cleanup_registered, request);
  if (rc != PMIX_SUCCESS) {
    PMIX_INFO_FREE(request, 1);
    if (!g_cleanup_refused.exchange(true))
      WEFT_INFO(Subsys::init, "the launcher does not remove files at the job's end (%s): weft removes its "
                "shared-memory files itself", PMIx_Error_string(rc));
  }
}

void Bootstrap::untrack_shm(const std::string& name) {
  auto it = std::find(shm_files_.begin(), shm_files_.end(), name);
  if (it != shm_files_.end()) shm_files_.erase(it);
}

void Bootstrap::unlink_tracked_shm() {
  for (const std::string& name : shm_files_)
    if (shm_unlink(name.c_str()) == 0) WEFT_INFO(Subsys::init, "removed shared-memory file %s", name.c_str());
  shm_files_.clear();
}

void Bootstrap::mark_failed(int rank) {
  if (rank < 0 || rank >= size_) return;
  if (!failed_[size_t(rank)].exchange(true)) {
    failures_.fetch_add(1, std::memory_order_release);
    events_.fetch_add(1, std::memory_order_release);
  }
}


// Bootstrap through a store (include/weft/store.h): rank and size as given, every rank's host
// name through the store (ranks of one host form a node, numbered in order of their lowest
// rank), a job id that rank 0 makes, and the launcher (torchrun's agent) as the parent.
Status Bootstrap::init_store(const weft_store_ops& ops) {
  store_ = std::make_unique<weft_store_ops>(ops);
  singleton_ = false;
  launcher_ = "a key-value store (no PMIx)";
  rank_ = ops.rank;
  size_ = ops.size;
  if (rank_ == 0) {
    const std::string id = "st" + std::to_string(getpid()) + "x" + std::to_string(monotonic_ns() % 1000000007ull);
    WEFT_TRY(store_set("job", id.data(), id.size()));
  }
  std::vector<char> blob;
  WEFT_TRY(store_get("job", &blob));
  job_id_.assign(blob.begin(), blob.end());
  if (job_id_.empty() || job_id_.size() > 64) {
    set_error_detail("the store's job id is not 1 to 64 bytes");
    return Status::internal;
  }
  WEFT_TRY(store_set("host/" + std::to_string(rank_), hostname_.data(), hostname_.size()));
  WEFT_TRY(store_barrier({}));
  std::vector<std::string> hosts(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    WEFT_TRY(store_get("host/" + std::to_string(r), &blob));
    if (blob.empty() || blob.size() > 255) {
      set_error_detail("rank " + std::to_string(r) + "'s host name in the store is not 1 to 255 bytes");
      return Status::internal;
    }
    hosts[size_t(r)].assign(blob.begin(), blob.end());
  }
  node_ids_.assign(size_t(size_), 0);
  std::vector<std::string> seen;
  for (int r = 0; r < size_; ++r) {
    auto it = std::find(seen.begin(), seen.end(), hosts[size_t(r)]);
    node_ids_[size_t(r)] = uint32_t(it - seen.begin());
    if (it == seen.end()) seen.push_back(hosts[size_t(r)]);
  }
  node_id_ = node_ids_[size_t(rank_)];
  local_peers_.clear();
  for (int r = 0; r < size_; ++r)
    if (node_ids_[size_t(r)] == node_id_) local_peers_.push_back(r);
  host_peers_ = local_peers_;
  local_rank_ = int(std::find(local_peers_.begin(), local_peers_.end(), rank_) - local_peers_.begin());
  local_size_ = int(local_peers_.size());
  launcher_pid_ = int(getppid());
  WEFT_INFO(Subsys::init, "bootstrap through %s: rank %d of %d, local %d of %d, node %u (%s), job %s", launcher_,
            rank_, size_, local_rank_, local_size_, node_id_, hostname_.c_str(), job_id_.c_str());
  return Status::ok;
}

namespace {

Status store_fail(const char* what, const std::string& key) {
  const std::string msg = std::string("the bootstrap store's ") + what + " of " + key + " failed";
  WEFT_ERROR(Subsys::init, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::transport;
}

struct StoreSink {
  std::vector<char>* out;
  bool got = false, too_long = false, null_value = false;
};

void store_sink(void* ctx, const void* value, size_t len) {
  auto* s = static_cast<StoreSink*>(ctx);
  s->got = true;
  s->too_long = len > kStoreValueMax;
  s->null_value = len && !value;
  if (s->too_long || s->null_value) return;
  s->out->assign(static_cast<const char*>(value), static_cast<const char*>(value) + len);
}

}  // namespace

Status Bootstrap::store_set(const std::string& key, const void* data, size_t len) {
  const std::string k = "weft/" + key;
  if (store_->set(store_->ctx, k.c_str(), data, len) != 0) return store_fail("set", k);
  return Status::ok;
}

Status Bootstrap::store_get(const std::string& key, std::vector<char>* out) {
  const std::string k = "weft/" + key;
  StoreSink sink{out};
  out->clear();
  if (store_->get(store_->ctx, k.c_str(), store_sink, &sink) != 0 || !sink.got) return store_fail("get", k);
  if (sink.too_long || sink.null_value) {
    set_error_detail("the bootstrap store's value of " + k +
                     (sink.too_long ? " is longer than " + std::to_string(kStoreValueMax) + " bytes"
                                    : std::string(" came as a null pointer with a non-zero length")));
    return Status::internal;
  }
  return Status::ok;
}

Status Bootstrap::store_has(const std::string& key, bool* exists) {
  const std::string k = "weft/" + key;
  int found = 0;
  if (store_->check(store_->ctx, k.c_str(), &found) != 0) return store_fail("check", k);
  *exists = found != 0;
  return Status::ok;
}

// Every rank adds one to the barrier's counter; the last to arrive sets its done key, which
// every rank polls without blocking, so the wait can give up on a dead peer (the same checks,
// every 10 ms, as the PMIx fence's).
Status Bootstrap::store_barrier(const std::function<void()>& while_waiting) {
  const std::string key = "b/" + std::to_string(store_barriers_++);
  const std::string k = "weft/" + key;
  long long arrived = 0;
  if (store_->add(store_->ctx, k.c_str(), 1, &arrived) != 0) return store_fail("add", k);
  // Outside 1..size no rank sees the last arrival, so none would ever set the done key.
  if (arrived < 1 || arrived > size_) {
    const std::string msg = "the bootstrap store's counter " + k + " is " + std::to_string(arrived) +
                            " after this rank's arrival, outside 1 to " + std::to_string(size_) +
                            ": the store is not fresh for this job";
    WEFT_ERROR(Subsys::init, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::internal;
  }
  if (arrived == size_) {
    const uint8_t yes = 1;
    WEFT_TRY(store_set(key + "/done", &yes, 1));
    return Status::ok;
  }
  const std::string done_k = k + "/done";
  uint64_t next_check = monotonic_ns() + 10'000'000;
  for (unsigned rounds = 0;; ++rounds) {
    // A check that fails (the store is gone) would fail forever: give up rather than spin.
    int done = 0;
    if (store_->check(store_->ctx, done_k.c_str(), &done) != 0) return store_fail("check", done_k);
    if (done) return Status::ok;
    std::this_thread::sleep_for(std::chrono::microseconds(rounds < 100 ? 50 : 1000));
    if (monotonic_ns() < next_check) continue;
    next_check = monotonic_ns() + 10'000'000;
    if (const int dead = failed_while_waiting(while_waiting); dead >= 0) return barrier_given_up(dead, "store");
  }
}

int Bootstrap::failed_while_waiting(const std::function<void()>& while_waiting) {
  check_liveness();
  check_launcher();
  if (while_waiting) while_waiting();
  return first_failed();
}

Status Bootstrap::barrier_given_up(int dead, const char* which) {
  const std::string msg = "rank " + std::to_string(dead) + " has failed: the " + which + " barrier is given up";
  WEFT_INFO(Subsys::init, "%s", msg.c_str());
  set_error_detail(msg);
  return Status::peer_failed;
}

}  // namespace weft
