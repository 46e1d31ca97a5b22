// Shared by the collective bindings (coll.cpp, coll_data.cpp): an MPI collective call handed
// to coll's call machinery (coll/call.h: buffer lay-out, packing, planning, the plan cache and
// the runs in flight), with the errors it returns raised on the communicator, and the request
// handle of a non-blocking or persistent call.
#pragma once
#include <cstddef>
#include <memory>

#include "coll/call.h"
#include "state.h"

namespace weft::mpi {

using CollMode = coll::Mode;

// Whether WEFT_COLL_CHECK compares c's collective calls across its members (CollCall::check_same).
inline bool checks_calls(const Comm& c) { return g_state->coll_settings.check_calls && !c.inter; }

class CollCall {
 public:
  CollCall(const char* fn, MPI_Comm comm, Comm* c, CollMode mode)
      : fn_(fn), comm_(comm), c_(c), mode_(mode), call_(coll_context(*c), mode, fn) {}

  // Keeps an object alive as long as the schedule (a user operation's arguments).
  void keep(std::shared_ptr<const void> object) { call_.keep(std::move(object)); }

  // The described call in one step: planned by coll (or an identical earlier call's plan
  // reused) and run; *request receives the request of a non-blocking or persistent one.
  // MPI_SUCCESS or the raised error.
  int run(const coll::Description& d, MPI_Request* request);
  // A blocking or non-blocking call identical to an earlier one run with that call's plan (coll::Call::reused):
  // true, *rc its result.
  bool reused(const coll::Description& d, MPI_Request* request, int* rc) {
    if (!call_.reused(d)) return false;
    *rc = check_same(d);
    if (*rc == MPI_SUCCESS) *rc = execute(request);
    return true;
  }

 private:
  int execute(MPI_Request* request);
  // WEFT_COLL_CHECK: the arguments every member must give alike, compared across the members
  // (coll/call_check.h). MPI_SUCCESS where the check is off: one branch.
  int check_same(const coll::Description& d) {
    if (!checks_calls(*c_)) [[likely]] return MPI_SUCCESS;
    return compare_across_members(d);
  }
  int compare_across_members(const coll::Description& d);

  const char* fn_;
  MPI_Comm comm_;
  Comm* c_;
  CollMode mode_;
  coll::Call call_;
};

// Argument checks shared by the bindings: MPI_SUCCESS or the raised error code.
int check_coll_comm(const char* fn, MPI_Comm comm, Comm** c);
// A collective's start: comm valid (*c), and a request argument where the mode needs one.
int check_coll_call(const char* fn, MPI_Comm comm, CollMode mode, MPI_Request* request, Comm** c);
int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root);
// A count >= 0 that coll takes (it keeps counts in an int: a larger one is MPI_ERR_COUNT).
int check_count(const char* fn, MPI_Comm comm, MPI_Count count, const char* arg);

// An array of counts or displacements as a binding gives it: int, or MPI_Count (counts) and
// MPI_Aint (displacements) in the large-count (_c) forms.
template <class Wide>
struct WideArray {
  const int* narrow = nullptr;
  const Wide* wide = nullptr;
  WideArray() = default;
  WideArray(const int* p) : narrow(p) {}  // NOLINT: either kind converts implicitly
  WideArray(const Wide* p) : wide(p) {}   // NOLINT
  WideArray(std::nullptr_t) {}            // NOLINT
  explicit operator bool() const { return narrow || wide; }
  MPI_Count operator[](size_t k) const { return narrow ? MPI_Count(narrow[k]) : MPI_Count(wide[k]); }
};
using Counts = WideArray<MPI_Count>;
using Displs = WideArray<MPI_Aint>;
// MPI_ERR_COMM on an intercommunicator (Scan, Exscan, the neighbourhood collectives).
int check_inter(const char* fn, MPI_Comm comm, const Comm& c);
// The root as coll takes it: on an intercommunicator, MPI_ROOT and MPI_PROC_NULL become
// coll::kRootHere and coll::kRootElsewhere (coll/inter/inter.h).
int coll_root(const Comm& c, int root);

}  // namespace weft::mpi

// The three forms of a collective binding from one list of the blocking form's parameters:
// PMPI_<B> (blocking), PMPI_<I> (non-blocking) and PMPI_<B>_init (persistent, its MPI_Info
// unused), each one call of impl(fn, mode, args..., request), and their weak MPI_ aliases.
// params and args are parenthesised lists. WEFT_COLL_FORMS_C makes the large-count forms
// PMPI_<B>_c, PMPI_<I>_c and PMPI_<B>_init_c the same way.
#define WEFT_COLL_UNPAREN_(...) __VA_ARGS__
#define WEFT_COLL_FORMS(B, I, params, impl, args) WEFT_COLL_FORMS_(B, I, , params, impl, args)
#define WEFT_COLL_FORMS_C(B, I, params, impl, args) WEFT_COLL_FORMS_(B, I, _c, params, impl, args)
#define WEFT_COLL_FORMS_(B, I, c, params, impl, args)                                                        \
  int PMPI_##B##c(WEFT_COLL_UNPAREN_ params) {                                                               \
    WEFT_ENTRY;                                                                                              \
    WEFT_REQUIRE_INIT("MPI_" #B #c);                                                                         \
    return impl("MPI_" #B #c, ::weft::mpi::CollMode::blocking, WEFT_COLL_UNPAREN_ args, nullptr);            \
  }                                                                                                          \
  int PMPI_##I##c(WEFT_COLL_UNPAREN_ params, MPI_Request* request) {                                         \
    WEFT_ENTRY;                                                                                              \
    WEFT_REQUIRE_INIT("MPI_" #I #c);                                                                         \
    return impl("MPI_" #I #c, ::weft::mpi::CollMode::nonblocking, WEFT_COLL_UNPAREN_ args, request);         \
  }                                                                                                          \
  int PMPI_##B##_init##c(WEFT_COLL_UNPAREN_ params, MPI_Info, MPI_Request* request) {                        \
    WEFT_ENTRY;                                                                                              \
    WEFT_REQUIRE_INIT("MPI_" #B "_init" #c);                                                                 \
    return impl("MPI_" #B "_init" #c, ::weft::mpi::CollMode::persistent, WEFT_COLL_UNPAREN_ args, request);  \
  }                                                                                                          \
  WEFT_PMPI_ALIAS(B##c)                                                                                      \
  WEFT_PMPI_ALIAS(I##c)                                                                                      \
  WEFT_PMPI_ALIAS(B##_init##c)
