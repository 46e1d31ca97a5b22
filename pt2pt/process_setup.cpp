// Process start-up below the bindings: settings to options, the wait policy, predefined
// communicator views, orphaned requests.
#include "pt2pt/process_setup.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "pmix/job_agreement.h"
#include "runtime/cuda_ipc.h"
#include "runtime/device_staging.h"
#include "runtime/memkind.h"
#include "runtime/startup_phases.h"
#include "runtime/wait_deadline.h"

namespace weft {

namespace {

constexpr const char* kCpusKey = "weft.cpus";

}  // namespace

Status log_settings(const Config& cfg, LogSettings* out) {
  (void)parse_log_level(cfg.value("WEFT_DEBUG"), &out->level);
  std::string bad;
  if (!cfg.value("WEFT_DEBUG_SUBSYS").empty() &&
      !parse_subsys_list(cfg.value("WEFT_DEBUG_SUBSYS"), &out->subsys_mask, &bad)) {
    set_error_detail("unknown subsystem '" + bad + "' in WEFT_DEBUG_SUBSYS");
    return Status::invalid_arg;
  }
  out->file_pattern = std::string(cfg.value("WEFT_DEBUG_FILE"));
  return Status::ok;
}

Status start_wait_policy(const Config& cfg, Bootstrap& boot, Progress& progress, CpuSet* cpus) {
  *cpus = own_cpus();
  WaitPolicy wp = boot.host_peers().size() > size_t(cpu_count(*cpus)) ? WaitPolicy::yield : WaitPolicy::spin_then_yield;
  progress.configure(wp, uint32_t(cfg.integer("WEFT_SPIN_COUNT")));
  return boot.put(kCpusKey, cpus->data(), cpus->size() * sizeof(uint64_t));
}

std::vector<CpuSet> host_peer_bindings(Bootstrap& boot) {
  std::vector<CpuSet> peers;
  for (int r : boot.host_peers()) {
    if (r == boot.rank()) continue;
    std::vector<char> blob;
    constexpr size_t kMaxBytes = 16384;  // 131,072 CPUs
    if (boot.get(r, kCpusKey, &blob) != Status::ok || blob.empty() || blob.size() % sizeof(uint64_t) ||
        blob.size() > kMaxBytes) {
      WEFT_INFO(Subsys::init, "rank %d published no binding: taken to share every CPU", r);
      blob.assign(kMaxBytes, char(0xff));
    }
    CpuSet peer(blob.size() / sizeof(uint64_t));
    memcpy(peer.data(), blob.data(), blob.size());
    peers.push_back(std::move(peer));
  }
  return peers;
}

void configure_wait_policy(const Config& cfg, Bootstrap& boot, const CpuSet& mine, Progress& progress) {
  const std::vector<CpuSet> peers = host_peer_bindings(boot);
  const WaitChoice c = choose_wait_policy(mine, peers);
  const std::string_view policy = cfg.value("WEFT_WAIT_POLICY");
  const WaitPolicy wp = policy == "yield"  ? WaitPolicy::yield
                        : policy == "spin" ? WaitPolicy::spin_then_yield
                                           : c.policy;
  progress.configure(wp, uint32_t(cfg.integer("WEFT_SPIN_COUNT")));
  WEFT_INFO(Subsys::init, "wait policy %s%s (%d of the host's %zu ranks run on the %d cpu%s of bindings overlapping this rank's)",
            wp == WaitPolicy::yield ? "yield" : "spin then yield", policy == "auto" ? "" : " (WEFT_WAIT_POLICY)",
            c.competing_ranks, boot.host_peers().size(), c.cpus, c.cpus == 1 ? "" : "s");
}

TransportOptions transport_options(const Config& cfg, const Bootstrap& boot) {
  TransportOptions topts;
  topts.thread_multiple = false;
  topts.peer_error_mode = cfg.value("WEFT_UCX_ERR_MODE") == "peer";
  topts.require_fast_path = cfg.boolean("WEFT_REQUIRE_FAST_PATH");
  topts.process_fault_scope = cfg.value("WEFT_FAULT_SCOPE") == "process";
  std::string_view path = cfg.value("WEFT_PT2PT");
  topts.path = path == "ucx" ? Pt2ptPath::ucx : path == "shm" ? Pt2ptPath::shm : Pt2ptPath::automatic;
  topts.shm_cells = uint32_t(cfg.integer("WEFT_SHM_CELLS"));
  // 16 KiB cells keep messages up to 16 KiB eager (one copy, no cma system call); rings take
  // cells x size per pair of local ranks, so crowded nodes fall back to 4 KiB cells.
  constexpr int kLargeCellsUpTo = 32;
  topts.shm_cell_size = uint32_t(cfg.size("WEFT_SHM_CELL_SIZE"));
  if (!cfg.is_set("WEFT_SHM_CELL_SIZE") && boot.local_size() > kLargeCellsUpTo) {
    topts.shm_cell_size = 4096;
    WEFT_INFO(Subsys::init, "%d ranks on this node: 4 KiB shared-memory cells", boot.local_size());
  }
  topts.shm_split_min = cfg.size("WEFT_SHM_SPLIT_MIN");
  return topts;
}

Comm predefined_comm(Bootstrap& b, uint32_t context, bool self, const char* name, int handle) {
  Comm c;
  c.context_id = context;
  c.name = name;
  c.handle = handle;
  c.rank = self ? 0 : b.rank();
  c.size = self ? 1 : b.size();
  if (self) c.world_ranks = {b.rank()};
  else {
    c.world_ranks.resize(size_t(b.size()));
    for (int i = 0; i < b.size(); ++i) c.world_ranks[size_t(i)] = i;
  }
  c.single_node = self || b.local_size() == b.size();
  c.nodes = node_ids(b, c.world_ranks);
  return c;
}

std::vector<uint32_t> node_ids(Bootstrap& boot, const std::vector<int>& world_ranks) {
  std::vector<uint32_t> nodes(world_ranks.size(), 0);
  for (size_t i = 0; i < world_ranks.size(); ++i)
    if (boot.node_of(world_ranks[i], &nodes[i]) != Status::ok) return {};  // unknown: no hierarchy
  return nodes;
}

namespace {

// Settings whose values every rank must share: ring and segment layouts, the path and node
// split, collective choices (ranks choosing different algorithms would never match), offload,
// one-sided paths.
constexpr const char* kSettingsThatMustAgree[] = {
    "WEFT_PT2PT", "WEFT_SHM_CELLS", "WEFT_SHM_CELL_SIZE", "WEFT_SHM_SPLIT_MIN", "WEFT_FAKE_NODES",
    "WEFT_UCX_ERR_MODE", "WEFT_COLL_SHM_SEGMENT", "WEFT_COLL_SHM_SLOT", "WEFT_COLL_SHM_SLOTS", "WEFT_COLL_TUNE",
    "WEFT_COLL_MODEL", "WEFT_GPU_COLL", "WEFT_GPU_COLL_MODE", "WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN",
    "WEFT_GPU_ALLREDUCE_DIRECT_MIN", "WEFT_OFFLOAD", "WEFT_OFFLOAD_RADIX", "WEFT_RMA_SEGMENT", "WEFT_RMA_CMA",
    "WEFT_RMA_MAILBOX", "WEFT_RMA_LOCK_READER_SLOTS", "WEFT_RMA_STAGED"};

JobFacts job_facts(const Config& cfg) {
  std::string build = std::string(WEFT_VERSION_STRING) + ", MPICH ABI, CUDA " +
#ifdef WEFT_HAVE_CUDA
                      "compiled in";
#else
                      "not compiled in";
#endif
  const std::string id = library_build_id();
  build += ", build " + (id.empty() ? std::string("(no build id)") : id);
  JobFacts facts{{"weft", build}};
  for (const char* name : kSettingsThatMustAgree) facts.emplace_back(name, std::string(cfg.value(name)));
  // Tracing aligns the ranks' clocks at init, which every rank must take part in (the paths
  // may differ).
  facts.emplace_back("WEFT_TRACE (on or off)", cfg.value("WEFT_TRACE").empty() ? "off" : "on");
  return facts;
}

// WEFT_TIMEOUT: seconds, decimals allowed; 0 turns the bound off. Checked here, applied when
// MPI_Init returns (start_wait_timeout): the waits of MPI_Init itself are not bounded, as a
// loaded machine may take seconds to start every rank.
double g_configured_timeout = 0;

Status configure_timeout(const Config& cfg) {
  const std::string text(cfg.value("WEFT_TIMEOUT"));
  char* end = nullptr;
  const double seconds = strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(seconds >= 0) || seconds > 1e9) {
    const std::string msg = "WEFT_TIMEOUT='" + text + "': expected seconds (e.g. 30 or 2.5), 0 for no bound";
    WEFT_ERROR(Subsys::init, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::invalid_arg;
  }
  g_configured_timeout = seconds;
  if (seconds > 0) WEFT_INFO(Subsys::init, "blocking waits after MPI_Init are bounded: WEFT_TIMEOUT=%g s", seconds);
  return Status::ok;
}

}  // namespace

void start_wait_timeout() { set_wait_timeout(g_configured_timeout); }

Status start_process(const Config& cfg, Progress& progress, std::unique_ptr<Bootstrap>* boot, CpuSet* cpus) {
  LogSettings log;
  if (Status s = log_settings(cfg, &log); s != Status::ok) return s;
  log_configure(log, -1);
  if (Status s = Bootstrap::init(boot); s != Status::ok) return s;
  startup_phases().mark("bootstrap");
  log_configure(log, (*boot)->rank());
  if (Status s = (*boot)->require_agreement(encode_facts(job_facts(cfg))); s != Status::ok) return s;
  if (Status s = configure_timeout(cfg); s != Status::ok) return s;
  if (Status s = start_wait_policy(cfg, **boot, progress, cpus); s != Status::ok) return s;
  (void)cuda_probe(cfg.value("WEFT_CUDA") != "off");
  cuda_ipc_configure(cfg.value("WEFT_CUDA_IPC") != "off", size_t(cfg.integer("WEFT_CUDA_IPC_CACHE")));
  device_staging_configure(cfg.size("WEFT_CUDA_STAGING_CHUNK"));
  startup_phases().mark("cuda");
  return Status::ok;
}

Status start_transport(const Config& cfg, Bootstrap& boot, Progress& progress, RequestPool& requests,
                       const CpuSet& cpus, std::shared_ptr<const topo::NodeTopology>* topology,
                       std::unique_ptr<Transport>* transport) {
  if (Status s = load_job_topology(cfg, boot, topology); s != Status::ok) return s;
  startup_phases().mark("topology");
  if (Status s = Transport::create(boot, progress, requests, transport_options(cfg, boot), transport);
      s != Status::ok)
    return s;
  startup_phases().mark("transport");
  configure_wait_policy(cfg, boot, cpus, progress);
  return Status::ok;
}

void finish_process(Bootstrap& boot, Transport& t, const std::vector<Request*>& bsend_pending,
                    const std::vector<Request*>& orphans) {
  for (Request* r : bsend_pending)
    if (!r->complete) t.wait(r);
  if (!orphans.empty()) {
    WEFT_TRACE(Subsys::init, "finalize completes %zu requests freed in flight", orphans.size());
    t.progress_engine().wait([&] {
      boot.poll_local_liveness();
      return orphans.empty() || boot.failures_seen() > 0;  // a dead peer never answers
    });
  }
  t.quiesce();  // the barrier below does not progress messages
  boot.announce_finalize();  // this rank's exit is no failure from here on
  if (const int dead = boot.first_failed(); dead >= 0) {
    WEFT_INFO(Subsys::init, "rank %d has failed: finalize does not wait for the other ranks", dead);
  } else {
    const Status s = boot.barrier([&t] { t.poll_notices(); });  // a death on another host ends it too
    if (s == Status::peer_failed) WEFT_INFO(Subsys::init, "%s: finalize goes on", error_detail().c_str());
    else if (s != Status::ok) WEFT_WARN(Subsys::init, "barrier at finalize failed; closing anyway");
  }
  boot.unlink_tracked_shm();  // every rank has mapped what it needs, or a rank died
}

void release_device_resources() {
  if (const IpcCacheStats ipc = cuda_ipc_stats(); ipc.opens > 0)
    WEFT_INFO(Subsys::gpu, "cuda ipc: %llu mappings opened, %llu reused, %llu closed early (cache of %zu); %zu closed at finalize",
              static_cast<unsigned long long>(ipc.opens), static_cast<unsigned long long>(ipc.hits),
              static_cast<unsigned long long>(ipc.evictions), ipc.capacity, ipc.live);
  cuda_ipc_release_all();
  device_staging_release_all();  // no staged transfer is in flight any more
}

std::vector<std::pair<std::string, std::string>> process_info(const Bootstrap& boot, const char* thread_level) {
  char cwd[4096] = "";
  if (!getcwd(cwd, sizeof(cwd))) cwd[0] = '\0';
  return {{"maxprocs", std::to_string(boot.size())},
          {"host", boot.hostname()},
          {"wdir", cwd},
          {"thread_level", thread_level},
          {"mpi_memory_alloc_kinds", cuda_state().compiled ? "system,mpi,cuda:device,cuda:managed" : "system,mpi"}};
}

int release_orphans(RequestPool& pool, std::vector<Request*>* orphans) {
  int released = 0;
  for (size_t i = 0; i < orphans->size();) {
    Request* r = (*orphans)[i];
    if (r->complete) {
      run_finish(r);
      pool.release(r);
      (*orphans)[i] = orphans->back();
      orphans->pop_back();
      ++released;
    } else {
      ++i;
    }
  }
  return released;
}

void free_request(RequestPool& pool, std::vector<Request*>* orphans, Request* r) {
  const bool in_flight = !r->complete && (!r->persistent || r->active);
  if (in_flight) {
    r->user_freed = true;
    orphans->push_back(r);
  } else {
    pool.release(r);
  }
}

}  // namespace weft
