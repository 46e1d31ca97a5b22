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
#include "pt2pt/process_setup.h"
#include "pt2pt/transport.h"
#include "topo/topology.h"
#include "runtime/attributes.h"
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
                      info = 0x7, win = 0x8, keyval = 0x9, request = 0xb };
inline constexpr int make(Kind k, Obj o, uint32_t index) {
  return int((uint32_t(k) << kKindShift) | (uint32_t(o) << kObjShift) | (index & kIndexMask));
}
inline constexpr Kind kind_of(int h) { return Kind(uint32_t(h) >> kKindShift); }
inline constexpr Obj obj_of(int h) { return Obj((uint32_t(h) >> kObjShift) & 0xf); }
inline constexpr uint32_t index_of(int h) { return uint32_t(h) & kIndexMask; }
}  // namespace handle

struct Errhandler {
  MPI_Comm_errhandler_function* fn = nullptr;
  int refs = 1;
};

// A group: an ordered set of job ranks.
struct Group {
  std::vector<int> world_ranks;
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
  AttributeSet attrs;
  InfoEntries info;
  std::shared_ptr<const Topology> topo;
};

struct UserOp {
  MPI_User_function* fn = nullptr;
  MPI_User_function_c* fn_c = nullptr;  // MPI_Op_create_c: takes an MPI_Count count, in one call
  bool commute = true;
};

// The process's runtime (coll/runtime.h) and the MPI objects behind its handles.
struct State : coll::Runtime {
  HandleTable<CommEntry> comms{2};  // [0] world, [1] self, then user communicators
  HandleTable<Group> groups{1};     // [0] is reserved
  HandleTable<InfoEntries> infos{2};
  Attributes attributes;  // the keys of MPI keyval handles (index part) and their values
  HandleTable<UserOp> ops{1};
  ContextIds context_ids{};
  std::vector<std::unique_ptr<Errhandler>> errhandlers;  // user errhandlers, by index
  int thread_level = MPI_THREAD_SINGLE;
  double wtime_origin = 0;
  unsigned long main_thread = 0;
};

extern State* g_state;
extern bool g_initialized, g_finalized;

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

// The arguments a user reduction function needs, kept alive for the collective's duration.
struct UserOpCall {
  const UserOp* op = nullptr;
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
// Attribute copy on MPI_Comm_dup, delete on free.
int copy_attributes(MPI_Comm from, MPI_Comm to);
int delete_all_attributes(MPI_Comm comm);
const Datatype* lookup_datatype(MPI_Datatype h);
// Validates a datatype argument of a communication call: valid handle and committed
// (MPI_ERR_TYPE otherwise, raised on comm with a message naming `arg`). MPI_SUCCESS or the
// error code.
int check_datatype(MPI_Comm comm, const char* fn, MPI_Datatype h, const Datatype** out,
                   const char* arg = "datatype");
Request* lookup_request(MPI_Request h);
inline MPI_Request request_handle(const Request* r) {
  return handle::make(handle::direct, handle::request, r->index);
}

// Errors. Each builds an error code that carries the message, logs it where it is detected,
// invokes the communicator's error handler (MPI_COMM_WORLD's when comm is MPI_COMM_NULL) and
// returns the code for the binding to return.
int raise(MPI_Comm comm, int error_class, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
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
void fill_status(MPI_Status* st, const RequestStatus& rs);
void set_status_empty(MPI_Status* st);       // null or inactive requests: MPI_ANY_SOURCE, MPI_ANY_TAG
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
int check_comm_alive(const char* fn, MPI_Comm comm, const Comm& c);
// The communicator whose failed members fail r (its owner), or null.
inline const Comm* failure_scope(const Request* r) { return r->owner ? lookup_comm(r->owner) : nullptr; }
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

// Every binding but the init/query family starts with this check.
#define WEFT_REQUIRE_INIT(fn)                                                            \
  do {                                                                                   \
    if (!::weft::mpi::g_initialized || ::weft::mpi::g_finalized) [[unlikely]]            \
      return ::weft::mpi::not_initialized(fn);                                           \
  } while (0)

namespace weft::mpi {
int not_initialized(const char* fn);
}
