// MPI_Init / MPI_Finalize and the environment queries.
#include <pthread.h>
#include <ucp/api/ucp_version.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/memkind.h"
#include "runtime/profiler.h"
#include "runtime/trace.h"
#include "pt2pt/tag.h"
#include "pt2pt/transport.h"
#include "runtime/startup_phases.h"
#include "pt2pt/process_setup.h"
#include "state.h"
#include "include/weft/store.h"
#include "pmix/bootstrap.h"

namespace weft::mpi {

State* g_state = nullptr;
bool g_running = false, g_initialized = false, g_finalized = false;

namespace {

std::unique_ptr<CommEntry> make_world_comm(Bootstrap& b, uint32_t context, int handle_value, const char* name,
                                           bool self) {
  auto e = std::make_unique<CommEntry>();
  e->comm = predefined_comm(b, context, self, name, handle_value);
  e->comm.errhandler = MPI_ERRORS_ARE_FATAL;
  return e;
}

[[noreturn]] void init_failure(const char* fn, Status s, Bootstrap* boot) {
  const std::string& d = error_detail();
  if (boot) fprintf(stderr, "weft: rank %d: %s failed: %s\n", boot->rank(), fn, d.empty() ? status_name(s) : d.c_str());
  else fprintf(stderr, "weft: %s failed: %s\n", fn, d.empty() ? status_name(s) : d.c_str());
  fflush(stderr);
  if (boot && s == Status::mismatch) {
    // Every rank found the same disagreement: each says so, and none leaves before all have
    // (a launcher may end the job at the first exit).
    (void)boot->barrier();
    (void)boot->finalize();
  }
  _exit(1);
}

// Rank 0's clock against each rank's, for WEFT_TRACE (only then): rank 0 exchanges
// kClockRounds pings with every rank in turn; each rank's offset is its time at the reply minus
// the midpoint of rank 0's round trip, from the shortest round trip; rank 0 sends it back.
Status measure_clock_offset(Transport& t, Bootstrap& boot) {
  constexpr int kClockRounds = 8;
  constexpr uint32_t kClockContext = tag::kMaxContextId - 1;  // below the revocation notices
  auto now_us = [] { return monotonic_seconds() * 1e6; };
  double offset = 0;
  if (boot.rank() == 0) {
    for (int r = 1; r < boot.size(); ++r) {
      double best_rtt = 1e300, best = 0;
      for (int k = 0; k < kClockRounds; ++k) {
        const double sent = now_us();
        double theirs = 0;
        MatchInfo info;
        WEFT_TRY(t.send(&sent, sizeof sent, r, tag::make(kClockContext, 0, uint32_t(k)), SendMode::standard));
        WEFT_TRY(t.recv(&theirs, sizeof theirs, r, tag::make(kClockContext, uint32_t(r), uint32_t(k)), ~0ull, &info));
        const double back = now_us();
        if (back - sent < best_rtt) {
          best_rtt = back - sent;
          best = theirs - (sent + back) / 2;
        }
      }
      WEFT_TRY(t.send(&best, sizeof best, r, tag::make(kClockContext, 0, kClockRounds), SendMode::standard));
    }
  } else {
    for (int k = 0; k <= kClockRounds; ++k) {
      double value = 0;
      MatchInfo info;
      WEFT_TRY(t.recv(&value, sizeof value, 0, tag::make(kClockContext, 0, uint32_t(k)), ~0ull, &info));
      if (k == kClockRounds) {
        offset = value;
        break;
      }
      const double mine = now_us();
      WEFT_TRY(t.send(&mine, sizeof mine, 0, tag::make(kClockContext, uint32_t(boot.rank()), uint32_t(k)),
                      SendMode::standard));
    }
  }
  trace::set_clock_offset_us(offset);
  return Status::ok;
}

// The one start of the runtime, whichever model comes first.
void start(const char* fn, int required, bool world) {
  // The objects made before the start (info objects) stay with the runtime. A state whose
  // runtime MPI_Finalize tore down is left as it is: that runtime cannot start again.
  std::unique_ptr<State> state(g_state && !g_state->boot ? g_state : new State);
  g_state = nullptr;
  state->wtime_origin = monotonic_seconds();
  startup_phases().begin();
  state->main_thread = (unsigned long)pthread_self();

  CpuSet cpus;
  Status s = coll::open_runtime(state.get(), &cpus);
  if (s != Status::ok) init_failure(fn, s, state->boot.get());
  Bootstrap& boot = *state->boot;

  state->thread_level = world ? provided_level(required) : MPI_THREAD_SINGLE;

  if (s = coll::start_runtime(state.get(), cpus); s != Status::ok) init_failure(fn, s, &boot);
  // Context ids: world 0/1, self 2/3, group creation 4/5; communicators created later agree
  // on free pairs (comm.cpp).
  state->comms.put(0, make_world_comm(boot, 0, MPI_COMM_WORLD, "MPI_COMM_WORLD", false));
  state->comms.put(1, make_world_comm(boot, 2, MPI_COMM_SELF, "MPI_COMM_SELF", true));
  init_context_ids(*state);
  s = coll::configure(state->config, *state->transport, boot, state->comms.get(0)->comm, &state->coll_settings);
  if (s != Status::ok) init_failure(fn, s, &boot);
  startup_phases().mark("collectives");
  const std::string plugin(state->config.value("WEFT_PROFILER_PLUGIN")), trace_path(state->config.value("WEFT_TRACE"));
  if (!plugin.empty() || !trace_path.empty()) {
    weft_profiler_job_info_t job{};
    job.struct_size = sizeof job;
    job.rank = boot.rank();
    job.size = boot.size();
    job.local_rank = boot.local_rank();
    job.local_size = boot.local_size();
    job.job_id = boot.job_id().c_str();
    job.version = WEFT_VERSION_STRING;
    if (s = profiler::load(plugin, job); s != Status::ok) init_failure(fn, s, &boot);
    if (!trace_path.empty()) {
      // The clocks first, so their messages stay out of the trace.
      if (s = measure_clock_offset(*state->transport, boot); s != Status::ok) init_failure(fn, s, &boot);
      s = profiler::use_builtin(trace::consumer(trace_path), "the trace writer (WEFT_TRACE)", job);
      if (s != Status::ok) init_failure(fn, s, &boot);
    }
  }

  (void)lookup_datatype(MPI_BYTE);  // fills the builtin types' table (builtin_datatype)
  g_state = state.release();
  g_running = true;
  start_wait_timeout();
  g_state->own_cpus = cpus;
  WEFT_INFO(Subsys::init, "initialised in %.1f ms (%s)", (monotonic_seconds() - g_state->wtime_origin) * 1e3,
            startup_phases().summary().c_str());
  // Last: from here on another thread drives progress.
  if (g_state->config.boolean("WEFT_ASYNC_PROGRESS")) start_async_progress("WEFT_ASYNC_PROGRESS");
}

int do_init(int required, int* provided, const char* fn) {
  if (g_initialized || g_finalized)
    return raise(MPI_COMM_NULL, MPI_ERR_OTHER, fn, "MPI is already %s",
                 g_finalized ? "finalized" : "initialized");
  open_runtime_for(fn, required, true);
  g_initialized = true;
  if (provided) *provided = g_state->thread_level;
  return MPI_SUCCESS;
}

}  // namespace

State& handle_state() {
  if (!g_state) g_state = new State;
  return *g_state;
}

void open_runtime_for(const char* fn, int required, bool world) {
  if (!g_running) start(fn, required, world);
  else if (world) g_state->thread_level = provided_level(required);  // MPI_Query_thread's answer
  if (world) g_state->world_open = true;
  else ++g_state->open_sessions;
}

namespace {

int teardown(const char* fn) {
  stop_async_progress();
  const Status s = coll::finish_runtime(*g_state, release_windows);
  g_running = false;
  profiler::unload();
  WEFT_INFO(Subsys::init, "finalized");
  log_shutdown();
  if (s != Status::ok) return raise_status(MPI_COMM_NULL, s, fn);
  return MPI_SUCCESS;
}

// At exit, a runtime that only sessions held, all of them finalized.
void teardown_at_exit() {
  if (g_running && !g_state->world_open && g_state->open_sessions == 0) (void)teardown("MPI_Session_finalize");
}

}  // namespace

int close_runtime_for(const char* fn, bool world) {
  if (world) g_state->world_open = false;
  else --g_state->open_sessions;
  if (g_state->world_open || g_state->open_sessions > 0) return MPI_SUCCESS;
  if (world) return teardown(fn);
  // The last session: the runtime stays up until the process exits, so that a session may be
  // made again (the PMIx client cannot be initialised again once finalized).
  static bool at_exit = false;
  if (!at_exit) at_exit = atexit(teardown_at_exit) == 0;
  return MPI_SUCCESS;
}

coll::CollContext coll_context(const Comm& c) {
  const coll::Settings& s = g_state->coll_settings;
  return coll::CollContext{g_state->transport.get(), c, s.model, &s.tuning, s.dump, &g_state->coll_calls,
                           s.require_fast_path, &s};
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Init(int*, char***) { return do_init(MPI_THREAD_SINGLE, nullptr, "MPI_Init"); }

int PMPI_Init_thread(int*, char***, int required, int* provided) {
  if (!provided) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
  return do_init(required, provided, "MPI_Init_thread");
}

int weft_bootstrap_use_store(const weft_store_ops* ops) {
  if (g_running || g_initialized) {
    WEFT_ERROR(Subsys::init, "weft_bootstrap_use_store: MPI is initialised already; the store would not be used");
    return MPI_ERR_OTHER;
  }
  const char* bad = !ops                                       ? nullptr
                    : ops->struct_size < sizeof(weft_store_ops)   ? "ops->struct_size is smaller than the struct"
                    : !ops->set || !ops->get || !ops->add || !ops->check ? "a callback of ops (set, get, add, check) is NULL"
                    : ops->size < 1                                ? "ops->size is below 1"
                    : ops->rank < 0 || ops->rank >= ops->size      ? "ops->rank is not in [0, ops->size)"
                                                                   : nullptr;
  if (bad) {
    WEFT_ERROR(Subsys::init, "weft_bootstrap_use_store: %s", bad);
    return MPI_ERR_ARG;
  }
  set_bootstrap_store(ops);
  return MPI_SUCCESS;
}

int PMPI_Initialized(int* flag) {
  if (!flag) return MPI_ERR_ARG;
  *flag = g_initialized;
  return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
  if (!flag) return MPI_ERR_ARG;
  *flag = g_finalized;
  return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
  WEFT_ENTRY;
  if (!g_initialized || g_finalized) [[unlikely]] return not_initialized("MPI_Finalize");
  // Before anything goes: the attributes of MPI_COMM_SELF, the last set first (programs hang
  // actions at finalize on them), then those of MPI_COMM_WORLD.
  for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD}) {
    if (int rc = delete_all_attributes(c); rc != MPI_SUCCESS) return rc;
  }
  g_finalized = true;
  return close_runtime_for("MPI_Finalize", true);
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  int rank = g_state && g_state->boot ? g_state->boot->rank() : 0;
  Comm* c = g_state ? lookup_comm(comm) : nullptr;
  fprintf(stderr, "weft: MPI_Abort called by rank %d on %s with error code %d\n", rank,
          c ? c->label().c_str() : "an invalid communicator", errorcode);
  fflush(stderr);
  if (g_state && g_state->boot) g_state->boot->abort(errorcode, "MPI_Abort");
  _exit(errorcode == 0 ? 1 : errorcode);
}

// weft starts no processes (MPI_Comm_spawn is not supported), so no job has a parent.
int PMPI_Comm_get_parent(MPI_Comm* parent) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Comm_get_parent");
  if (!parent) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_get_parent", "parent is NULL");
  *parent = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int PMPI_Query_thread(int* provided) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Query_thread");
  if (!provided) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
  *provided = g_state->thread_level;
  return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Is_thread_main");
  if (!flag) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
  *flag = (unsigned long)pthread_self() == g_state->main_thread;
  return MPI_SUCCESS;
}

double PMPI_Wtime(void) {
  return monotonic_seconds() - (g_state ? g_state->wtime_origin : 0.0);
}

double PMPI_Wtick(void) { return monotonic_tick(); }

int PMPI_Get_processor_name(char* name, int* resultlen) {
  WEFT_ENTRY;
  if (!name || !resultlen) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_processor_name", "name or resultlen is NULL");
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  gethostname(host, sizeof(host) - 1);
  copy_string(std::string_view(host, strnlen(host, MPI_MAX_PROCESSOR_NAME - 1)), MPI_MAX_PROCESSOR_NAME, name,
              resultlen);
  return MPI_SUCCESS;
}

int PMPI_Get_version(int* version, int* subversion) {
  WEFT_ENTRY;
  if (!version || !subversion) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_version", "version or subversion is NULL");
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
  WEFT_ENTRY;
  if (!version || !resultlen) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_library_version", "version or resultlen is NULL");
  int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                   "weft %s (MPI %d.%d, MPICH ABI), UCX %d.%d, CUDA support %s", WEFT_VERSION,
                   MPI_VERSION, MPI_SUBVERSION, UCP_API_MAJOR, UCP_API_MINOR,
#ifdef WEFT_HAVE_CUDA
                   "compiled in"
#else
                   "not compiled in"
#endif
  );
  *resultlen = n;
  return MPI_SUCCESS;
}

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_rank", comm, &c)) [[unlikely]] return rc;
  if (!rank) return raise(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
  *rank = c->rank;
  return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_size", comm, &c)) [[unlikely]] return rc;
  if (!size) return raise(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
  *size = c->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_get_name", comm, &c)) [[unlikely]] return rc;
  if (!comm_name || !resultlen) return raise(comm, MPI_ERR_ARG, "MPI_Comm_get_name", "comm_name or resultlen is NULL");
  copy_string(c->name, MPI_MAX_OBJECT_NAME, comm_name, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_set_name", comm, &c)) [[unlikely]] return rc;
  if (!comm_name) return raise(comm, MPI_ERR_ARG, "MPI_Comm_set_name", "comm_name is NULL");
  c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

// 1 in a build with CUDA: point-to-point and collective calls accept device buffers (staged
// through host memory until GPU-native paths exist).
int MPIX_Query_cuda_support(void) { return weft::cuda_state().compiled ? 1 : 0; }

// MPI_COMM_DUP_FN and friends (MPICH binaries reference this symbol by name).
int MPIR_Dup_fn(MPI_Comm, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}

static int weft_unweighted_sentinel, weft_weights_empty_sentinel;
int* const MPI_UNWEIGHTED = &weft_unweighted_sentinel;
int* const MPI_WEIGHTS_EMPTY = &weft_weights_empty_sentinel;

}  // extern "C"

WEFT_PMPI_ALIASES(Init, Init_thread, Initialized, Finalized, Finalize, Abort, Comm_get_parent, Query_thread,
                  Is_thread_main, Wtime, Wtick, Get_processor_name, Get_version,
                  Get_library_version, Comm_rank, Comm_size, Comm_get_name, Comm_set_name)

extern "C" {

// Memory for MPI use: plain aligned host memory (no registration is needed by the transports).
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Alloc_mem");
  if (size < 0) return raise(MPI_COMM_NULL, MPI_ERR_SIZE, "MPI_Alloc_mem", "negative size %ld", long(size));
  if (!baseptr) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Alloc_mem", "baseptr is NULL");
  void* p = nullptr;
  if (posix_memalign(&p, 64, size_t(size ? size : 1)) != 0)
    return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes", long(size));
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

int PMPI_Free_mem(void* base) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Free_mem");
  free(base);
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Alloc_mem, Free_mem)
