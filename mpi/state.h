// Process-wide state behind the MPI C API. MPI's handles are process-global by definition, so
// this is the one place that holds them; the layers below receive what they need explicitly.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coll/call.h"
#include "coll/coll.h"
#include "coll/runtime.h"
#include "coll/schedule.h"
#include "coll/settings.h"
#include "pmix/bootstrap.h"
#include "pt2pt/comm.h"
#include "pt2pt/communicators.h"
#include "pt2pt/p2p.h"
#include "pt2pt/partitioned.h"
#include "pt2pt/process_setup.h"
#include "pt2pt/transport.h"
#include "topo/topology.h"
#include "runtime/async_progress.h"
#include "runtime/attributes.h"
#include "runtime/entry_lock.h"
#include "runtime/config.h"
#include "runtime/datatype.h"
#include "runtime/handles.h"
#include "runtime/info_set.h"
#include "runtime/process_topology.h"
#include "runtime/progress.h"
#include "runtime/request.h"
#include "runtime/typed_reduction.h"

namespace weft::mpi {

// MPICH handle layout: kind in bits 30-31, object type in bits 26-29, index below.
namespace handle {
inline constexpr uint32_t kKindShift = 30, kObjShift = 26, kIndexMask = (1u << 26) - 1;
enum Kind : uint32_t { invalid = 0, builtin = 1, direct = 2, indirect = 3 };
enum Obj : uint32_t { comm = 0x1, group = 0x2, datatype = 0x3, errhandler = 0x5, op = 0x6,
                      info = 0x7, win = 0x8, keyval = 0x9, request = 0xb, session = 0xe };
inline constexpr int make(Kind k, Obj o, uint32_t index) {
  return int((uint32_t(k) << kKindShift) | (uint32_t(o) << kObjShift) | (index & kIndexMask));
}
inline constexpr Kind kind_of(int h) { return Kind(uint32_t(h) >> kKindShift); }
inline constexpr Obj obj_of(int h) { return Obj((uint32_t(h) >> kObjShift) & 0xf); }
inline constexpr uint32_t index_of(int h) { return uint32_t(h) & kIndexMask; }
}  // namespace handle

struct Errhandler {
  MPI_Comm_errhandler_function* fn = nullptr;  // a window's (for_windows) is called with the window
  int refs = 1;
  bool for_windows = false;  // made by MPI_Win_create_errhandler
  bool for_files = false;    // made by MPI_File_create_errhandler (called with the file)
};

// A group: an ordered set of job ranks.
struct Group {
  std::vector<int> world_ranks;
  MPI_Session session = MPI_SESSION_NULL;  // the session it derives from (buffered sends' scope)
};

// Process topology attached to a communicator; the grid for MPI_CART.
struct Topology : CartGrid, DistGraph {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
  std::vector<int> index, edges;  // graph
};

using InfoEntries = InfoSet;

// A communicator with what the MPI layer keeps beside the transport's view.
struct CommEntry {
  Comm comm;
  // Failed members acknowledged with MPIX_Comm_failure_ack (job ranks), and the number of
  // fault-tolerant agreements run on the communicator so far.
  std::vector<int> acked_failures;
  uint32_t agreements = 0;
  AttributeSet attrs;
  InfoEntries info;
  std::shared_ptr<const Topology> topo;
  // Buffered sends: the space attached to the communicator (made on first use), and the session
  // it derives from, whose space comes next (MPI 4.1; BsendScopes).
  std::shared_ptr<BufferedSends> bsend;
  MPI_Session session = MPI_SESSION_NULL;
};

struct UserOp {
  MPI_User_function* fn = nullptr;
  MPI_User_function_c* fn_c = nullptr;  // MPI_Op_create_c: takes an MPI_Count count, in one call
  bool commute = true;
};

// The info objects (info.cpp): MPI_Info calls are allowed before MPI_Init and after
// MPI_Finalize, so the table lives as long as the process; [0] and [1] are reserved.
HandleTable<InfoEntries>& info_table();
// A session (MPI_Session_init): its error handler and the info it was made with.
struct SessionEntry {
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  InfoEntries info;
  std::shared_ptr<BufferedSends> bsend;  // MPI_Session_attach_buffer's space (made on first use)
};

// The process's runtime (coll/runtime.h) and the MPI objects behind its handles.
struct State : coll::Runtime {
  HandleTable<CommEntry> comms{2};  // [0] world, [1] self, then user communicators
  HandleTable<Group> groups{1};     // [0] is reserved
  HandleTable<InfoEntries>& infos = info_table();
  Attributes attributes;  // the keys of MPI keyval handles (index part) and their values
  HandleTable<UserOp> ops{1};
  HandleTable<SessionEntry> sessions{1};  // [0] is reserved
  PartitionedChannels partitioned;        // the pairs of partitioned requests made so far
  ContextIds context_ids{};
  std::vector<std::unique_ptr<Errhandler>> errhandlers;  // user errhandlers, by index
  int thread_level = MPI_THREAD_SINGLE;
  double wtime_origin = 0;
  unsigned long main_thread = 0;
  CpuSet own_cpus;  // this rank's binding at start
  std::unique_ptr<AsyncProgress> async_progress;  // WEFT_ASYNC_PROGRESS; null when off
  // Who holds the runtime: the world model (between MPI_Init and MPI_Finalize) and the open
  // sessions. The last of them to finish tears it down.
  bool world_open = false;
  int open_sessions = 0;
};

// g_state: the runtime and the objects behind the handles, from the first MPI_Init or
// MPI_Session_init; g_running: whether the runtime is up (between that call and the last
// finalize); g_initialized and g_finalized: the world model's MPI_Init and MPI_Finalize.
extern State* g_state;
extern bool g_running, g_initialized, g_finalized;

// The object behind a direct handle of type `obj` in `table`, whose first `first` slots are the
// predefined objects (looked up by their handles); nullptr otherwise or before MPI_Init.
template <class T>
T* lookup_direct(HandleTable<T> State::*table, int h, handle::Obj obj, uint32_t first) {
  if (!g_state || handle::kind_of(h) != handle::direct || handle::obj_of(h) != obj) return nullptr;
  const uint32_t idx = handle::index_of(h);
  return idx >= first ? (g_state->*table).get(idx) : nullptr;
}

// Handle lookups: nullptr for an invalid or freed handle.
Comm* lookup_comm(MPI_Comm h);
CommEntry* lookup_comm_entry(MPI_Comm h);
// A binding's start: MPI initialised and comm valid; else the error code (MPI_ERR_COMM raised).
int comm_of(const char* fn, MPI_Comm comm, Comm** out);
int comm_entry_of(const char* fn, MPI_Comm comm, CommEntry** out);
Group* lookup_group(MPI_Group h);  // MPI_GROUP_EMPTY included
const UserOp* lookup_user_op(MPI_Op h);
// A predefined operation's ReduceOp (MPI_REPLACE and MPI_NO_OP included); false otherwise.
bool lookup_builtin_op(MPI_Op op, ReduceOp* out);

// The arguments a user reduction function needs, kept alive for the collective's duration: the
// operation by value, as MPI_Op_free may free its handle before a pending call completes.
struct UserOpCall {
  UserOp op;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  const Datatype* type = nullptr;
};
// Builds the reduction for (op, datatype): a predefined op (on the basic type a derived type is
// made of), or a user function through *call.
int make_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype dt, size_t count,
                   UserOpCall* call, coll::Reduction* out, ReductionLayout* layout = nullptr);
InfoEntries* lookup_info(MPI_Info h);  // MPI_INFO_ENV included (read-only by convention)

// Communicator creation: the ranks of parent agree a context id (coll::make_comm) and the new
// communicator of world_ranks gets a handle. world_ranks without this rank: it is not a member
// (the call still takes part in the agreement); *out = COMM_NULL.
int create_communicator(const char* fn, MPI_Comm parent, const std::vector<int>& world_ranks,
                        std::shared_ptr<const Topology> topo, MPI_Comm* out);
void init_context_ids(State& st);
// The runtime for MPI_Init (world true) or MPI_Session_init: started by the first of them,
// shared by the others; `required` is the thread level asked for (the level provided is
// g_state->thread_level). Fatal if the start fails.
void open_runtime_for(const char* fn, int required, bool world);
// MPI_Finalize (world true) or MPI_Session_finalize: the runtime is torn down when the last of
// its holders finishes: at once for MPI_Finalize, at the process's exit for a session (a new
// session or MPI_Init may take it up again until then). MPI_SUCCESS or the teardown's error
// code.
int close_runtime_for(const char* fn, bool world);
// The thread level provided for `required` (threads.cpp): the level asked for. MPI_THREAD_MULTIPLE
// turns the entry lock on (runtime/entry_lock.h); the lower levels keep calls lock-free.
int provided_level(int required);
// The asynchronous progress thread (runtime/async_progress.h), started once the runtime is up
// (why: what asked for it, for the log); stopped first at teardown.
void start_async_progress(const char* why);
void stop_async_progress();
// The state behind the handles, made bare (no runtime) when a routine that MPI allows before
// initialisation, such as MPI_Info_create, comes first; the runtime's start takes it over.
State& handle_state();
SessionEntry* lookup_session(MPI_Session h);
// A valid error handler argument: predefined or a live user handler.
bool valid_errhandler(MPI_Errhandler eh);
// Whether the runtime has never been started (the calls MPI allows before initialisation).
bool before_first_init();
// A new user error handler; before_init: the call is one MPI allows before initialisation
// (MPI_Session_create_errhandler).
int create_errhandler(const char* fn, MPI_Comm_errhandler_function* function, bool for_windows,
                      MPI_Errhandler* errhandler, bool before_init = false);
// An error raised on an object that is no communicator (a session, or a call that takes its
// error handler as an argument): the message logged and carried by the code, handler eh
// invoked with the object's handle; returns the code.
int raise_on(MPI_Errhandler eh, int object, const char* label, int error_class, const char* fn,
             const std::string& detail);
// MPI_*_call_errhandler: invokes eh with errorcode for the object (its message, if the code
// carries one).
void call_errhandler(MPI_Errhandler eh, int object, const char* label, int errorcode);
// A new group of these job ranks (MPI_GROUP_EMPTY for none), derived from `session`.
int make_group(std::vector<int> world_ranks, MPI_Group* out, MPI_Session session = MPI_SESSION_NULL);
// A communicator made by coll (view: this rank's, a member) in a new handle with error handler
// eh, derived from `session`.
int register_new_comm(const char* fn, Comm view, MPI_Errhandler eh, MPI_Comm* out,
                      std::shared_ptr<const Topology> topo = nullptr, MPI_Session session = MPI_SESSION_NULL);
// The INFO line of a new communicator (view c), made by fn.
void log_new_comm(const char* fn, const Comm& c);
// The hints a communicator keeps of `given` (MPI_Comm_get_info returns the hints in use): the
// standard's assertions; other keys are ignored.
InfoEntries comm_hints(const InfoEntries& given);
// Attribute copy on MPI_Comm_dup, delete on free (and on MPI_COMM_SELF first in MPI_Finalize).
int copy_attributes(MPI_Comm from, MPI_Comm to);
int delete_all_attributes(MPI_Comm comm);
// The same for datatypes: copy on MPI_Type_dup, delete on MPI_Type_free.
int copy_type_attributes(MPI_Datatype from, MPI_Datatype to);
int delete_type_attributes(MPI_Datatype type);
const Datatype* lookup_datatype(MPI_Datatype h);
// The predefined types with builtin handles (0x4c00SSII), by the handle's low byte; filled
// before MPI_Init returns. The point-to-point fast path reads it inline.
struct BuiltinTypeSlot {
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  const Datatype* type = nullptr;
};
extern BuiltinTypeSlot g_builtin_types[256];
// A builtin handle's Datatype, or null (any other handle, or the table not yet filled).
inline const Datatype* builtin_datatype(MPI_Datatype h) {
  const BuiltinTypeSlot& s = g_builtin_types[uint32_t(h) & 0xff];
  return s.handle == h ? s.type : nullptr;
}
// A new derived datatype handle owning one reference to d (taken over from the caller).
MPI_Datatype new_datatype_handle(Datatype* d);
// MPI_Type_create_f90_*'s result: the predefined type base under the envelope (combiner, p, r)
// (f90_integer: r alone), made once per (combiner, p, r) and never freed.
MPI_Datatype parameterized_type(Combiner combiner, MPI_Datatype base, int p, int r);
// Validates a datatype argument of a communication call: valid handle and committed
// (MPI_ERR_TYPE otherwise, raised on comm with a message naming `arg`). MPI_SUCCESS or the
// error code.
int check_datatype(MPI_Comm comm, const char* fn, MPI_Datatype h, const Datatype** out,
                   const char* arg = "datatype");
// A live request's object, or null for any other handle (MPI_REQUEST_NULL included).
inline Request* lookup_request(MPI_Request h) {
  if (handle::kind_of(h) != handle::direct || handle::obj_of(h) != handle::request) return nullptr;
  Request* r = g_state->requests.at(handle::index_of(h));
  return r && r->live ? r : nullptr;
}
inline MPI_Request request_handle(const Request* r) {
  return handle::make(handle::direct, handle::request, r->index);
}

// Errors. Each builds an error code that carries the message, logs it where it is detected,
// invokes the communicator's error handler (MPI_COMM_WORLD's when comm is MPI_COMM_NULL) and
// returns the code for the binding to return.
int raise(MPI_Comm comm, int error_class, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// An error code made elsewhere (a program's callback returned it): logged and handed to the
// error handler as it is.
int raise_code(MPI_Comm comm, int code, const char* fn);
// An error reported by a lower layer: the detail message is the one recorded at detection.
int raise_status(MPI_Comm comm, Status s, const char* fn);
// MPI_ERR_BUFFER for a CUDA device buffer in a build without CUDA (MemKind::unsupported_device).
int raise_unsupported_device(MPI_Comm comm, const char* fn, const void* buf);
int error_class_of(Status s);
// A reference to a user errhandler taken or dropped (no-ops for the predefined ones).
void retain_errhandler(MPI_Errhandler eh);
void release_errhandler(MPI_Errhandler eh);
// Code for an error found inside a multiple-completion call (no handler invoked).
int make_error_code(int error_class, const std::string& message);

// The string outputs (names, error strings): s cut to max - 1 characters and a NUL into out,
// the length kept into *resultlen.
inline void copy_string(std::string_view s, int max, char* out, int* resultlen) {
  const size_t n = std::min(s.size(), size_t(max - 1));
  memcpy(out, s.data(), n);
  out[n] = '\0';
  *resultlen = int(n);
}

// Fills an MPI_Status from a completed request's status.
inline void fill_status(MPI_Status* st, const RequestStatus& rs) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = rs.source;
  st->MPI_TAG = rs.tag;
  st->count_lo = int(uint32_t(rs.bytes & 0xffffffffu));
  st->count_hi_and_cancelled = int((uint64_t(rs.bytes) >> 32) << 1) | (rs.cancelled ? 1 : 0);
}
// Null or inactive requests: MPI_ANY_SOURCE, MPI_ANY_TAG, no bytes, MPI_SUCCESS.
void set_status_empty(MPI_Status* st);
void set_status_proc_null(MPI_Status* st);   // operations on MPI_PROC_NULL
// The status of an operation on MPI_PROC_NULL.
inline RequestStatus proc_null_status() { return RequestStatus{MPI_PROC_NULL, MPI_ANY_TAG, 0}; }
// The byte count an MPI_Status carries (count_lo, and count_hi_and_cancelled above its
// cancelled bit).
inline size_t status_bytes(const MPI_Status* st) {
  return size_t(uint32_t(st->count_lo)) | (size_t(uint32_t(st->count_hi_and_cancelled) >> 1) << 32);
}

coll::CollContext coll_context(const Comm& c);
// Failure is contagious within a communicator: MPIX_ERR_PROC_FAILED (raised, naming the rank)
// once a member of c is known to have failed, else MPI_SUCCESS.
// MPIX_ERR_REVOKED or MPIX_ERR_PROC_FAILED for a call on c once it is revoked or holds a failed
// member. point_to_point: a send or receive, which under WEFT_FAULT_SCOPE=process only a
// revocation stops here (its own peer's failure, or an unacknowledged one for a wildcard
// receive, fails it in the transport).
int check_comm_alive(const char* fn, MPI_Comm comm, const Comm& c, bool point_to_point = false);
// The communicator whose failed members fail r (its owner), or null.
inline const Comm* failure_scope(const Request* r) { return r->owner ? lookup_comm(r->owner) : nullptr; }

// Generalized requests (grequest.cpp). The query function's status into *status (all but
// MPI_ERROR; status may be MPI_STATUS_IGNORE); its code.
int grequest_status(Request* r, MPI_Status* status);
// The free function, then r goes back to the pool; the free function's code.
int grequest_free(Request* r);
// The cancel function, told whether r has completed; its code.
int grequest_cancel(Request* r);
// A completed generalized request to the user: grequest_status, then grequest_free and
// *h = MPI_REQUEST_NULL; the first error code of the two callbacks.
int grequest_retire(MPI_Request* h, Request* r, MPI_Status* status);
// MPI_Finalize (win.cpp): releases every window left (never freed, or whose MPI_Win_free failed)
// without a word to any peer: remote keys and registrations (before the transport goes, which
// UCX requires), segments, their communicators. The memory of MPI_Win_allocate goes to
// *memory, to be freed once the transport is gone (a peer's put could land until then).
void release_windows(std::vector<void*>* memory);

}  // namespace weft::mpi

// Makes MPI_X a weak alias of PMPI_X, the standard profiling hook.
#define WEFT_STR_(x) #x
#define WEFT_PMPI_ALIAS(name) _Pragma(WEFT_STR_(weak MPI_##name = PMPI_##name))
// WEFT_PMPI_ALIASES(A, B, ...): WEFT_PMPI_ALIAS for each name (up to 64).
#define WEFT_PARENS_ ()
#define WEFT_EXPAND_(...) WEFT_EXPAND3_(WEFT_EXPAND3_(WEFT_EXPAND3_(WEFT_EXPAND3_(__VA_ARGS__))))
#define WEFT_EXPAND3_(...) WEFT_EXPAND2_(WEFT_EXPAND2_(WEFT_EXPAND2_(WEFT_EXPAND2_(__VA_ARGS__))))
#define WEFT_EXPAND2_(...) WEFT_EXPAND1_(WEFT_EXPAND1_(WEFT_EXPAND1_(WEFT_EXPAND1_(__VA_ARGS__))))
#define WEFT_EXPAND1_(...) __VA_ARGS__
#define WEFT_PMPI_ALIASES(...) __VA_OPT__(WEFT_EXPAND_(WEFT_ALIAS_EACH_(__VA_ARGS__)))
#define WEFT_ALIAS_EACH_(name, ...) \
  WEFT_PMPI_ALIAS(name) __VA_OPT__(WEFT_ALIAS_AGAIN_ WEFT_PARENS_(__VA_ARGS__))
#define WEFT_ALIAS_AGAIN_() WEFT_ALIAS_EACH_
// The same for the MPIX_ extensions: MPIX_name a weak alias of PMPIX_name.
#define WEFT_PMPIX_ALIAS(name) _Pragma(WEFT_STR_(weak MPIX_##name = PMPIX_##name))
#define WEFT_PMPIX_ALIASES(...) __VA_OPT__(WEFT_EXPAND_(WEFT_XALIAS_EACH_(__VA_ARGS__)))
#define WEFT_XALIAS_EACH_(name, ...) WEFT_PMPIX_ALIAS(name) __VA_OPT__(WEFT_XALIAS_AGAIN_ WEFT_PARENS_(__VA_ARGS__))
#define WEFT_XALIAS_AGAIN_() WEFT_XALIAS_EACH_

// Every binding that touches shared state holds the entry lock for its duration, when it is on
// (runtime/entry_lock.h: MPI_THREAD_MULTIPLE or the asynchronous progress thread).
#define WEFT_ENTRY ::weft::EntryGuard weft_entry_guard_

// Every binding but the init/query family starts with this check.
#define WEFT_REQUIRE_INIT(fn)                                                            \
  do {                                                                                   \
    if (!::weft::mpi::g_running) [[unlikely]]                                            \
      return ::weft::mpi::not_initialized(fn);                                           \
  } while (0)

namespace weft::mpi {
int not_initialized(const char* fn);
}
