// MPI one-sided communication (MPI-3 RMA) on rma::Window: window creation and freeing, the
// predefined attributes and names, Put / Get / Accumulate / Fetch_and_op / Compare_and_swap,
// and the fence and passive-target (lock) synchronisation. Epochs and ranges are checked here,
// before any byte moves: an access outside the target's window is MPI_ERR_RMA_RANGE, one
// outside an access epoch MPI_ERR_RMA_SYNC. Errors go to the window's communicator (a
// duplicate of the creating one, with its error handler).
// Not supported yet (MPI_ERR_UNSUPPORTED_OPERATION, or not declared here and so in
// unsupported.cpp): shared and dynamic windows, general active target (post / start /
// complete / wait), the request-based forms, accumulate on derived datatypes and on elements
// other than 1, 2, 4 or 8 bytes (long double, the complex types of 16 bytes and more, the
// minloc/maxloc pairs of more than 8 bytes), non-contiguous datatypes, window attributes of
// the user's, info and error handlers of windows, device memory.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll_call.h"
#include "datatype_api.h"
#include "rma/window.h"
#include "runtime/core/memkind.h"
#include "runtime/core/log.h"
#include "state.h"

namespace weft::mpi {

namespace {

struct WinEntry {
  MPI_Comm comm = MPI_COMM_NULL;  // the window's own duplicate of the creating communicator
  std::unique_ptr<rma::Window> window;
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  bool owns_memory = false;  // MPI_Win_allocate: freed with the window
  std::string name;
  bool fence_epoch = false;  // between fences (not after MPI_MODE_NOSUCCEED)
  bool lock_all = false;
};

HandleTable<WinEntry>& wins() {
  static HandleTable<WinEntry>* t = new HandleTable<WinEntry>(1);  // never destroyed: handles outlive statics
  return *t;
}

WinEntry* lookup_win(MPI_Win w) {
  if (handle::kind_of(w) != handle::direct || handle::obj_of(w) != handle::win) return nullptr;
  return wins().get(handle::index_of(w));
}

int check_win(const char* fn, MPI_Win w, WinEntry** out) {
  *out = lookup_win(w);
  if (!*out) return raise(MPI_COMM_NULL, MPI_ERR_WIN, fn, "invalid window 0x%x (argument 'win')", unsigned(w));
  return MPI_SUCCESS;
}

// The collective part of creating a window over [base, size) on comm.
int make_window(const char* fn, MPI_Comm comm, void* base, MPI_Aint size, int disp_unit, int flavor, bool owns,
                MPI_Win* win) {
  if (!win) return raise(comm, MPI_ERR_ARG, fn, "win is NULL");
  if (size < 0) return raise(comm, MPI_ERR_SIZE, fn, "negative size %lld (argument 'size')", (long long)size);
  if (disp_unit <= 0)
    return raise(comm, MPI_ERR_DISP, fn, "displacement unit %d must be positive (argument 'disp_unit')", disp_unit);
  if (size > 0 && !base) return raise(comm, MPI_ERR_BUFFER, fn, "NULL base for a window of %lld bytes", (long long)size);
  if (memkind_device_possible() && size > 0 && memkind_query(base).kind == MemKind::cuda_device)
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "windows in GPU device memory are not supported yet");
  auto e = std::make_unique<WinEntry>();
  if (int rc = PMPI_Comm_dup(comm, &e->comm); rc != MPI_SUCCESS) return rc;
  Comm* c = lookup_comm(e->comm);
  e->base = base;
  e->size = size;
  e->disp_unit = disp_unit;
  e->flavor = flavor;
  e->owns_memory = owns;
  e->window = std::make_unique<rma::Window>(*g_state->transport, c->world_ranks, c->rank);
  Status s = e->window->register_memory(base, size_t(size), disp_unit);
  // Every rank learns whether every rank registered, and the largest record, before any
  // exchange of keys.
  long long mine[2] = {s == Status::ok ? 0 : 1, (long long)e->window->key_space()};
  long long all[2] = {0, 0};
  int rc = PMPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, e->comm);
  if (rc == MPI_SUCCESS && all[0] != 0)
    rc = s != Status::ok ? raise_status(e->comm, s, fn)
                         : raise(e->comm, MPI_ERR_WIN, fn, "another rank could not register its window memory");
  const size_t record_bytes = sizeof(rma::PeerHeader) + size_t(all[1]);
  std::vector<unsigned char> records(record_bytes * size_t(c->size));
  if (rc == MPI_SUCCESS) {
    std::vector<unsigned char> own = e->window->record(size_t(all[1]));
    rc = PMPI_Allgather(own.data(), int(record_bytes), MPI_BYTE, records.data(), int(record_bytes), MPI_BYTE, e->comm);
  }
  if (rc == MPI_SUCCESS && (s = e->window->connect(records, record_bytes)) != Status::ok)
    rc = raise_status(e->comm, s, fn);
  if (rc != MPI_SUCCESS) {
    e->window.reset();
    (void)PMPI_Comm_free(&e->comm);
    return rc;
  }
  *win = handle::make(handle::direct, handle::win, wins().add(std::move(e)));
  return MPI_SUCCESS;
}

// A contiguous buffer of count x dt: its bytes, and where they start relative to buf.
int contiguous_bytes(const char* fn, MPI_Comm comm, MPI_Datatype dt, int count, const char* arg, size_t* bytes,
                     ptrdiff_t* offset, const Datatype** type = nullptr) {
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument '%s_count')", count, arg);
  const Datatype* d = nullptr;
  if (int rc = check_datatype(comm, fn, dt, &d, arg); rc != MPI_SUCCESS) return rc;
  if (!contiguous_span(d, size_t(count), offset))
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "one-sided access with a non-contiguous %s datatype is not supported yet", arg);
  *bytes = packed_size(d, size_t(count));
  if (type) *type = d;
  return MPI_SUCCESS;
}

// The checks every access makes: a valid target, an open access epoch to it, the target
// range inside its window.
int check_access(const char* fn, WinEntry& e, int target, MPI_Aint disp, size_t bytes) {
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= e.window->size())
    return raise(e.comm, MPI_ERR_RANK, fn, "invalid target rank %d (argument 'target_rank'; the window has %d ranks)",
                 target, e.window->size());
  if (!e.fence_epoch && !e.lock_all && e.window->locked(target) == rma::LockType::none)
    return raise(e.comm, MPI_ERR_RMA_SYNC, fn,
                 "no access epoch to rank %d is open (MPI_Win_fence, MPI_Win_lock or MPI_Win_lock_all first)",
                 target);
  if (disp < 0 || !e.window->in_range(target, uint64_t(disp), bytes))
    return raise(e.comm, MPI_ERR_RMA_RANGE, fn,
                 "access of %zu bytes at displacement %lld (argument 'target_disp') is outside rank %d's window",
                 bytes, (long long)disp, target);
  return MPI_SUCCESS;
}

int status_rc(WinEntry& e, Status s, const char* fn) { return s == Status::ok ? MPI_SUCCESS : raise_status(e.comm, s, fn); }

int transfer(const char* fn, bool is_put, void* origin, int origin_count, MPI_Datatype origin_type, int target,
             MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Win win) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  size_t ob = 0, tb = 0;
  ptrdiff_t oo = 0, to = 0;
  if (int rc = contiguous_bytes(fn, e->comm, origin_type, origin_count, "origin", &ob, &oo); rc != MPI_SUCCESS) return rc;
  if (int rc = contiguous_bytes(fn, e->comm, target_type, target_count, "target", &tb, &to); rc != MPI_SUCCESS) return rc;
  if (ob != tb)
    return raise(e->comm, MPI_ERR_TYPE, fn, "the origin has %zu bytes of data and the target %zu", ob, tb);
  if (int rc = check_access(fn, *e, target, disp, tb); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL || ob == 0) return MPI_SUCCESS;
  if (!origin) return raise(e->comm, MPI_ERR_BUFFER, fn, "NULL buffer (argument 'origin_addr')");
  if (to != 0)
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "a target datatype with a nonzero lower bound is not supported yet");
  char* o = static_cast<char*>(origin) + oo;
  const uint64_t at = e->window->offset_of(target, uint64_t(disp));
  Status s = is_put ? e->window->put(target, o, ob, at) : e->window->get(target, o, ob, at);
  return status_rc(*e, s, fn);
}

// The remote atomic for a predefined op, or false where none applies.
bool atomic_for(ReduceOp op, Transport::RmaAtomic* out) {
  switch (op) {
    case ReduceOp::sum: *out = Transport::RmaAtomic::add; return true;
    case ReduceOp::band: *out = Transport::RmaAtomic::band; return true;
    case ReduceOp::bor: *out = Transport::RmaAtomic::bor; return true;
    case ReduceOp::bxor: *out = Transport::RmaAtomic::bxor; return true;
    case ReduceOp::replace: *out = Transport::RmaAtomic::swap; return true;
    case ReduceOp::no_op: *out = Transport::RmaAtomic::add; return true;  // adds 0
    default: return false;
  }
}

bool integer_word(BasicType t) {
  return t == BasicType::i32 || t == BasicType::u32 || t == BasicType::i64 || t == BasicType::u64;
}

// Accumulate (result null), Get_accumulate and Fetch_and_op (result: the old values): element
// by element, each one atomic at the target. One remote atomic where UCX has it (sum, band,
// bor, bxor, replace and no_op on 4- and 8-byte integers), else compare-and-swap on the word
// holding the element (Window::update_element) with the host reduction applied in between.
int accumulate(const char* fn, const void* origin, void* result, int count, MPI_Datatype dt, int target,
               MPI_Aint disp, MPI_Op op, MPI_Win win) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  size_t bytes = 0;
  ptrdiff_t offset = 0;
  const Datatype* d = nullptr;
  if (int rc = contiguous_bytes(fn, e->comm, dt, count, "origin", &bytes, &offset, &d); rc != MPI_SUCCESS) return rc;
  ReduceOp rop;
  if (!lookup_builtin_op(op, &rop))
    return raise(e->comm, MPI_ERR_OP, fn, "accumulate takes predefined operations only (argument 'op')");
  if (!d->predefined)
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "accumulate on a derived datatype is not supported yet");
  if (!reduce_op_supports(rop, d->basic))
    return raise(e->comm, MPI_ERR_OP, fn, "%s is not defined on %s", reduce_op_name(rop), basic_type_name(d->basic));
  const size_t elem = size_t(d->size);
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8)
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "accumulate on %zu-byte elements (%s) is not supported yet (1, 2, 4 and 8 bytes are)", elem,
                 basic_type_name(d->basic));
  if (int rc = check_access(fn, *e, target, disp, bytes); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL || bytes == 0) return MPI_SUCCESS;
  if (!origin && rop != ReduceOp::no_op) return raise(e->comm, MPI_ERR_BUFFER, fn, "NULL buffer (argument 'origin_addr')");
  Transport::RmaAtomic aop;
  const bool native = integer_word(d->basic) && atomic_for(rop, &aop);
  const char* in = static_cast<const char*>(origin) + offset;
  char* out = result ? static_cast<char*>(result) + offset : nullptr;
  const uint64_t zero = 0, first = e->window->offset_of(target, uint64_t(disp));
  for (size_t i = 0; i < bytes / elem; ++i) {
    const char* value = rop == ReduceOp::no_op ? reinterpret_cast<const char*>(&zero) : in + i * elem;
    uint64_t old = 0;
    Status s = native ? e->window->atomic(target, aop, value, &old, elem, first + i * elem)
                      : e->window->update_element(
                            target, first + i * elem, elem,
                            [&](void* element) { (void)reduce_local(rop, d->basic, value, element, 1); }, &old);
    if (s != Status::ok) return status_rc(*e, s, fn);
    if (out) memcpy(out + i * elem, &old, elem);
  }
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, MPI_Win* win) {
  WEFT_REQUIRE_INIT("MPI_Win_create");
  Comm* c;
  if (int rc = check_coll_comm("MPI_Win_create", comm, &c); rc != MPI_SUCCESS) return rc;
  return make_window("MPI_Win_create", comm, base, size, disp_unit, MPI_WIN_FLAVOR_CREATE, false, win);
}
WEFT_PMPI_ALIAS(Win_create)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  WEFT_REQUIRE_INIT("MPI_Win_allocate");
  Comm* c;
  if (int rc = check_coll_comm("MPI_Win_allocate", comm, &c); rc != MPI_SUCCESS) return rc;
  if (!baseptr) return raise(comm, MPI_ERR_ARG, "MPI_Win_allocate", "baseptr is NULL");
  if (size < 0) return raise(comm, MPI_ERR_SIZE, "MPI_Win_allocate", "negative size %lld", (long long)size);
  void* mem = size > 0 ? calloc(1, size_t(size)) : nullptr;
  if (size > 0 && !mem)
    return raise(comm, MPI_ERR_NO_MEM, "MPI_Win_allocate", "cannot allocate %lld bytes", (long long)size);
  int rc = make_window("MPI_Win_allocate", comm, mem, size, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, true, win);
  if (rc != MPI_SUCCESS) {
    free(mem);
    return rc;
  }
  memcpy(baseptr, &mem, sizeof mem);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_allocate)

int PMPI_Win_free(MPI_Win* win) {
  WEFT_REQUIRE_INIT("MPI_Win_free");
  if (!win) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Win_free", "win is NULL");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_free", *win, &e); rc != MPI_SUCCESS) return rc;
  if (e->lock_all)
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free", "the window is still locked (MPI_Win_unlock_all first)");
  for (int q = 0; q < e->window->size(); ++q)
    if (e->window->locked(q) != rma::LockType::none)
      return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free", "rank %d of the window is still locked", q);
  // Every rank's accesses have completed before any rank's memory goes away.
  if (int rc = PMPI_Barrier(e->comm); rc != MPI_SUCCESS) return rc;
  e->window.reset();
  (void)PMPI_Comm_free(&e->comm);
  if (e->owns_memory) free(e->base);
  wins().remove(handle::index_of(*win));
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_free)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void* value, int* flag) {
  WEFT_REQUIRE_INIT("MPI_Win_get_attr");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_attr", win, &e); rc != MPI_SUCCESS) return rc;
  if (!value || !flag) return raise(e->comm, MPI_ERR_ARG, "MPI_Win_get_attr", "NULL attribute_val or flag");
  void* p = nullptr;
  switch (keyval) {
    case MPI_WIN_BASE: p = e->base; break;
    case MPI_WIN_SIZE: p = &e->size; break;
    case MPI_WIN_DISP_UNIT: p = &e->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: p = &e->flavor; break;
    case MPI_WIN_MODEL: p = &e->model; break;
    default:
      return raise(e->comm, MPI_ERR_KEYVAL, "MPI_Win_get_attr",
                   "keyval %d: only the predefined window attributes are supported yet", keyval);
  }
  memcpy(value, &p, sizeof p);
  *flag = 1;
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_get_attr)

int PMPI_Win_set_name(MPI_Win win, const char* name) {
  WEFT_REQUIRE_INIT("MPI_Win_set_name");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_set_name", win, &e); rc != MPI_SUCCESS) return rc;
  if (!name) return raise(e->comm, MPI_ERR_ARG, "MPI_Win_set_name", "name is NULL");
  e->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char* name, int* len) {
  WEFT_REQUIRE_INIT("MPI_Win_get_name");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_name", win, &e); rc != MPI_SUCCESS) return rc;
  if (!name || !len) return raise(e->comm, MPI_ERR_ARG, "MPI_Win_get_name", "NULL name or resultlen");
  memcpy(name, e->name.c_str(), e->name.size() + 1);
  *len = int(e->name.size());
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_get_name)

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  WEFT_REQUIRE_INIT("MPI_Win_get_group");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_get_group", win, &e); rc != MPI_SUCCESS) return rc;
  return PMPI_Comm_group(e->comm, group);
}
WEFT_PMPI_ALIAS(Win_get_group)

int PMPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
             int target_count, MPI_Datatype target_type, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Put");
  return transfer("MPI_Put", true, const_cast<void*>(origin), origin_count, origin_type, target, disp, target_count,
                  target_type, win);
}
WEFT_PMPI_ALIAS(Put)

int PMPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
             MPI_Datatype target_type, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Get");
  return transfer("MPI_Get", false, origin, origin_count, origin_type, target, disp, target_count, target_type, win);
}
WEFT_PMPI_ALIAS(Get)

int PMPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                    int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Accumulate");
  if (origin_count != target_count || origin_type != target_type) {
    WinEntry* e;
    if (int rc = check_win("MPI_Accumulate", win, &e); rc != MPI_SUCCESS) return rc;
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Accumulate",
                 "different origin and target counts or datatypes are not supported yet");
  }
  return accumulate("MPI_Accumulate", origin, nullptr, origin_count, origin_type, target, disp, op, win);
}
WEFT_PMPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                        int result_count, MPI_Datatype result_type, int target, MPI_Aint disp, int target_count,
                        MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Get_accumulate");
  const bool no_op = op == MPI_NO_OP;  // the origin arguments are ignored then
  if ((!no_op && (origin_count != target_count || origin_type != target_type)) || result_count != target_count ||
      result_type != target_type) {
    WinEntry* e;
    if (int rc = check_win("MPI_Get_accumulate", win, &e); rc != MPI_SUCCESS) return rc;
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Get_accumulate",
                 "different origin, result and target counts or datatypes are not supported yet");
  }
  if (target_count > 0 && !result) {
    WinEntry* e;
    if (int rc = check_win("MPI_Get_accumulate", win, &e); rc != MPI_SUCCESS) return rc;
    return raise(e->comm, MPI_ERR_BUFFER, "MPI_Get_accumulate", "NULL buffer (argument 'result_addr')");
  }
  // With MPI_NO_OP the values are only fetched: the result buffer stands in for the origin.
  return accumulate("MPI_Get_accumulate", no_op ? result : origin, result, target_count, target_type, target, disp,
                    op, win);
}
WEFT_PMPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype dt, int target, MPI_Aint disp, MPI_Op op,
                      MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Fetch_and_op");
  if (!result) {
    WinEntry* e;
    if (int rc = check_win("MPI_Fetch_and_op", win, &e); rc != MPI_SUCCESS) return rc;
    return raise(e->comm, MPI_ERR_BUFFER, "MPI_Fetch_and_op", "NULL buffer (argument 'result_addr')");
  }
  static const uint64_t zero = 0;
  return accumulate("MPI_Fetch_and_op", origin ? origin : &zero, result, 1, dt, target, disp, op, win);
}
WEFT_PMPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype dt, int target,
                          MPI_Aint disp, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Compare_and_swap");
  WinEntry* e;
  if (int rc = check_win("MPI_Compare_and_swap", win, &e); rc != MPI_SUCCESS) return rc;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(e->comm, "MPI_Compare_and_swap", dt, &d); rc != MPI_SUCCESS) return rc;
  if (!d->predefined || !integer_word(d->basic))
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Compare_and_swap",
                 "compare-and-swap on %s is not supported yet (4- and 8-byte integers are)",
                 d->predefined ? basic_type_name(d->basic) : "a derived datatype");
  if (!origin || !compare || !result)
    return raise(e->comm, MPI_ERR_BUFFER, "MPI_Compare_and_swap", "NULL origin, compare or result buffer");
  const size_t elem = basic_type_size(d->basic);
  if (int rc = check_access("MPI_Compare_and_swap", *e, target, disp, elem); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  uint64_t io = 0;
  memcpy(&io, compare, elem);
  Status s = e->window->atomic(target, Transport::RmaAtomic::cswap, origin, &io, elem,
                               e->window->offset_of(target, uint64_t(disp)));
  if (s != Status::ok) return raise_status(e->comm, s, "MPI_Compare_and_swap");
  memcpy(result, &io, elem);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Compare_and_swap)

int PMPI_Win_fence(int assert_flags, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_fence");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_fence", win, &e); rc != MPI_SUCCESS) return rc;
  if (e->lock_all) return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_fence", "inside a lock_all epoch");
  if (Status s = e->window->flush(-1); s != Status::ok) return raise_status(e->comm, s, "MPI_Win_fence");
  // The barrier ends every rank's accesses of the closing epoch before any rank starts the
  // next one (and before local stores to the window are read remotely).
  if (int rc = PMPI_Barrier(e->comm); rc != MPI_SUCCESS) return rc;
  e->fence_epoch = !(assert_flags & MPI_MODE_NOSUCCEED);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_fence)

int PMPI_Win_lock(int lock_type, int target, int assert_flags, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_lock");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_lock", win, &e); rc != MPI_SUCCESS) return rc;
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
    return raise(e->comm, MPI_ERR_LOCKTYPE, "MPI_Win_lock", "invalid lock type %d (argument 'lock_type')", lock_type);
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= e->window->size())
    return raise(e->comm, MPI_ERR_RANK, "MPI_Win_lock", "invalid target rank %d (argument 'rank')", target);
  if (e->lock_all || e->window->locked(target) != rma::LockType::none)
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock", "rank %d is already locked by this rank", target);
  if (e->fence_epoch) return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock", "inside a fence epoch");
  (void)assert_flags;  // MPI_MODE_NOCHECK: the lock is still taken (always correct)
  const auto type = lock_type == MPI_LOCK_EXCLUSIVE ? rma::LockType::exclusive : rma::LockType::shared;
  return status_rc(*e, e->window->lock(target, type), "MPI_Win_lock");
}
WEFT_PMPI_ALIAS(Win_lock)

int PMPI_Win_unlock(int target, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_unlock");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_unlock", win, &e); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= e->window->size())
    return raise(e->comm, MPI_ERR_RANK, "MPI_Win_unlock", "invalid target rank %d (argument 'rank')", target);
  if (e->window->locked(target) == rma::LockType::none)
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock", "rank %d is not locked by this rank", target);
  return status_rc(*e, e->window->unlock(target), "MPI_Win_unlock");
}
WEFT_PMPI_ALIAS(Win_unlock)

int PMPI_Win_lock_all(int assert_flags, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_lock_all");
  (void)assert_flags;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_lock_all", win, &e); rc != MPI_SUCCESS) return rc;
  if (e->lock_all || e->fence_epoch) return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "an epoch is open");
  for (int q = 0; q < e->window->size(); ++q)
    if (e->window->locked(q) != rma::LockType::none)
      return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "rank %d is locked by this rank", q);
  for (int q = 0; q < e->window->size(); ++q)
    if (Status s = e->window->lock(q, rma::LockType::shared); s != Status::ok)
      return raise_status(e->comm, s, "MPI_Win_lock_all");
  e->lock_all = true;
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_unlock_all");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_unlock_all", win, &e); rc != MPI_SUCCESS) return rc;
  if (!e->lock_all) return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "no lock_all epoch is open");
  for (int q = 0; q < e->window->size(); ++q)
    if (Status s = e->window->unlock(q); s != Status::ok) return raise_status(e->comm, s, "MPI_Win_unlock_all");
  e->lock_all = false;
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_unlock_all)

// Puts and atomics return once the origin buffer may be reused, so the local forms of flush
// have nothing left to wait for; the others complete every access at the target(s).
// all: every rank of the window (target is then ignored).
static int flush_call(const char* fn, int target, bool all, MPI_Win win, bool remote) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  bool open = e->lock_all;
  if (!all) {
    if (target < 0 || target >= e->window->size())
      return raise(e->comm, MPI_ERR_RANK, fn, "invalid target rank %d (argument 'rank')", target);
    open = open || e->window->locked(target) != rma::LockType::none;
  } else {
    for (int q = 0; q < e->window->size() && !open; ++q) open = e->window->locked(q) != rma::LockType::none;
  }
  if (!open) return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "no passive-target epoch is open");
  return remote ? status_rc(*e, e->window->flush(all ? -1 : target), fn) : MPI_SUCCESS;
}

int PMPI_Win_flush(int target, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_flush");
  return flush_call("MPI_Win_flush", target, false, win, true);
}
WEFT_PMPI_ALIAS(Win_flush)

int PMPI_Win_flush_local(int target, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_flush_local");
  return flush_call("MPI_Win_flush_local", target, false, win, false);
}
WEFT_PMPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_all(MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_flush_all");
  return flush_call("MPI_Win_flush_all", -1, true, win, true);
}
WEFT_PMPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local_all(MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_flush_local_all");
  return flush_call("MPI_Win_flush_local_all", -1, true, win, false);
}
WEFT_PMPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_sync");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_sync", win, &e); rc != MPI_SUCCESS) return rc;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);  // one memory copy (MPI_WIN_UNIFIED): a barrier is all
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_sync)

}  // extern "C"
