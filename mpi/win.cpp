// MPI one-sided communication (MPI-3 RMA): the C boundary of rma::MpiWindow
// (rma/mpi_window.h), which makes windows, moves the bytes and keeps the epochs. Here: the
// argument checks, the translation of handles (windows, communicators, groups, datatypes,
// operations) and of rma/'s outcomes to MPI error classes. Errors go to the window's
// communicator (a duplicate of the creating one), whose error handler is the window's: the
// creating communicator's at first, then MPI_Win_set_errhandler's (errors.cpp). The user's
// attributes of windows are in attr.cpp. Not supported yet (MPI_ERR_UNSUPPORTED_OPERATION):
// device memory attached to a dynamic window, compare-and-swap on types over 8 bytes and
// derived datatypes.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coll_call.h"
#include "runtime/log.h"
#include "runtime/profiler.h"
#include "window_entry.h"

namespace weft::mpi {

namespace {

static_assert(MPI_PROC_NULL == rma::kNoRank, "MPI_PROC_NULL is rma's rank of no target");

HandleTable<WinEntry>& wins() {
  static HandleTable<WinEntry>* t = new HandleTable<WinEntry>(1);  // never destroyed: handles outlive statics
  return *t;
}

MPI_Win win_handle(uint32_t index) { return handle::make(handle::direct, handle::win, index); }

// The MPI error of an outcome of rma/ (MPI_SUCCESS for none), raised on comm.
int rc_of(MPI_Comm comm, rma::Outcome o, const char* fn) {
  if (o.breach == rma::Breach::none) return o.ok() ? MPI_SUCCESS : raise_status(comm, o.status, fn);
  static constexpr int kClass[] = {MPI_SUCCESS,        MPI_ERR_RMA_SYNC, MPI_ERR_RMA_RANGE,
                                   MPI_ERR_RMA_ATTACH, MPI_ERR_WIN,      MPI_ERR_RMA_SHARED};
  return raise(comm, kClass[int(o.breach)], fn, "%s", error_detail().c_str());
}

// A valid window, and the outcome of call(its entry) as an MPI error.
template <class Call>
int on_win(const char* fn, MPI_Win win, Call&& call) {
  profiler::ApiScope api(fn);
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  return rc_of(e->comm, call(*e), fn);
}

// Creates a window over a duplicate of comm (its own communicator); *baseptr (if given) gets
// its memory.
int make_window(const char* fn, MPI_Comm comm, rma::Flavor flavor, void* base, MPI_Aint size, int disp_unit,
                MPI_Info info, void* baseptr, MPI_Win* win) {
  if (!g_running) [[unlikely]] return not_initialized(fn);
  Comm* c;
  if (int rc = check_coll_comm(fn, comm, &c); rc != MPI_SUCCESS) return rc;
  if (int rc = check_inter(fn, comm, *c); rc != MPI_SUCCESS) return rc;
  if (!win || (flavor != rma::Flavor::create && flavor != rma::Flavor::dynamic && !baseptr))
    return raise(comm, MPI_ERR_ARG, fn, "%s is NULL", win ? "baseptr" : "win");
  if (size < 0) return raise(comm, MPI_ERR_SIZE, fn, "negative size %lld (argument 'size')", (long long)size);
  if (disp_unit <= 0)
    return raise(comm, MPI_ERR_DISP, fn, "displacement unit %d must be positive (argument 'disp_unit')", disp_unit);
  if (size > 0 && !base && flavor == rma::Flavor::create)
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL base for a window of %lld bytes", (long long)size);
  const InfoEntries* hints = info == MPI_INFO_NULL ? nullptr : lookup_info(info);
  if (info != MPI_INFO_NULL && !hints)
    return raise(comm, MPI_ERR_INFO, fn, "invalid info 0x%x (argument 'info')", unsigned(info));
  auto e = std::make_unique<WinEntry>();
  if (hints) e->info = *hints;
  if (int rc = PMPI_Comm_dup(comm, &e->comm); rc != MPI_SUCCESS) return rc;
  rma::Outcome o =
      rma::MpiWindow::create(coll_context(*lookup_comm(e->comm)), flavor, base, size_t(size), disp_unit, &e->win);
  if (!o.ok()) {
    const int rc = rc_of(e->comm, o, fn);
    e->win.reset();
    (void)PMPI_Comm_free(&e->comm);
    return rc;
  }
  e->size = size;
  e->disp_unit = disp_unit;
  e->flavor = int(flavor);
  if (baseptr) {
    void* mem = e->win->base();
    memcpy(baseptr, &mem, sizeof mem);
  }
  *win = win_handle(wins().add(std::move(e)));
  return MPI_SUCCESS;
}

// A buffer argument of an access: a valid, committed datatype and a non-negative count.
int buffer_arg(const char* fn, const WinEntry& e, const void* buf, int count, MPI_Datatype dt, const char* arg,
               rma::Buffer* out) {
  if (count < 0) return raise(e.comm, MPI_ERR_COUNT, fn, "negative count %d (argument '%s_count')", count, arg);
  *out = rma::Buffer{buf, size_t(count), nullptr, arg};
  return check_datatype(e.comm, fn, dt, &out->type, arg);
}

// A request-based access (request given) is complete when the call returns, so its request is
// born complete; it needs a passive-target epoch.
int finish_request(int rc, const WinEntry& e, MPI_Request* request) {
  if (rc != MPI_SUCCESS) return rc;
  Request* r = completed_request(g_state->requests, RequestKind::coll, RequestStatus{});
  r->owner = e.comm;
  *request = request_handle(r);
  return MPI_SUCCESS;
}

using RequestArg = std::optional<MPI_Request*>;  // the request argument of the request-based forms

int check_request(const char* fn, const WinEntry& e, RequestArg request) {
  return request && !*request ? raise(e.comm, MPI_ERR_ARG, fn, "request is NULL") : MPI_SUCCESS;
}

int transfer(const char* fn, bool is_put, const void* origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Win win,
             RequestArg request = {}) {
  WinEntry* e;
  rma::Buffer o, t;
  int rc = check_win(fn, win, &e);
  if (rc == MPI_SUCCESS) rc = check_request(fn, *e, request);
  if (rc == MPI_SUCCESS) rc = buffer_arg(fn, *e, origin, origin_count, origin_type, "origin", &o);
  if (rc == MPI_SUCCESS) rc = buffer_arg(fn, *e, nullptr, target_count, target_type, "target", &t);
  if (rc != MPI_SUCCESS) return rc;
  const rma::Target to{target, disp, t.count, t.type};
  const rma::Epochs epochs = request ? rma::Epochs::passive : rma::Epochs::any;
  rc = rc_of(e->comm, is_put ? e->win->put(o, to, epochs) : e->win->get(o, to, epochs), fn);
  return request ? finish_request(rc, *e, *request) : rc;
}

struct AccArg {  // an origin or result argument of an accumulate
  const void* buf;
  int count;
  MPI_Datatype type;
};

int accumulate(const char* fn, AccArg origin, AccArg* result, int target, MPI_Aint disp, int target_count,
               MPI_Datatype target_type, MPI_Op op, MPI_Win win, RequestArg request = {}) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (int rc = check_request(fn, *e, request); rc != MPI_SUCCESS) return rc;
  ReduceOp rop;
  if (!lookup_builtin_op(op, &rop))
    return raise(e->comm, MPI_ERR_OP, fn, "accumulate takes predefined operations only (argument 'op')");
  rma::Buffer t, o, r;
  int rc = buffer_arg(fn, *e, nullptr, target_count, target_type, "target", &t);
  if (rc == MPI_SUCCESS && rop != ReduceOp::no_op)  // MPI_NO_OP ignores the origin
    rc = buffer_arg(fn, *e, origin.buf, origin.count, origin.type, "origin", &o);
  if (rc == MPI_SUCCESS && result) rc = buffer_arg(fn, *e, result->buf, result->count, result->type, "result", &r);
  if (rc != MPI_SUCCESS) return rc;
  const rma::Target to{target, disp, t.count, t.type};
  rc = rc_of(e->comm, e->win->accumulate(o, r, to, rop, request ? rma::Epochs::passive : rma::Epochs::any), fn);
  return request ? finish_request(rc, *e, *request) : rc;
}

// A valid window of one flavor (shared or dynamic), for the calls that only it takes.
int check_flavored(const char* fn, MPI_Win win, rma::Flavor want, WinEntry** e) {
  if (int rc = check_win(fn, win, e); rc != MPI_SUCCESS) return rc;
  if ((*e)->win->flavor() == want) return MPI_SUCCESS;
  return raise((*e)->comm, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by %s",
               want == rma::Flavor::shared ? "MPI_Win_allocate_shared" : "MPI_Win_create_dynamic");
}

// MPI_Win_post and MPI_Win_start: the group's members, and whether to notify or wait (not
// with MPI_MODE_NOCHECK).
template <class Open>
int open_pscw(const char* fn, MPI_Group group, int assert_flags, MPI_Win win, Open&& open) {
  return on_win(fn, win, [&](WinEntry& e) -> rma::Outcome {
    const Group* g = lookup_group(group);
    if (!g) return rma::refuse(Status::invalid_group, "invalid group 0x%x (argument 'group')", unsigned(group));
    return open(*e.win, g->world_ranks, !(assert_flags & MPI_MODE_NOCHECK));
  });
}

// MPI_Win_wait (block) and MPI_Win_test.
int wait_or_test(const char* fn, MPI_Win win, bool block, int* flag) {
  return on_win(fn, win, [&](WinEntry& e) -> rma::Outcome {
    if (!block && !flag) return rma::refuse(Status::invalid_arg, "flag is NULL");
    bool done = false;
    const rma::Outcome o = e.win->wait(block, &done);
    if (flag && o.ok()) *flag = done;
    return o;
  });
}

// RMA_EPOCH events: one opens in *slot (closing what was there) after the call that opens the
// epoch succeeded; it closes after the call that ends it.
void epoch_close(void** slot) {
  if (*slot) [[unlikely]] {
    profiler::stop(*slot);
    *slot = nullptr;
  }
}
void epoch_open(void** slot, const char* fn, int peer) {
  if (!profiler::wants(WEFT_PROFILER_RMA_EPOCH)) [[likely]] return;
  epoch_close(slot);
  weft_profiler_event_t ev = profiler::event(WEFT_PROFILER_RMA_EPOCH, fn);
  ev.peer = peer;
  *slot = profiler::start_top_level(ev);
}
// After a call on win that returned rc: runs f on its entry if the call succeeded.
template <class F>
int then_epoch(int rc, MPI_Win win, F&& f) {
  if (rc == MPI_SUCCESS && profiler::wants(WEFT_PROFILER_RMA_EPOCH)) [[unlikely]]
    if (WinEntry* e = lookup_win(win)) f(*e);
  return rc;
}

void free_entry(uint32_t index) {
  WinEntry* e = wins().get(index);
  epoch_close(&e->access_epoch);
  epoch_close(&e->exposure_epoch);
  for (auto& [target, event] : e->lock_epochs) epoch_close(&event);
  e->lock_epochs.clear();
  e->win.reset();
  (void)PMPI_Comm_free(&e->comm);
  wins().remove(index);
}

}  // namespace

WinEntry* lookup_win(MPI_Win w) {
  if (handle::kind_of(w) != handle::direct || handle::obj_of(w) != handle::win) return nullptr;
  return wins().get(handle::index_of(w));
}

int check_win(const char* fn, MPI_Win w, WinEntry** out) {
  if (!g_running) [[unlikely]] return not_initialized(fn);
  *out = lookup_win(w);
  if (!*out) return raise(MPI_COMM_NULL, MPI_ERR_WIN, fn, "invalid window 0x%x (argument 'win')", unsigned(w));
  return MPI_SUCCESS;
}

MPI_Win window_of_comm(MPI_Comm comm) {
  HandleTable<WinEntry>& t = wins();
  for (uint32_t i = 0; i < t.slots(); ++i) {
    if (const WinEntry* e = t.get(i); e && e->comm == comm) return win_handle(i);
  }
  return MPI_WIN_NULL;
}

void release_windows(std::vector<void*>* memory) {
  HandleTable<WinEntry>& t = wins();
  size_t left = 0;
  for (uint32_t i = 0; i < t.slots(); ++i) {
    if (WinEntry* e = t.get(i)) {
      ++left;
      e->win->release(memory);
      free_entry(i);
    }
  }
  if (left)
    WEFT_INFO(Subsys::rma, "MPI_Finalize released %zu window%s never freed (or whose MPI_Win_free failed)", left,
              left == 1 ? "" : "s");
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  WEFT_ENTRY;
  return make_window("MPI_Win_create", comm, rma::Flavor::create, base, size, disp_unit, info, nullptr, win);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  WEFT_ENTRY;
  return make_window("MPI_Win_allocate", comm, rma::Flavor::allocate, nullptr, size, disp_unit, info, baseptr, win);
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                             MPI_Win* win) {
  WEFT_ENTRY;
  return make_window("MPI_Win_allocate_shared", comm, rma::Flavor::shared, nullptr, size, disp_unit, info, baseptr,
                     win);
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  WEFT_ENTRY;
  return make_window("MPI_Win_create_dynamic", comm, rma::Flavor::dynamic, nullptr, 0, 1, info, nullptr, win);
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  WEFT_ENTRY;
  const char* fn = "MPI_Win_shared_query";
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (e->win->flavor() == rma::Flavor::dynamic)
    return raise(e->comm, MPI_ERR_RMA_FLAVOR, fn, "the window was made by MPI_Win_create_dynamic (it has no memory)");
  if (!size || !disp_unit || !baseptr) return raise(e->comm, MPI_ERR_ARG, fn, "NULL size, disp_unit or baseptr");
  size_t bytes = 0;
  void* base = nullptr;
  if (int rc = rc_of(e->comm, e->win->shared_query(rank, &bytes, disp_unit, &base), fn); rc != MPI_SUCCESS) return rc;
  *size = MPI_Aint(bytes);
  memcpy(baseptr, &base, sizeof base);
  return MPI_SUCCESS;
}

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  WEFT_ENTRY;
  const char* fn = "MPI_Win_attach";
  WinEntry* e;
  if (int rc = check_flavored(fn, win, rma::Flavor::dynamic, &e); rc != MPI_SUCCESS) return rc;
  if (size < 0) return raise(e->comm, MPI_ERR_SIZE, fn, "negative size %lld (argument 'size')", (long long)size);
  if (!base) return raise(e->comm, MPI_ERR_ARG, fn, "base is NULL");
  return rc_of(e->comm, e->win->attach(base, size_t(size)), fn);
}

int PMPI_Win_detach(MPI_Win win, const void* base) {
  WEFT_ENTRY;
  const char* fn = "MPI_Win_detach";
  WinEntry* e;
  if (int rc = check_flavored(fn, win, rma::Flavor::dynamic, &e); rc != MPI_SUCCESS) return rc;
  return rc_of(e->comm, e->win->detach(base), fn);
}

int PMPI_Win_free(MPI_Win* win) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Win_free");
  if (!win) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Win_free", "win is NULL");
  if (WinEntry* e = lookup_win(*win)) {
    if (int rc = delete_window_attributes(*win, *e); rc != MPI_SUCCESS) return rc;
  }
  if (int rc = on_win("MPI_Win_free", *win, [](WinEntry& e) { return e.win->close(); }); rc != MPI_SUCCESS) return rc;
  free_entry(handle::index_of(*win));
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}

int PMPI_Win_set_name(MPI_Win win, const char* name) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_set_name", win, &e); rc != MPI_SUCCESS) return rc;
  if (!name) return raise(e->comm, MPI_ERR_ARG, "MPI_Win_set_name", "name is NULL");
  e->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char* name, int* len) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_name", win, &e); rc != MPI_SUCCESS) return rc;
  if (!name || !len) return raise(e->comm, MPI_ERR_ARG, "MPI_Win_get_name", "NULL name or resultlen");
  copy_string(e->name, MPI_MAX_OBJECT_NAME, name, len);
  return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_set_info", win, &e); rc != MPI_SUCCESS) return rc;
  const InfoEntries* hints = lookup_info(info);
  if (!hints) return raise(e->comm, MPI_ERR_INFO, "MPI_Win_set_info", "invalid info 0x%x (argument 'info')", unsigned(info));
  for (const auto& [key, value] : *hints) e->info.set(key, value);
  return MPI_SUCCESS;
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_info", win, &e); rc != MPI_SUCCESS) return rc;
  if (!info_used) return raise(e->comm, MPI_ERR_ARG, "MPI_Win_get_info", "info_used is NULL");
  // The hints weft knows, at the values it works with unless given, then the others given.
  auto used = std::make_unique<InfoEntries>(std::vector<InfoEntries::Entry>{
      {"no_locks", "false"},
      {"accumulate_ordering", "rar,raw,war,waw"},
      {"accumulate_ops", "same_op_no_op"},
      {"same_size", "false"},
      {"same_disp_unit", "false"}});
  for (const auto& [key, value] : e->info) used->set(key, value);
  *info_used = handle::make(handle::direct, handle::info, g_state->infos.add(std::move(used)));
  return MPI_SUCCESS;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_group", win, &e); rc != MPI_SUCCESS) return rc;
  return PMPI_Comm_group(e->comm, group);
}

int PMPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
             int target_count, MPI_Datatype target_type, MPI_Win win) {
  WEFT_ENTRY;
  return transfer("MPI_Put", true, origin, origin_count, origin_type, target, disp, target_count, target_type, win);
}

int PMPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
             MPI_Datatype target_type, MPI_Win win) {
  WEFT_ENTRY;
  return transfer("MPI_Get", false, origin, origin_count, origin_type, target, disp, target_count, target_type, win);
}

int PMPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
              int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  WEFT_ENTRY;
  return transfer("MPI_Rput", true, origin, origin_count, origin_type, target, disp, target_count, target_type, win,
                  request);
}

int PMPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
              MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  WEFT_ENTRY;
  return transfer("MPI_Rget", false, origin, origin_count, origin_type, target, disp, target_count, target_type, win,
                  request);
}

int PMPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                    int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  WEFT_ENTRY;
  return accumulate("MPI_Accumulate", {origin, origin_count, origin_type}, nullptr, target, disp, target_count,
                    target_type, op, win);
}

int PMPI_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                     int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win, MPI_Request* request) {
  WEFT_ENTRY;
  return accumulate("MPI_Raccumulate", {origin, origin_count, origin_type}, nullptr, target, disp, target_count,
                    target_type, op, win, request);
}

int PMPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                        int result_count, MPI_Datatype result_type, int target, MPI_Aint disp, int target_count,
                        MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  WEFT_ENTRY;
  AccArg r{result, result_count, result_type};
  return accumulate("MPI_Get_accumulate", {origin, origin_count, origin_type}, &r, target, disp, target_count,
                    target_type, op, win);
}

int PMPI_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                         int result_count, MPI_Datatype result_type, int target, MPI_Aint disp, int target_count,
                         MPI_Datatype target_type, MPI_Op op, MPI_Win win, MPI_Request* request) {
  WEFT_ENTRY;
  AccArg r{result, result_count, result_type};
  return accumulate("MPI_Rget_accumulate", {origin, origin_count, origin_type}, &r, target, disp, target_count,
                    target_type, op, win, request);
}

int PMPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype dt, int target, MPI_Aint disp, MPI_Op op,
                      MPI_Win win) {
  WEFT_ENTRY;
  AccArg r{result, 1, dt};
  return accumulate("MPI_Fetch_and_op", {origin, 1, dt}, &r, target, disp, 1, dt, op, win);
}

int PMPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype dt, int target,
                          MPI_Aint disp, MPI_Win win) {
  WEFT_ENTRY;
  const char* fn = "MPI_Compare_and_swap";
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(e->comm, fn, dt, &d); rc != MPI_SUCCESS) return rc;
  // MPI allows integer, logical, multi-language and byte types only: no floating-point ones.
  switch (d->predefined ? d->basic : BasicType::none) {
    case BasicType::i8: case BasicType::u8: case BasicType::i16: case BasicType::u16: case BasicType::i32:
    case BasicType::u32: case BasicType::i64: case BasicType::u64: case BasicType::c_bool: case BasicType::byte:
      break;
    default:
      return raise(e->comm, MPI_ERR_TYPE, fn, "%s is not an integer, logical or byte type (compare-and-swap)",
                   d->name.c_str());
  }
  return rc_of(e->comm, e->win->compare_and_swap(origin, compare, result, d, target, disp), fn);
}

int PMPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  WEFT_ENTRY;
  const int rc = open_pscw("MPI_Win_post", group, assert_flags, win, [](rma::MpiWindow& w, const std::vector<int>& ranks,
                                                                        bool notify) { return w.post(ranks, notify); });
  return then_epoch(rc, win, [](WinEntry& e) { epoch_open(&e.exposure_epoch, "MPI_Win_post", -1); });
}

int PMPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  WEFT_ENTRY;
  const int rc = open_pscw("MPI_Win_start", group, assert_flags, win, [](rma::MpiWindow& w, const std::vector<int>& ranks,
                                                                         bool wait) { return w.start(ranks, wait); });
  return then_epoch(rc, win, [](WinEntry& e) { epoch_open(&e.access_epoch, "MPI_Win_start", -1); });
}

int PMPI_Win_wait(MPI_Win win) {
  WEFT_ENTRY;
  const int rc = wait_or_test("MPI_Win_wait", win, true, nullptr);
  return then_epoch(rc, win, [](WinEntry& e) { epoch_close(&e.exposure_epoch); });
}

int PMPI_Win_test(MPI_Win win, int* flag) {
  WEFT_ENTRY;
  const int rc = wait_or_test("MPI_Win_test", win, false, flag);
  return then_epoch(rc, win, [flag](WinEntry& e) {
    if (*flag) epoch_close(&e.exposure_epoch);
  });
}

int PMPI_Win_lock(int lock_type, int target, int assert_flags, MPI_Win win) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_lock", win, &e); rc != MPI_SUCCESS) return rc;
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
    return raise(e->comm, MPI_ERR_LOCKTYPE, "MPI_Win_lock", "invalid lock type %d (argument 'lock_type')", lock_type);
  (void)assert_flags;  // MPI_MODE_NOCHECK: the lock is still taken (always correct)
  const auto type = lock_type == MPI_LOCK_EXCLUSIVE ? rma::LockType::exclusive : rma::LockType::shared;
  profiler::ApiScope api("MPI_Win_lock");
  const int rc = rc_of(e->comm, e->win->lock(target, type), "MPI_Win_lock");
  return then_epoch(rc, win, [target](WinEntry& w) { epoch_open(&w.lock_epochs[target], "MPI_Win_lock", target); });
}

// The synchronisation calls that pass straight to the window: name, parameters, the call.
#define WEFT_WIN_CALL(Name, params, call) \
  int PMPI_##Name params { WEFT_ENTRY; return on_win("MPI_" #Name, win, [&](WinEntry& e) { return e.win->call; }); }

// The same, then an RMA_EPOCH event opened or closed (`epoch`, run on the entry after success).
#define WEFT_WIN_EPOCH_CALL(Name, params, call, epoch)                                                  \
  int PMPI_##Name params {                                                                               \
    WEFT_ENTRY;                                                                                          \
    const int rc = on_win("MPI_" #Name, win, [&](WinEntry& e) { return e.win->call; });                 \
    return then_epoch(rc, win, [&](WinEntry& e) { epoch; });                                             \
  }

// A fence ends the access epoch and, unless no epoch follows (MPI_MODE_NOSUCCEED), opens the next.
WEFT_WIN_EPOCH_CALL(Win_fence, (int assert_flags, MPI_Win win), fence(!(assert_flags & MPI_MODE_NOSUCCEED)),
                    if (assert_flags & MPI_MODE_NOSUCCEED) epoch_close(&e.access_epoch);
                    else epoch_open(&e.access_epoch, "MPI_Win_fence", -1))
WEFT_WIN_EPOCH_CALL(Win_complete, (MPI_Win win), complete(), epoch_close(&e.access_epoch))
WEFT_WIN_EPOCH_CALL(Win_unlock, (int target, MPI_Win win), unlock(target), epoch_close(&e.lock_epochs[target]))
WEFT_WIN_EPOCH_CALL(Win_lock_all, (int, MPI_Win win), lock_all(),  // the assertions change nothing
                    epoch_open(&e.access_epoch, "MPI_Win_lock_all", -1))
WEFT_WIN_EPOCH_CALL(Win_unlock_all, (MPI_Win win), unlock_all(), epoch_close(&e.access_epoch))
#undef WEFT_WIN_EPOCH_CALL
WEFT_WIN_CALL(Win_flush, (int target, MPI_Win win), flush(target, true))
WEFT_WIN_CALL(Win_flush_local, (int target, MPI_Win win), flush(target, false))
WEFT_WIN_CALL(Win_flush_all, (MPI_Win win), flush_all(true))
WEFT_WIN_CALL(Win_flush_local_all, (MPI_Win win), flush_all(false))
#undef WEFT_WIN_CALL

int PMPI_Win_sync(MPI_Win win) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_sync", win, &e); rc != MPI_SUCCESS) return rc;
  e->win->sync();
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Win_create, Win_allocate, Win_allocate_shared, Win_create_dynamic, Win_shared_query,
                  Win_attach, Win_detach, Win_free, Win_set_name, Win_get_name, Win_set_info, Win_get_info,
                  Win_get_group, Put, Get, Rput, Rget, Accumulate, Raccumulate, Get_accumulate, Rget_accumulate, Fetch_and_op,
                  Compare_and_swap, Win_fence, Win_post, Win_start, Win_complete, Win_wait, Win_test, Win_lock,
                  Win_unlock, Win_lock_all, Win_unlock_all, Win_flush, Win_flush_local, Win_flush_all,
                  Win_flush_local_all, Win_sync)
