// MPI one-sided communication (MPI-3 RMA) on rma::Window: window creation (create, allocate,
// allocate_shared, create_dynamic with attach / detach) and freeing, the predefined
// attributes and names, Put / Get / Accumulate / Get_accumulate / Fetch_and_op /
// Compare_and_swap and their request-based forms, and the synchronisation: fence, general
// active target (post / start / complete / wait / test), passive target (lock, lock_all,
// flushes). Epochs and ranges are checked here, before any byte moves: an access outside the
// target's window (or, in a dynamic window, outside every region attached there) is
// MPI_ERR_RMA_RANGE, one outside an access epoch MPI_ERR_RMA_SYNC. Errors go to the window's
// communicator (a duplicate of the creating one, with its error handler). MPI_Win_create takes
// CUDA device memory (reached through CUDA IPC within a node, through requests the target
// applies across nodes); device origin, result and compare buffers are copied through host
// memory where the target is not a device window. Not supported yet
// (MPI_ERR_UNSUPPORTED_OPERATION, or not declared here and so in unsupported.cpp): window
// attributes of the user's, info and error handlers of windows, device memory attached to a
// dynamic window, compare-and-swap on types over 8 bytes and derived datatypes.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coll_call.h"
#include "datatype_api.h"
#include "rma/runs.h"
#include "rma/shared.h"
#include "rma/window.h"
#include "runtime/memkind.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "state.h"

namespace weft::mpi {

namespace {

struct WinEntry {
  MPI_Comm comm = MPI_COMM_NULL;  // the window's own duplicate of the creating communicator
  std::unique_ptr<rma::Window> window;
  std::unique_ptr<rma::SharedSegment> segment;  // shared windows: every node rank's memory
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  bool owns_memory = false;  // MPI_Win_allocate: freed with the window
  std::string name;
  bool fence_epoch = false;  // between fences (not after MPI_MODE_NOSUCCEED)
  bool lock_all = false;
  // General active target: the targets of the open access epoch (MPI_Win_start), and the
  // origins of the open exposure epoch (MPI_Win_post).
  bool access_open = false;
  std::vector<int> access_group;
  std::vector<char> access_to;  // by window rank
  bool exposed = false;
  int exposure_origins = 0;
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

int status_rc(WinEntry& e, Status s, const char* fn) { return s == Status::ok ? MPI_SUCCESS : raise_status(e.comm, s, fn); }

// Shared windows: the node ranks' parts in one segment, in rank order, each part starting at
// a multiple of `align` (1 for MPI_Win_allocate_shared: contiguous, MPI's default). Rank 0
// makes the segment, the others map it by name, and the name goes once every rank has mapped
// it. Runs on the window's own communicator.
int allocate_shared(const char* fn, WinEntry& e, MPI_Aint size, MPI_Aint align, std::vector<MPI_Aint>* offsets) {
  Comm* c = lookup_comm(e.comm);
  std::vector<long long> sizes(size_t(c->size), 0);
  long long mine = size;
  if (int rc = PMPI_Allgather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, e.comm); rc != MPI_SUCCESS)
    return rc;
  offsets->assign(size_t(c->size) + 1, 0);
  for (size_t q = 0; q < sizes.size(); ++q)
    (*offsets)[q + 1] = ((*offsets)[q] + MPI_Aint(sizes[q]) + align - 1) / align * align;
  const size_t total = size_t(offsets->back());
  char name[256] = {};  // a name carries the job id (Bootstrap::shm_name)
  Status s = Status::ok;
  if (c->rank == 0 && (s = rma::SharedSegment::create(*g_state->boot, total, &e.segment)) == Status::ok)
    snprintf(name, sizeof name, "%s", e.segment->name().c_str());
  if (int rc = PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, e.comm); rc != MPI_SUCCESS) return rc;
  if (!name[0])
    return c->rank == 0 ? raise_status(e.comm, s, fn)
                        : raise(e.comm, MPI_ERR_NO_MEM, fn, "rank 0 could not make the shared window's memory");
  if (c->rank != 0) s = rma::SharedSegment::open(*g_state->boot, name, total, &e.segment);
  int bad = s != Status::ok, any = 0;
  int rc = PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, e.comm);
  if (e.segment) e.segment->unlink();  // every rank has tried to map it
  if (rc != MPI_SUCCESS) return rc;
  if (any)
    return s != Status::ok ? raise_status(e.comm, s, fn)
                           : raise(e.comm, MPI_ERR_NO_MEM, fn, "another rank could not map the shared window's memory");
  e.base = e.segment->data() + (*offsets)[size_t(c->rank)];
  return MPI_SUCCESS;
}

// Whether window memory [base, size) is CUDA device memory; it must be one kind from its first
// byte to its last. An error is raised on this rank only (the caller agrees with the others):
// device memory a build without CUDA cannot use is MPI_ERR_BUFFER, as elsewhere.
int window_memory_kind(const char* fn, MPI_Comm comm, void* base, MPI_Aint size, bool* device) {
  *device = false;
  if (size <= 0 || !base || !memkind_device_possible()) return MPI_SUCCESS;
  const MemKind first = memkind_query(base).kind, last = memkind_query(static_cast<char*>(base) + size - 1).kind;
  if (first == MemKind::unsupported_device || last == MemKind::unsupported_device)
    return raise_unsupported_device(comm, fn, base);
  if ((first == MemKind::cuda_device) != (last == MemKind::cuda_device))
    return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "window memory %p + %lld bytes is partly GPU device memory and partly host memory; a window must be "
                 "of one kind",
                 base, (long long)size);
  *device = first == MemKind::cuda_device;
  return MPI_SUCCESS;
}

// Parts of a window allocated in one node segment start on their own cache lines.
constexpr MPI_Aint kSegmentPartAlign = 64;

// Whether every rank of c runs on this rank's node (virtual nodes of WEFT_FAKE_NODES count).
bool node_local(const Comm* c, int* other = nullptr) {
  for (int q = 0; q < c->size; ++q) {
    const bool local = c->nodes.size() == size_t(c->size) ? c->nodes[size_t(q)] == c->nodes[size_t(c->rank)]
                                                          : g_state->boot->is_local(c->world_rank(q));
    if (!local) {
      if (other) *other = q;
      return false;
    }
  }
  return true;
}

// The collective part of creating a window over [base, size) on comm. Shared windows, and
// allocated windows on one node (in_segment), get their memory here: one segment every rank
// of the node maps, so that accesses are loads, stores and CPU atomics.
int make_window(const char* fn, MPI_Comm comm, void* base, MPI_Aint size, int disp_unit, int flavor, bool owns,
                MPI_Win* win, bool in_segment = false) {
  if (!win) return raise(comm, MPI_ERR_ARG, fn, "win is NULL");
  if (size < 0) return raise(comm, MPI_ERR_SIZE, fn, "negative size %lld (argument 'size')", (long long)size);
  if (disp_unit <= 0)
    return raise(comm, MPI_ERR_DISP, fn, "displacement unit %d must be positive (argument 'disp_unit')", disp_unit);
  if (flavor == MPI_WIN_FLAVOR_SHARED) in_segment = true;
  if (size > 0 && !base && !in_segment)
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL base for a window of %lld bytes", (long long)size);
  auto e = std::make_unique<WinEntry>();
  if (int rc = PMPI_Comm_dup(comm, &e->comm); rc != MPI_SUCCESS) return rc;
  Comm* c = lookup_comm(e->comm);
  e->base = base;
  e->size = size;
  e->disp_unit = disp_unit;
  e->flavor = flavor;
  e->owns_memory = owns;
  e->window = std::make_unique<rma::Window>(*g_state->transport, c->world_ranks, c->rank, rma::Flavor(flavor));
  e->window->use_context(c->pt2pt_context());  // the duplicate's point-to-point context: nothing else uses it
  // An allocated window in a segment keeps each rank's control block at the start of its part,
  // where every rank maps it (MPI_Win_allocate_shared's parts must be contiguous: not there).
  const bool control_in_segment = in_segment && flavor == MPI_WIN_FLAVOR_ALLOCATE;
  const MPI_Aint control =
      control_in_segment ? MPI_Aint((e->window->control_bytes() + kSegmentPartAlign - 1) / kSegmentPartAlign *
                                    kSegmentPartAlign)
                         : 0;
  std::vector<MPI_Aint> offsets;
  int rc = in_segment ? allocate_shared(fn, *e, control + size,
                                        flavor == MPI_WIN_FLAVOR_SHARED ? 1 : kSegmentPartAlign, &offsets)
                      : MPI_SUCCESS;
  if (rc != MPI_SUCCESS) {
    e->window.reset();
    e->segment.reset();
    (void)PMPI_Comm_free(&e->comm);
    return rc;
  }
  if (control_in_segment) {
    e->window->place_control(reinterpret_cast<uint64_t*>(static_cast<char*>(e->base)));
    e->base = static_cast<char*>(e->base) + control;
  }
  bool device = false;
  const int kind_rc = window_memory_kind(fn, e->comm, e->base, size, &device);
  Status s = kind_rc == MPI_SUCCESS ? e->window->register_memory(e->base, size_t(size), disp_unit, device) : Status::ok;
  // Every rank learns whether every rank registered, and the largest record, before any
  // exchange of keys.
  long long mine[2] = {kind_rc == MPI_SUCCESS && s == Status::ok ? 0 : 1, (long long)e->window->key_space()};
  long long all[2] = {0, 0};
  rc = PMPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, e->comm);
  if (rc == MPI_SUCCESS && all[0] != 0)
    rc = kind_rc != MPI_SUCCESS ? kind_rc
         : s != Status::ok      ? raise_status(e->comm, s, fn)
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
    e->segment.reset();
    (void)PMPI_Comm_free(&e->comm);
    return rc;
  }
  if (e->segment)  // every node rank's part is accessed directly, in this process's mapping
    for (int q = 0; q < c->size; ++q) {
      char* part = e->segment->data() + offsets[size_t(q)];
      e->window->map_peer(q, part + control);
      if (control_in_segment) e->window->map_peer_control(q, reinterpret_cast<uint64_t*>(part));
    }
  e->access_to.assign(size_t(c->size), 0);
  *win = handle::make(handle::direct, handle::win, wins().add(std::move(e)));
  return MPI_SUCCESS;
}

// Which epochs an access may take place in: any (fence, general active or passive target),
// or passive target only (the request-based forms).
enum class Epochs { any, passive };

// The checks every access makes: a valid target, an open access epoch to it, the target
// range [lo, hi) from displacement disp inside its window (or, dynamic, in a region attached
// there); *at is where it lands.
int check_access(const char* fn, WinEntry& e, int target, MPI_Aint disp, ptrdiff_t lo, ptrdiff_t hi,
                 rma::Location* at, Epochs epochs = Epochs::any) {
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= e.window->size())
    return raise(e.comm, MPI_ERR_RANK, fn, "invalid target rank %d (argument 'target_rank'; the window has %d ranks)",
                 target, e.window->size());
  const bool passive = e.lock_all || e.window->locked(target) != rma::LockType::none;
  if (epochs == Epochs::passive && !passive)
    return raise(e.comm, MPI_ERR_RMA_SYNC, fn,
                 "request-based accesses need a passive-target epoch to rank %d (MPI_Win_lock or MPI_Win_lock_all "
                 "first)",
                 target);
  if (!passive && !e.fence_epoch && !(e.access_open && e.access_to[size_t(target)]))
    return raise(e.comm, MPI_ERR_RMA_SYNC, fn,
                 "no access epoch to rank %d is open (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all "
                 "first)",
                 target);
  const bool dynamic = e.flavor == MPI_WIN_FLAVOR_DYNAMIC;
  // The first byte touched: an offset into the window, or (dynamic) an address.
  const __int128 first = (dynamic ? __int128(disp) : __int128(disp) * e.window->peer_disp_unit(target)) + lo;
  bool found = disp >= 0 && first >= 0 && first <= __int128(UINT64_MAX);
  if (found && hi > lo) {
    Status s = e.window->locate(target, uint64_t(first), size_t(hi - lo), at, &found);
    if (s != Status::ok) return raise_status(e.comm, s, fn);
  }
  if (!found && dynamic)
    return raise(e.comm, MPI_ERR_RMA_RANGE, fn,
                 "no region attached at rank %d holds the %lld bytes at address 0x%llx (argument 'target_disp')",
                 target, (long long)(hi - lo), (unsigned long long)(disp + lo));
  if (!found)
    return raise(e.comm, MPI_ERR_RMA_RANGE, fn,
                 "access of %lld bytes at displacement %lld (argument 'target_disp') is outside rank %d's window",
                 (long long)(hi - lo), (long long)disp, target);
  return MPI_SUCCESS;
}

// A datatype argument of an access: valid, committed, with a non-negative count.
int check_type(const char* fn, WinEntry& e, MPI_Datatype dt, int count, const char* arg, const Datatype** d) {
  if (count < 0) return raise(e.comm, MPI_ERR_COUNT, fn, "negative count %d (argument '%s_count')", count, arg);
  return check_datatype(e.comm, fn, dt, d, arg);
}

// The bytes of count x d at buf in packed form: the buffer itself when contiguous, else a
// packed copy in *tmp (pack false: room for them, to be unpacked afterwards).
char* packed_view(const Datatype* d, void* buf, int count, bool pack_now, std::vector<char>* tmp) {
  ptrdiff_t off = 0;
  if (contiguous_span(d, size_t(count), &off)) return static_cast<char*>(buf) + off;
  tmp->resize(packed_size(d, size_t(count)));
  if (pack_now) (void)pack(d, buf, size_t(count), tmp->data());
  return tmp->data();
}

// Whether an origin-side buffer (origin, result, compare) of count x d is CUDA device memory,
// which is copied through host memory (contiguous datatypes only) or, for Put and Get on a
// device window, copied from or to directly. A build without CUDA refuses device memory.
int buffer_on_device(const char* fn, WinEntry& e, const void* buf, const Datatype* d, int count, const char* arg,
                     bool* device) {
  *device = false;
  if (!buf || !memkind_device_possible() || packed_size(d, size_t(count)) == 0) return MPI_SUCCESS;
  const MemKind k = memkind_query(buf).kind;
  if (k == MemKind::unsupported_device) return raise_unsupported_device(e.comm, fn, buf);
  if (k != MemKind::cuda_device) return MPI_SUCCESS;
  ptrdiff_t off = 0;
  if (!contiguous_span(d, size_t(count), &off))
    return raise(e.comm, MPI_ERR_TYPE, fn,
                 "non-contiguous datatypes on GPU device buffers are not supported yet (argument '%s_addr')", arg);
  *device = true;
  return MPI_SUCCESS;
}

// Put and Get: the origin in packed form (packed or unpacked here when not contiguous), one
// access per contiguous run of the target datatype. A device origin buffer is copied straight
// to or from a device window, and through host memory for other targets.
int transfer(const char* fn, bool is_put, void* origin, int origin_count, MPI_Datatype origin_type, int target,
             MPI_Aint disp, int target_count, MPI_Datatype target_type, MPI_Win win, Epochs epochs) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  const Datatype *od = nullptr, *td = nullptr;
  if (int rc = check_type(fn, *e, origin_type, origin_count, "origin", &od); rc != MPI_SUCCESS) return rc;
  if (int rc = check_type(fn, *e, target_type, target_count, "target", &td); rc != MPI_SUCCESS) return rc;
  const size_t ob = packed_size(od, size_t(origin_count)), tb = packed_size(td, size_t(target_count));
  if (ob != tb) return raise(e->comm, MPI_ERR_TYPE, fn, "the origin has %zu bytes of data and the target %zu", ob, tb);
  rma::Location at;
  // A predefined target type and a contiguous origin (the common case): one run, no copies.
  if (ptrdiff_t span = 0; !td->loop && contiguous_span(od, size_t(origin_count), &span)) {
    if (int rc = check_access(fn, *e, target, disp, 0, ptrdiff_t(tb), &at, epochs); rc != MPI_SUCCESS) return rc;
    if (target == MPI_PROC_NULL || ob == 0) return MPI_SUCCESS;
    if (!origin && od->true_lb == 0) return raise(e->comm, MPI_ERR_BUFFER, fn, "NULL buffer (argument 'origin_addr')");
    bool origin_device = false;
    if (int rc = buffer_on_device(fn, *e, origin, od, origin_count, "origin", &origin_device); rc != MPI_SUCCESS)
      return rc;
    if (!origin_device || at.device) {
      char* data = static_cast<char*>(origin) + span;
      const Status s = is_put ? e->window->put(target, at, 0, data, ob) : e->window->get(target, at, 0, data, ob);
      return s == Status::ok ? MPI_SUCCESS : raise_status(e->comm, s, fn);
    }
  }
  ptrdiff_t lo = 0, hi = 0;
  const std::vector<rma::Run> runs = rma::runs_of(td, size_t(target_count), &lo, &hi);
  if (int rc = check_access(fn, *e, target, disp, lo, hi, &at, epochs); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL || ob == 0) return MPI_SUCCESS;
  if (!origin && od->true_lb == 0) return raise(e->comm, MPI_ERR_BUFFER, fn, "NULL buffer (argument 'origin_addr')");
  bool origin_device = false;
  if (int rc = buffer_on_device(fn, *e, origin, od, origin_count, "origin", &origin_device); rc != MPI_SUCCESS)
    return rc;
  std::vector<char> tmp;
  char* data = packed_view(od, origin, origin_count, is_put, &tmp);
  char* staged = nullptr;  // the device origin data, while `data` is its host copy
  if (origin_device && !at.device) {
    staged = data;
    tmp.resize(ob);
    data = tmp.data();
    if (Status s = is_put ? memkind_copy(data, staged, ob) : Status::ok; s != Status::ok)
      return raise_status(e->comm, s, fn);
  }
  size_t k = 0;
  for (const rma::Run& r : runs) {
    const uint64_t off = uint64_t(r.disp - lo);
    Status s = is_put ? e->window->put(target, at, off, data + k, r.bytes) : e->window->get(target, at, off, data + k, r.bytes);
    if (s != Status::ok) return raise_status(e->comm, s, fn);
    k += r.bytes;
  }
  if (!is_put && staged) {
    if (Status s = memkind_copy(staged, data, ob); s != Status::ok) return raise_status(e->comm, s, fn);
  } else if (!is_put && !tmp.empty()) {
    (void)unpack(od, tmp.data(), tmp.size(), origin, size_t(origin_count));
  }
  return MPI_SUCCESS;
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

// The one predefined type a datatype is made of (none if mixed).
BasicType element_type(const Datatype* d) { return d->predefined ? d->basic : d->elem_basic; }

struct AccBuffer {  // an origin or result argument of an accumulate
  const void* buf;
  int count;
  MPI_Datatype type;
  const char* arg;
};

// Accumulate (no result), Get_accumulate and Fetch_and_op (result: the old values), element
// by element in the target datatype's runs, each element atomic at the target:
// - 1-, 2-, 4- and 8-byte elements: one remote atomic where UCX has it (sum, band, bor, bxor,
//   replace and no_op on 4- and 8-byte integers), else compare-and-swap on the word holding
//   the element (Window::update_element) with the host reduction applied in between;
// - larger elements (long double, 16-byte complex, pairs over 8 bytes): under the target's
//   accumulate mutex (a control word taken with compare-and-swap), read, reduced and written
//   back whole. Every accumulate on such a type takes it, so they exclude each other; the
//   user's locks are untouched (a shared lock_all would block the exclusive lock word);
// - a window in GPU device memory: every accumulate takes the mutex, whatever its type (the
//   range is copied to host memory, reduced there and copied back; one round trip through
//   the mutex and two copies per call, slow but atomic per element between accumulates).
// Device origin and result buffers are copied through host memory.
int accumulate(const char* fn, AccBuffer origin, AccBuffer result, int target, MPI_Aint disp, int target_count,
               MPI_Datatype target_type, MPI_Op op, MPI_Win win, Epochs epochs) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  ReduceOp rop;
  if (!lookup_builtin_op(op, &rop))
    return raise(e->comm, MPI_ERR_OP, fn, "accumulate takes predefined operations only (argument 'op')");
  const Datatype* td = nullptr;
  if (int rc = check_type(fn, *e, target_type, target_count, "target", &td); rc != MPI_SUCCESS) return rc;
  const BasicType b = element_type(td);
  if (b == BasicType::none)
    return raise(e->comm, MPI_ERR_TYPE, fn, "accumulate needs a target datatype made of one predefined type");
  if (!reduce_op_supports(rop, b))
    return raise(e->comm, MPI_ERR_OP, fn, "%s is not defined on %s", reduce_op_name(rop), basic_type_name(b));
  const size_t esz = basic_type_size(b), bytes = packed_size(td, size_t(target_count));
  // The origin (ignored by MPI_NO_OP) and result must hold the same elements as the target.
  const Datatype* bd[2] = {nullptr, nullptr};
  AccBuffer* args[2] = {&origin, &result};
  for (int i = 0; i < 2; ++i) {
    AccBuffer& a = *args[i];
    if (!a.arg || (i == 0 && rop == ReduceOp::no_op)) continue;
    if (int rc = check_type(fn, *e, a.type, a.count, a.arg, &bd[i]); rc != MPI_SUCCESS) return rc;
    if (element_type(bd[i]) != b || packed_size(bd[i], size_t(a.count)) != bytes)
      return raise(e->comm, MPI_ERR_TYPE, fn, "the %s holds %zu bytes of %s, the target %zu bytes of %s", a.arg,
                   packed_size(bd[i], size_t(a.count)),
                   element_type(bd[i]) == BasicType::none ? "mixed types" : basic_type_name(element_type(bd[i])), bytes,
                   basic_type_name(b));
  }
  ptrdiff_t lo = 0, hi = 0;
  const std::vector<rma::Run> runs = rma::runs_of(td, size_t(target_count), &lo, &hi);
  for (const rma::Run& r : runs)
    if (r.bytes % esz != 0)
      return raise(e->comm, MPI_ERR_TYPE, fn, "the target datatype splits a %s element", basic_type_name(b));
  rma::Location at;
  if (int rc = check_access(fn, *e, target, disp, lo, hi, &at, epochs); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL || bytes == 0) return MPI_SUCCESS;
  for (int i = 0; i < 2; ++i)
    if (bd[i] && !args[i]->buf && bd[i]->true_lb == 0)
      return raise(e->comm, MPI_ERR_BUFFER, fn, "NULL buffer (argument '%s_addr')", args[i]->arg);
  bool on_device[2] = {false, false};
  for (int i = 0; i < 2; ++i)
    if (bd[i])
      if (int rc = buffer_on_device(fn, *e, args[i]->buf, bd[i], args[i]->count, args[i]->arg, &on_device[i]);
          rc != MPI_SUCCESS)
        return rc;
  std::vector<char> in_tmp, out_tmp;
  const char* in = bd[0] ? packed_view(bd[0], const_cast<void*>(origin.buf), origin.count, true, &in_tmp) : nullptr;
  char* out = bd[1] ? packed_view(bd[1], const_cast<void*>(result.buf), result.count, false, &out_tmp) : nullptr;
  char* out_device = nullptr;  // a device result buffer, while `out` is its host copy
  if (on_device[0]) {
    in_tmp.resize(bytes);
    if (Status s = memkind_copy(in_tmp.data(), in, bytes); s != Status::ok) return raise_status(e->comm, s, fn);
    in = in_tmp.data();
  }
  if (on_device[1]) {
    out_device = out;
    out_tmp.resize(bytes);
    out = out_tmp.data();
  }
  Status s = Status::ok;
  if (at.direct && e->window->control_mapped()) {
    // Every rank maps the target and its mutex (an allocated window on one node): the whole
    // range is reduced in place under the mutex, which every accumulate to it takes.
    s = e->window->mutex_lock(target);
    size_t k = 0;
    for (const rma::Run& r : runs) {
      if (s != Status::ok) break;
      char* t = at.direct + (r.disp - lo);
      if (out) memcpy(out + k, t, r.bytes);
      if (rop != ReduceOp::no_op) s = reduce_local(rop, b, in + k, t, r.bytes / esz);
      k += r.bytes;
    }
    if (Status u = e->window->mutex_unlock(target); s == Status::ok) s = u;
  } else if (!at.via_mutex && (esz == 1 || esz == 2 || esz == 4 || esz == 8)) {
    Transport::RmaAtomic aop;
    const bool native = integer_word(b) && atomic_for(rop, &aop);
    const uint64_t zero = 0;
    size_t k = 0;
    for (const rma::Run& r : runs)
      for (size_t i = 0; i < r.bytes / esz && s == Status::ok; ++i, k += esz) {
        const uint64_t off = uint64_t(r.disp - lo) + i * esz;
        const char* value = rop == ReduceOp::no_op ? reinterpret_cast<const char*>(&zero) : in + k;
        uint64_t old = 0;
        s = native ? e->window->atomic(target, at, off, aop, value, &old, esz)
                   : e->window->update_element(
                         target, at, off, esz, [&](void* element) { (void)reduce_local(rop, b, value, element, 1); },
                         &old);
        if (out) memcpy(out + k, &old, esz);
      }
  } else {
    std::vector<char> cur(bytes);
    s = e->window->mutex_lock(target);
    size_t k = 0;
    for (const rma::Run& r : runs) {
      if (s == Status::ok) s = e->window->get(target, at, uint64_t(r.disp - lo), cur.data() + k, r.bytes);
      k += r.bytes;
    }
    if (s == Status::ok && out) memcpy(out, cur.data(), bytes);
    if (s == Status::ok && rop != ReduceOp::no_op) {
      s = reduce_local(rop, b, in, cur.data(), bytes / esz);
      k = 0;
      for (const rma::Run& r : runs) {
        if (s == Status::ok) s = e->window->put(target, at, uint64_t(r.disp - lo), cur.data() + k, r.bytes);
        k += r.bytes;
      }
    }
    if (Status u = e->window->mutex_unlock(target); s == Status::ok) s = u;
  }
  if (s == Status::ok && out_device) s = memkind_copy(out_device, out, bytes);
  if (s != Status::ok) return raise_status(e->comm, s, fn);
  if (out && !out_device && !out_tmp.empty()) (void)unpack(bd[1], out_tmp.data(), bytes, const_cast<void*>(result.buf), size_t(result.count));
  return MPI_SUCCESS;
}

// Completes a request-based access: the access is done when the call returns, so the request
// is born complete.
int complete_request(MPI_Win win, MPI_Request* request, int rc) {
  if (rc != MPI_SUCCESS) return rc;
  Request* r = g_state->requests.alloc(RequestKind::coll);
  r->complete = true;
  r->owner = lookup_win(win)->comm;
  *request = request_handle(r);
  return MPI_SUCCESS;
}

int check_request_arg(const char* fn, MPI_Win win, MPI_Request* request) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (!request) return raise(e->comm, MPI_ERR_ARG, fn, "request is NULL");
  return MPI_SUCCESS;
}

// The window ranks of a group's members; each must be in the window.
int window_ranks(const char* fn, WinEntry& e, MPI_Group group, std::vector<int>* out) {
  Group* g = lookup_group(group);
  if (!g) return raise(e.comm, MPI_ERR_GROUP, fn, "invalid group 0x%x (argument 'group')", unsigned(group));
  const Comm* c = lookup_comm(e.comm);
  out->clear();
  for (int w : g->world_ranks) {
    int q = 0;
    while (q < c->size && c->world_ranks[size_t(q)] != w) ++q;
    if (q == c->size)
      return raise(e.comm, MPI_ERR_GROUP, fn, "rank %zu of the group (job rank %d) is not in the window",
                   out->size(), w);
    out->push_back(q);
  }
  return MPI_SUCCESS;
}

// Whether an access epoch of general active target, or an exposure epoch, is open.
bool pscw_open(const WinEntry& e) { return e.access_open || e.exposed; }

}  // namespace

void release_windows(std::vector<void*>* memory) {
  HandleTable<WinEntry>& t = wins();
  size_t left = 0;
  for (uint32_t i = 0; i < t.slots(); ++i) {
    WinEntry* e = t.get(i);
    if (!e) continue;
    ++left;
    e->window.reset();  // remote keys, then registrations
    e->segment.reset();
    (void)PMPI_Comm_free(&e->comm);
    if (e->owns_memory && e->base) memory->push_back(e->base);
    t.remove(i);
  }
  if (left)
    WEFT_INFO(Subsys::rma, "MPI_Finalize released %zu window%s never freed (or whose MPI_Win_free failed)", left,
              left == 1 ? "" : "s");
}

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
  // On one node the memory is a segment every rank maps: puts and gets become memcpy, atomics
  // the CPU's (WEFT_RMA_SEGMENT=0 keeps it private and reached through UCX).
  bool segment = true;
  (void)parse_bool(g_state->config.value("WEFT_RMA_SEGMENT"), &segment);
  if (segment && node_local(c)) {
    int rc = make_window("MPI_Win_allocate", comm, nullptr, size, disp_unit, MPI_WIN_FLAVOR_ALLOCATE, false, win, true);
    if (rc != MPI_SUCCESS) return rc;
    void* base = lookup_win(*win)->base;
    memcpy(baseptr, &base, sizeof base);
    WEFT_INFO(Subsys::rma, "MPI_Win_allocate on %s: node-local, memory in a shared segment, accessed directly",
              c->label().c_str());
    return MPI_SUCCESS;
  }
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

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  const char* fn = "MPI_Win_allocate_shared";
  WEFT_REQUIRE_INIT("MPI_Win_allocate_shared");
  Comm* c;
  if (int rc = check_coll_comm(fn, comm, &c); rc != MPI_SUCCESS) return rc;
  if (!baseptr) return raise(comm, MPI_ERR_ARG, fn, "baseptr is NULL");
  // Every rank sees the same node ids, so every rank fails here alike (no rank is left waiting).
  if (int q = -1; !node_local(c, &q))
    return raise(comm, MPI_ERR_RMA_SHARED, fn,
                 "rank %d of the communicator runs on another node: a shared window needs a node-local "
                 "communicator (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED)",
                 q);
  if (int rc = make_window(fn, comm, nullptr, size, disp_unit, MPI_WIN_FLAVOR_SHARED, false, win); rc != MPI_SUCCESS)
    return rc;
  void* base = lookup_win(*win)->base;
  memcpy(baseptr, &base, sizeof base);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  const char* fn = "MPI_Win_shared_query";
  WEFT_REQUIRE_INIT("MPI_Win_shared_query");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (e->flavor != MPI_WIN_FLAVOR_SHARED)
    return raise(e->comm, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by MPI_Win_allocate_shared");
  if (!size || !disp_unit || !baseptr) return raise(e->comm, MPI_ERR_ARG, fn, "NULL size, disp_unit or baseptr");
  int q = rank;
  if (rank == MPI_PROC_NULL) {  // the lowest rank with memory
    q = 0;
    while (q + 1 < e->window->size() && e->window->peer_size(q) == 0) ++q;
  } else if (rank < 0 || rank >= e->window->size()) {
    return raise(e->comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'rank')", rank);
  }
  *size = MPI_Aint(e->window->peer_size(q));
  *disp_unit = e->window->peer_disp_unit(q);
  void* p = e->window->mapped(q);
  memcpy(baseptr, &p, sizeof p);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_shared_query)

int PMPI_Win_create_dynamic(MPI_Info, MPI_Comm comm, MPI_Win* win) {
  WEFT_REQUIRE_INIT("MPI_Win_create_dynamic");
  Comm* c;
  if (int rc = check_coll_comm("MPI_Win_create_dynamic", comm, &c); rc != MPI_SUCCESS) return rc;
  return make_window("MPI_Win_create_dynamic", comm, nullptr, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, false, win);
}
WEFT_PMPI_ALIAS(Win_create_dynamic)

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  const char* fn = "MPI_Win_attach";
  WEFT_REQUIRE_INIT("MPI_Win_attach");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (e->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return raise(e->comm, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by MPI_Win_create_dynamic");
  if (size < 0) return raise(e->comm, MPI_ERR_SIZE, fn, "negative size %lld (argument 'size')", (long long)size);
  if (!base) return raise(e->comm, MPI_ERR_ARG, fn, "base is NULL");
  if (size > 0 && memkind_device_possible()) {
    const MemKind k = memkind_query(base).kind;
    if (k == MemKind::unsupported_device) return raise_unsupported_device(e->comm, fn, base);
    if (k == MemKind::cuda_device)
      return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                   "attaching GPU device memory %p to a dynamic window is not supported (MPI_Win_create takes it)",
                   base);
  }
  Status s = e->window->attach(base, size_t(size));
  if (s == Status::invalid_arg || s == Status::no_memory)
    return raise(e->comm, MPI_ERR_RMA_ATTACH, fn, "%s", error_detail().c_str());
  return status_rc(*e, s, fn);
}
WEFT_PMPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void* base) {
  const char* fn = "MPI_Win_detach";
  WEFT_REQUIRE_INIT("MPI_Win_detach");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (e->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return raise(e->comm, MPI_ERR_RMA_FLAVOR, fn, "the window was not made by MPI_Win_create_dynamic");
  bool found = false;
  Status s = e->window->detach(base, &found);
  if (s == Status::ok && !found)
    return raise(e->comm, MPI_ERR_RMA_ATTACH, fn, "no region of this rank is attached at %p", base);
  return status_rc(*e, s, fn);
}
WEFT_PMPI_ALIAS(Win_detach)

int PMPI_Win_free(MPI_Win* win) {
  WEFT_REQUIRE_INIT("MPI_Win_free");
  if (!win) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Win_free", "win is NULL");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_free", *win, &e); rc != MPI_SUCCESS) return rc;
  if (e->lock_all)
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free", "the window is still locked (MPI_Win_unlock_all first)");
  if (pscw_open(*e))
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free",
                 "a general active target epoch is open (MPI_Win_complete or MPI_Win_wait first)");
  for (int q = 0; q < e->window->size(); ++q)
    if (e->window->locked(q) != rma::LockType::none)
      return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_free", "rank %d of the window is still locked", q);
  // Every rank's accesses have completed before any rank's memory goes away. Where that
  // cannot be known (a rank failed), the window stays, for MPI_Finalize to release.
  if (Status s = e->window->peer_alive(-1); s != Status::ok) return raise_status(e->comm, s, "MPI_Win_free");
  if (int rc = PMPI_Barrier(e->comm); rc != MPI_SUCCESS) return rc;
  e->window.reset();
  e->segment.reset();
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
                  target_type, win, Epochs::any);
}
WEFT_PMPI_ALIAS(Put)

int PMPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
             MPI_Datatype target_type, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Get");
  return transfer("MPI_Get", false, origin, origin_count, origin_type, target, disp, target_count, target_type, win,
                  Epochs::any);
}
WEFT_PMPI_ALIAS(Get)

int PMPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
              int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Rput");
  if (int rc = check_request_arg("MPI_Rput", win, request); rc != MPI_SUCCESS) return rc;
  return complete_request(win, request,
                          transfer("MPI_Rput", true, const_cast<void*>(origin), origin_count, origin_type, target,
                                   disp, target_count, target_type, win, Epochs::passive));
}
WEFT_PMPI_ALIAS(Rput)

int PMPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp, int target_count,
              MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Rget");
  if (int rc = check_request_arg("MPI_Rget", win, request); rc != MPI_SUCCESS) return rc;
  return complete_request(win, request,
                          transfer("MPI_Rget", false, origin, origin_count, origin_type, target, disp, target_count,
                                   target_type, win, Epochs::passive));
}
WEFT_PMPI_ALIAS(Rget)

int PMPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                    int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Accumulate");
  return accumulate("MPI_Accumulate", {origin, origin_count, origin_type, "origin"}, {nullptr, 0, 0, nullptr}, target,
                    disp, target_count, target_type, op, win, Epochs::any);
}
WEFT_PMPI_ALIAS(Accumulate)

int PMPI_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
                     int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Raccumulate");
  if (int rc = check_request_arg("MPI_Raccumulate", win, request); rc != MPI_SUCCESS) return rc;
  return complete_request(win, request,
                          accumulate("MPI_Raccumulate", {origin, origin_count, origin_type, "origin"},
                                     {nullptr, 0, 0, nullptr}, target, disp, target_count, target_type, op, win,
                                     Epochs::passive));
}
WEFT_PMPI_ALIAS(Raccumulate)

int PMPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                        int result_count, MPI_Datatype result_type, int target, MPI_Aint disp, int target_count,
                        MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Get_accumulate");
  return accumulate("MPI_Get_accumulate", {origin, origin_count, origin_type, "origin"},
                    {result, result_count, result_type, "result"}, target, disp, target_count, target_type, op, win,
                    Epochs::any);
}
WEFT_PMPI_ALIAS(Get_accumulate)

int PMPI_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                         int result_count, MPI_Datatype result_type, int target, MPI_Aint disp, int target_count,
                         MPI_Datatype target_type, MPI_Op op, MPI_Win win, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Rget_accumulate");
  if (int rc = check_request_arg("MPI_Rget_accumulate", win, request); rc != MPI_SUCCESS) return rc;
  return complete_request(win, request,
                          accumulate("MPI_Rget_accumulate", {origin, origin_count, origin_type, "origin"},
                                     {result, result_count, result_type, "result"}, target, disp, target_count,
                                     target_type, op, win, Epochs::passive));
}
WEFT_PMPI_ALIAS(Rget_accumulate)

int PMPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype dt, int target, MPI_Aint disp, MPI_Op op,
                      MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Fetch_and_op");
  return accumulate("MPI_Fetch_and_op", {origin, 1, dt, "origin"}, {result, 1, dt, "result"}, target, disp, 1, dt,
                    op, win, Epochs::any);
}
WEFT_PMPI_ALIAS(Fetch_and_op)

// One UCX compare-and-swap on 4- and 8-byte integers; on other 1-, 2-, 4- and 8-byte types
// the compare-and-swap loop on the word holding the element (as accumulate does); on a device
// window a read and a conditional write under the target's accumulate mutex. Device origin,
// compare and result buffers are copied through host memory.
int PMPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype dt, int target,
                          MPI_Aint disp, MPI_Win win) {
  const char* fn = "MPI_Compare_and_swap";
  WEFT_REQUIRE_INIT("MPI_Compare_and_swap");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  const Datatype* d = nullptr;
  if (int rc = check_datatype(e->comm, fn, dt, &d); rc != MPI_SUCCESS) return rc;
  const size_t elem = d->predefined ? basic_type_size(d->basic) : 0;
  if (!d->predefined || basic_type_is_pair(d->basic) || (elem != 1 && elem != 2 && elem != 4 && elem != 8))
    return raise(e->comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                 "compare-and-swap on %s is not supported (predefined types of 1, 2, 4 and 8 bytes are)",
                 d->predefined ? basic_type_name(d->basic) : "a derived datatype");
  rma::Location at;
  if (int rc = check_access(fn, *e, target, disp, 0, ptrdiff_t(elem), &at); rc != MPI_SUCCESS) return rc;
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (!origin || !compare || !result) return raise(e->comm, MPI_ERR_BUFFER, fn, "NULL origin, compare or result buffer");
  const void* bufs[3] = {origin, compare, result};
  const char* names[3] = {"origin", "compare", "result"};
  bool on_device[3] = {false, false, false};
  uint64_t host[2] = {0, 0};
  for (int i = 0; i < 3; ++i)
    if (int rc = buffer_on_device(fn, *e, bufs[i], d, 1, names[i], &on_device[i]); rc != MPI_SUCCESS) return rc;
  for (int i = 0; i < 2; ++i)
    if (on_device[i]) {
      if (Status s = memkind_copy(&host[i], bufs[i], elem); s != Status::ok) return raise_status(e->comm, s, fn);
      bufs[i] = &host[i];
    }
  origin = bufs[0];
  compare = bufs[1];
  uint64_t io = 0;
  Status s;
  if (at.via_mutex || (at.direct && e->window->control_mapped())) {  // as accumulate() does there
    s = e->window->mutex_lock(target);
    if (s == Status::ok) {
      s = e->window->get(target, at, 0, &io, elem);
      if (s == Status::ok && memcmp(&io, compare, elem) == 0) s = e->window->put(target, at, 0, origin, elem);
      if (Status u = e->window->mutex_unlock(target); s == Status::ok) s = u;
    }
  } else if (integer_word(d->basic)) {
    memcpy(&io, compare, elem);
    s = e->window->atomic(target, at, 0, Transport::RmaAtomic::cswap, origin, &io, elem);
  } else {
    s = e->window->update_element(
        target, at, 0, elem,
        [&](void* element) {
          if (memcmp(element, compare, elem) == 0) memcpy(element, origin, elem);
        },
        &io);
  }
  if (s == Status::ok && on_device[2]) s = memkind_copy(result, &io, elem);
  if (s != Status::ok) return raise_status(e->comm, s, fn);
  if (!on_device[2]) memcpy(result, &io, elem);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Compare_and_swap)

int PMPI_Win_fence(int assert_flags, MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_fence");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_fence", win, &e); rc != MPI_SUCCESS) return rc;
  if (e->lock_all) return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_fence", "inside a lock_all epoch");
  if (pscw_open(*e))
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_fence", "inside a general active target (post/start) epoch");
  if (Status s = e->window->flush(-1); s != Status::ok) return raise_status(e->comm, s, "MPI_Win_fence");
  // The barrier ends every rank's accesses of the closing epoch before any rank starts the
  // next one (and before local stores to the window are read remotely).
  if (int rc = PMPI_Barrier(e->comm); rc != MPI_SUCCESS) return rc;
  e->fence_epoch = !(assert_flags & MPI_MODE_NOSUCCEED);
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_fence)

int PMPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  const char* fn = "MPI_Win_post";
  WEFT_REQUIRE_INIT("MPI_Win_post");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (e->exposed) return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open (MPI_Win_wait first)");
  std::vector<int> origins;
  if (int rc = window_ranks(fn, *e, group, &origins); rc != MPI_SUCCESS) return rc;
  if (Status s = e->window->post(origins, !(assert_flags & MPI_MODE_NOCHECK)); s != Status::ok)
    return raise_status(e->comm, s, fn);
  e->exposed = true;
  e->exposure_origins = int(origins.size());
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_post)

int PMPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  const char* fn = "MPI_Win_start";
  WEFT_REQUIRE_INIT("MPI_Win_start");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (e->access_open)
    return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open (MPI_Win_complete first)");
  if (e->lock_all) return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "inside a lock_all epoch");
  std::vector<int> targets;
  if (int rc = window_ranks(fn, *e, group, &targets); rc != MPI_SUCCESS) return rc;
  for (int q : targets)
    if (e->window->locked(q) != rma::LockType::none)
      return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "rank %d is locked by this rank", q);
  // With MPI_MODE_NOCHECK the matching posts have been made already (with it too).
  if (Status s = e->window->start(targets, !(assert_flags & MPI_MODE_NOCHECK)); s != Status::ok)
    return raise_status(e->comm, s, fn);
  e->access_open = true;
  e->access_group = std::move(targets);
  for (int q : e->access_group) e->access_to[size_t(q)] = 1;
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win) {
  const char* fn = "MPI_Win_complete";
  WEFT_REQUIRE_INIT("MPI_Win_complete");
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (!e->access_open) return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "no access epoch is open (MPI_Win_start first)");
  Status s = e->window->complete(e->access_group);
  for (int q : e->access_group) e->access_to[size_t(q)] = 0;
  e->access_group.clear();
  e->access_open = false;
  return status_rc(*e, s, fn);
}
WEFT_PMPI_ALIAS(Win_complete)

static int wait_or_test(const char* fn, MPI_Win win, bool block, int* flag) {
  WinEntry* e;
  if (int rc = check_win(fn, win, &e); rc != MPI_SUCCESS) return rc;
  if (!block && !flag) return raise(e->comm, MPI_ERR_ARG, fn, "flag is NULL");
  if (!e->exposed) return raise(e->comm, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post first)");
  bool done = false;
  if (Status s = e->window->wait_complete(e->exposure_origins, block, &done); s != Status::ok)
    return raise_status(e->comm, s, fn);
  if (done) e->exposed = false;
  if (flag) *flag = done;
  return MPI_SUCCESS;
}

int PMPI_Win_wait(MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_wait");
  return wait_or_test("MPI_Win_wait", win, true, nullptr);
}
WEFT_PMPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int* flag) {
  WEFT_REQUIRE_INIT("MPI_Win_test");
  return wait_or_test("MPI_Win_test", win, false, flag);
}
WEFT_PMPI_ALIAS(Win_test)

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
  if (e->access_open && e->access_to[size_t(target)])
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock", "rank %d is in this rank's MPI_Win_start group", target);
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
  if (e->lock_all || e->fence_epoch || e->access_open)
    return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "an epoch is open");
  for (int q = 0; q < e->window->size(); ++q)
    if (e->window->locked(q) != rma::LockType::none)
      return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "rank %d is locked by this rank", q);
  for (int q = 0; q < e->window->size(); ++q)
    if (Status s = e->window->lock(q, rma::LockType::shared); s != Status::ok) {
      // No epoch opens: the locks taken so far are given back (the error stays this one's).
      const std::string detail = error_detail();
      for (int p = 0; p < q; ++p) (void)e->window->unlock(p);
      set_error_detail(detail);
      return raise_status(e->comm, s, "MPI_Win_lock_all");
    }
  e->lock_all = true;
  return MPI_SUCCESS;
}
WEFT_PMPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win) {
  WEFT_REQUIRE_INIT("MPI_Win_unlock_all");
  WinEntry* e;
  if (int rc = check_win("MPI_Win_unlock_all", win, &e); rc != MPI_SUCCESS) return rc;
  if (!e->lock_all) return raise(e->comm, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "no lock_all epoch is open");
  // The epoch ends whatever happens: every lock is given back, the first error reported.
  Status first = Status::ok;
  std::string detail;
  for (int q = 0; q < e->window->size(); ++q)
    if (Status s = e->window->unlock(q); s != Status::ok && first == Status::ok) {
      first = s;
      detail = error_detail();
    }
  e->lock_all = false;
  if (first == Status::ok) return MPI_SUCCESS;
  set_error_detail(detail);
  return raise_status(e->comm, first, "MPI_Win_unlock_all");
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
