// Collective bindings, part 1: argument checks, the MPI side of a call (coll_call.h: errors
// raised, requests made) and the collectives that reduce (Reduce, Allreduce,
// Reduce_scatter(_block), Scan, Exscan) plus Barrier and Bcast, each blocking, non-blocking
// (MPI_I*) and persistent (MPI_*_init) from one planning function.
#include "coll_call.h"

#include <climits>
#include <initializer_list>

#include "coll/gpu/gpu_coll.h"
#include "datatype_api.h"
#include "runtime/log.h"
#include "runtime/memkind.h"

namespace weft::mpi {

// --------------------------------------------------------------------- checks and the call

int check_coll_comm(const char* fn, MPI_Comm comm, Comm** c) {
  *c = lookup_comm(comm);
  if (!*c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')", unsigned(comm));
  return MPI_SUCCESS;
}

int check_coll_request(const char* fn, MPI_Comm comm, CollMode mode, MPI_Request* request) {
  if (mode != CollMode::blocking && !request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  return MPI_SUCCESS;
}

int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root) {
  if (root < 0 || root >= c.size)
    return raise(comm, MPI_ERR_ROOT, fn, "invalid root %d (argument 'root'; %s has %d ranks)", root, c.label().c_str(), c.size);
  return MPI_SUCCESS;
}

int check_count(const char* fn, MPI_Comm comm, int count, const char* arg) {
  if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d (argument '%s')", count, arg);
  return MPI_SUCCESS;
}

int CollCall::plan(const coll::CollArgs& args, const CollPlanKey* key) {
  Status s = call_.plan(args, key);
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm_, s, fn_);
}

int CollCall::execute(MPI_Request* request) {
  if (mode_ == CollMode::blocking) {
    Status s = call_.run();
    return s == Status::ok ? MPI_SUCCESS : raise_status(comm_, s, fn_);
  }
  if (Status s = call_.error(); s != Status::ok) return raise_status(comm_, s, fn_);
  Request* r = g_state->requests.alloc(RequestKind::coll);
  r->owner = comm_;
  if (mode_ == CollMode::persistent) {
    r->persistent = true;
    r->complete = true;  // inactive until started
    const Comm* cp = c_;
    r->start = [fn = fn_, comm = comm_, cp, schedule = call_.schedule()](Request& q) {
      Status s = g_state->coll_calls.start(coll_context(*cp), schedule, &q);
      if (s != Status::ok) (void)raise_status(comm, s, fn);
      return s == Status::ok ? Status::ok : Status::internal;
    };
  } else if (Status s = call_.start(r); s != Status::ok) {
    g_state->requests.release(r);
    return raise_status(comm_, s, fn_);
  }
  *request = request_handle(r);
  return MPI_SUCCESS;
}

// ------------------------------------------------------------------------- the collectives

int gpu_native(const char* fn, CollMode mode, MPI_Comm comm, Comm& c, std::initializer_list<const void*> bufs,
               const coll::Reduction* red, bool* native);

namespace {

int barrier_call(const char* fn, CollMode mode, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc != MPI_SUCCESS) return rc;
  CollCall call(fn, comm, c, mode);
  const CollPlanKey key{int(coll::Collective::barrier)};
  if (call.reuse(key)) return call.execute(request);
  if ((rc = call.plan(coll::CollArgs{coll::Collective::barrier}, &key)) != MPI_SUCCESS) return rc;
  return call.execute(request);
}

int bcast_call(const char* fn, CollMode mode, void* buffer, int count, MPI_Datatype dt, int root,
               MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  const Datatype* d;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS) rc = check_datatype(comm, fn, dt, &d, "datatype");
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  if (!buffer && count && d->predefined) return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %d", count);
  CollCall call(fn, comm, c, mode);
  const CollPlanKey key{int(coll::Collective::bcast), buffer, buffer, count, count, d, d, MPI_OP_NULL, root};
  if (call.reuse(key)) return call.execute(request);
  ptrdiff_t offset = 0;
  if (c->size > 1 && count > 0 && packed_size(d, size_t(count)) &&
      contiguous_span(d, size_t(count), &offset)) {
    char* at = static_cast<char*>(buffer) + offset;
    const size_t bytes = packed_size(d, size_t(count));
    if (mode == CollMode::blocking && gpu_hier_applies(*c, bytes, {at}, nullptr))
      return gpu_hier_bcast(fn, comm, *c, buffer, count, dt, root, at, bytes);
    bool native = false;
    if ((rc = gpu_native(fn, mode, comm, *c, {at}, nullptr, &native)) != MPI_SUCCESS) return rc;
    if (native) {
      coll::CollArgs a{coll::Collective::bcast};
      a.recv = at;
      a.bytes = packed_size(d, size_t(count));
      a.root = root;
      a.blocking = mode == CollMode::blocking;
      if ((rc = call.plan(a, &key)) != MPI_SUCCESS) return rc;
      return call.execute(request);
    }
  }
  std::vector<coll::Block> blocks;
  const std::vector<Piece> piece{{buffer, size_t(count), d}};
  char* base = c->rank == root ? call.input(piece, &blocks) : call.output(piece, &blocks);
  coll::CollArgs a{coll::Collective::bcast};
  a.recv = base + blocks[0].offset;
  a.bytes = blocks[0].bytes;
  a.root = root;
  if (c->size == 1 || a.bytes == 0) call.plan_nothing(&key);
  else if ((rc = call.plan(a, &key)) != MPI_SUCCESS) return rc;
  return call.execute(request);
}

// What the reducing collectives share: the reduction for (op, datatype) over `count` elements,
// with a user function's arguments kept alive as long as the schedule.
struct ReductionSetup {
  coll::Reduction red;
  ReductionLayout lay;
  size_t per_element = 0;  // elements the reduction loop sees per datatype element
};

int setup_reduction(const char* fn, MPI_Comm comm, CollCall& call, size_t count, MPI_Datatype dt,
                    MPI_Op op, ReductionSetup* out) {
  UserOpCall user;
  int rc = make_reduction(fn, comm, op, dt, count, &user, &out->red, &out->lay);
  if (rc != MPI_SUCCESS) return rc;
  if (out->red.user) {
    auto lasting = std::make_shared<UserOpCall>(user);
    out->red.user_ctx = lasting.get();
    call.keep(lasting);
  }
  out->per_element = count ? out->lay.reduce_count / count : 0;
  return MPI_SUCCESS;
}

// The arguments of reducing r's elements from `in` into `out` (both contiguous).
coll::CollArgs reduction_args(coll::Collective kind, const void* in, void* out, const ReductionSetup& r) {
  coll::CollArgs a{kind};
  a.send = in;
  a.recv = out;
  a.count = r.lay.reduce_count;
  a.bytes = a.count * r.red.elem_size;
  a.red = r.red;
  return a;
}

}  // namespace

void configure_gpu_collectives() {
  static bool done = false;
  if (done) return;
  done = true;
  const Config& cfg = g_state->config;
  coll::gpu::Settings& s = coll::gpu::settings();
  s.enabled = cfg.value("WEFT_GPU_COLL") != "off";
  s.scratch_bytes = cfg.size("WEFT_GPU_COLL_SCRATCH");
  s.two_shot_min = cfg.size("WEFT_GPU_ALLREDUCE_TWO_SHOT_MIN");
  s.direct_min = cfg.size("WEFT_GPU_ALLREDUCE_DIRECT_MIN");
  const std::string_view mode = cfg.value("WEFT_GPU_COLL_MODE");
  s.mode = mode == "kernels"       ? coll::gpu::Mode::kernels
           : mode == "copy_engine" ? coll::gpu::Mode::copy_engine
                                   : coll::gpu::Mode::automatic;
}

// An allreduce, bcast, reduce, allgather or reduce_scatter(_block), blocking, non-blocking or
// persistent, runs GPU-native (coll/gpu) when every buffer of the call (`bufs`, each at its
// first byte; contiguous) is device memory, the reduction (if any) is predefined on a type the
// kernels reduce, and the communicator lies on one node with a usable GPU workspace (made here
// on the first such call: collective, so every rank must pass device memory, as UCC requires
// too). Non-blocking and persistent calls also need the flag kernels (their device work is
// enqueued when they start, in the order every rank starts them). Then *native is set. A call
// with no device buffer, or with device and host buffers mixed, is left to staging, which warns
// or errs (CollCall::staging_allowed); any other reason is logged at INFO once, or, under
// WEFT_REQUIRE_FAST_PATH, is an error naming it. Declared again in coll_data.cpp (allgather).
int gpu_native(const char* fn, CollMode mode, MPI_Comm comm, Comm& c, std::initializer_list<const void*> bufs,
               const coll::Reduction* red, bool* native) {
  *native = false;
  if (!cuda_state().usable || c.size < 2) return MPI_SUCCESS;
  const void* last = nullptr;
  for (const void* b : bufs) {
    if (b && b == last) continue;  // in place: one query
    if (!b || memkind_query(b).kind != MemKind::cuda_device) return MPI_SUCCESS;
    last = b;
  }
  std::string why;
  if (!c.single_node) {
    why = "GPU-native collectives need every rank on one node";
  } else if (red && (red->user || !coll::gpu::supports(red->op, red->type))) {
    why = red->user ? std::string("user-defined operations have no GPU kernel")
                    : std::string("no GPU kernel for ") + reduce_op_name(red->op) + " on " + basic_type_name(red->type);
  } else {
    configure_gpu_collectives();
    const coll::gpu::GpuWorkspace* ws = coll::gpu::workspace(coll_context(c), &why);
    if (!ws)
      why = "GPU collectives not usable on " + c.label() + ": " + why;
    else if (mode != CollMode::blocking && !coll::gpu::kernels_allowed(*ws))
      why = "non-blocking and persistent GPU-native collectives need flag kernels, and " + c.label() +
            " runs copy-engine algorithms only (ranks share a GPU without MPS, or WEFT_GPU_COLL_MODE=copy_engine)";
  }
  if (!why.empty()) {
    if (g_state->require_fast_path)
      return raise(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                   "a GPU device buffer would be staged through host memory (%s), and "
                   "WEFT_REQUIRE_FAST_PATH forbids slower paths", why.c_str());
    if (log_first_time(std::string("gpu-coll-fallback:") + fn + why))
      WEFT_INFO(Subsys::gpu, "%s on device buffers staged through host memory: %s", fn, why.c_str());
    return MPI_SUCCESS;
  }
  *native = true;
  return MPI_SUCCESS;
}

namespace {

// The allreduce's GPU-native check (gpu_native); on success *a describes the call on the
// device buffers themselves.
int gpu_native_allreduce(const char* fn, CollMode mode, MPI_Comm comm, Comm& c, const void* send, void* recv,
                         size_t count, const ReductionSetup& r, coll::CollArgs* a, bool* native, bool* hier) {
  *native = *hier = false;
  if (!cuda_state().usable || c.size < 2 || r.red.user || !r.lay.type->predefined) return MPI_SUCCESS;
  ptrdiff_t offset = 0;
  if (!contiguous_span(r.lay.type, count, &offset)) return MPI_SUCCESS;  // staging says why
  const char* in = static_cast<const char*>(send) + offset;
  char* out = static_cast<char*>(recv) + offset;
  if (mode == CollMode::blocking && gpu_hier_applies(c, r.lay.reduce_count * r.red.elem_size, {in, out}, &r.red)) {
    *hier = true;
    return MPI_SUCCESS;
  }
  int rc = gpu_native(fn, mode, comm, c, {in, out}, &r.red, native);
  if (rc != MPI_SUCCESS || !*native) return rc;
  *a = reduction_args(coll::Collective::allreduce, in, out, r);
  a->blocking = mode == CollMode::blocking;
  return MPI_SUCCESS;
}

int check_buffers(const char* fn, MPI_Comm comm, const ReductionSetup& r, size_t count,
                  const void* send, const void* recv, bool need_recv) {
  if (count > 0 && r.lay.type->predefined && (!send || (need_recv && !recv)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer with count %zu", count);
  return MPI_SUCCESS;
}

int reduce_call(const char* fn, CollMode mode, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  const bool is_root = c->rank == root, in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !is_root) return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
  CollCall call(fn, comm, c, mode);
  // An identical earlier call was valid (its datatype object and built-in op are the same).
  const Datatype* d = lookup_datatype(dt);
  const CollPlanKey key{int(coll::Collective::reduce), sendbuf, recvbuf, count, count, d, d, op, root};
  if (count > 0 && call.reuse(key)) return call.execute(request);
  ReductionSetup r;
  if ((rc = setup_reduction(fn, comm, call, size_t(count), dt, op, &r)) != MPI_SUCCESS) return rc;
  if ((rc = check_buffers(fn, comm, r, size_t(count), in_place ? recvbuf : sendbuf, recvbuf, is_root)) != MPI_SUCCESS)
    return rc;
  if (count == 0) {
    call.plan_nothing();
    return call.execute(request);
  }
  const bool cacheable = !r.red.user;
  ptrdiff_t offset = 0;
  if (c->size > 1 && !r.red.user && r.lay.type->predefined && contiguous_span(r.lay.type, size_t(count), &offset)) {
    const char* gin = static_cast<const char*>(in_place ? recvbuf : sendbuf) + offset;
    char* gout = is_root ? static_cast<char*>(recvbuf) + offset : nullptr;
    const size_t bytes = r.lay.reduce_count * r.red.elem_size;
    if (mode == CollMode::blocking && (is_root ? gpu_hier_applies(*c, bytes, {gin, gout}, &r.red)
                                               : gpu_hier_applies(*c, bytes, {gin}, &r.red)))
      return gpu_hier_reduce(fn, comm, *c, sendbuf, recvbuf, count, dt, op, root, offset, bytes);
    bool native = false;
    rc = is_root ? gpu_native(fn, mode, comm, *c, {gin, gout}, &r.red, &native)
                 : gpu_native(fn, mode, comm, *c, {gin}, &r.red, &native);
    if (rc != MPI_SUCCESS) return rc;
    if (native) {
      coll::CollArgs a = reduction_args(coll::Collective::reduce, gin, is_root ? gout : const_cast<char*>(gin), r);
      a.root = root;
      a.blocking = mode == CollMode::blocking;
      if ((rc = call.plan(a, &key)) != MPI_SUCCESS) return rc;
      return call.execute(request);
    }
  }
  std::vector<coll::Block> in_blocks, out_blocks;
  const Piece result{recvbuf, size_t(count), r.lay.type};
  const char* in;
  char* out = nullptr;
  if (in_place) {
    out = call.output({result}, &out_blocks, 0) + out_blocks[0].offset;
    in = out;
  } else {
    in = call.input({Piece{sendbuf, size_t(count), r.lay.type}}, &in_blocks) + in_blocks[0].offset;
    if (is_root) out = call.output({result}, &out_blocks) + out_blocks[0].offset;
  }
  coll::CollArgs a = reduction_args(coll::Collective::reduce, in, is_root ? out : const_cast<char*>(in), r);
  a.root = root;
  if ((rc = call.plan(a, cacheable ? &key : nullptr)) != MPI_SUCCESS) return rc;
  return call.execute(request);
}

// Allreduce, Scan, Exscan: `count` elements in, `count` elements out at every rank.
int vector_reduction_call(const char* fn, coll::Collective kind, CollMode mode, const void* sendbuf,
                          void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc == MPI_SUCCESS) rc = check_count(fn, comm, count, "count");
  if (rc != MPI_SUCCESS) return rc;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  CollCall call(fn, comm, c, mode);
  const Datatype* d = lookup_datatype(dt);
  const CollPlanKey key{int(kind), sendbuf, recvbuf, count, count, d, d, op, 0};
  if (count > 0 && call.reuse(key)) return call.execute(request);
  ReductionSetup r;
  if ((rc = setup_reduction(fn, comm, call, size_t(count), dt, op, &r)) != MPI_SUCCESS) return rc;
  if ((rc = check_buffers(fn, comm, r, size_t(count), in_place ? recvbuf : sendbuf, recvbuf, true)) != MPI_SUCCESS)
    return rc;
  if (count == 0) {
    call.plan_nothing();
    return call.execute(request);
  }
  const bool cacheable = !r.red.user;
  if (kind == coll::Collective::allreduce) {
    coll::CollArgs a{kind};
    bool native = false, hier = false;
    rc = gpu_native_allreduce(fn, mode, comm, *c, in_place ? recvbuf : sendbuf, recvbuf, size_t(count), r, &a,
                              &native, &hier);
    if (rc != MPI_SUCCESS) return rc;
    if (hier)
      return gpu_hier_allreduce(fn, comm, *c, sendbuf, recvbuf, count, dt, op, r.lay.reduce_count * r.red.elem_size);
    if (native) {
      if ((rc = call.plan(a, cacheable ? &key : nullptr)) != MPI_SUCCESS) return rc;
      return call.execute(request);
    }
  }
  std::vector<coll::Block> in_blocks, out_blocks;
  const Piece result{recvbuf, size_t(count), r.lay.type};
  char* out = call.output({result}, &out_blocks, in_place ? 0 : -1) + out_blocks[0].offset;
  const char* in = in_place ? out : call.input({Piece{sendbuf, size_t(count), r.lay.type}}, &in_blocks) + in_blocks[0].offset;
  const coll::CollArgs a = reduction_args(kind, in, out, r);
  if ((rc = call.plan(a, cacheable ? &key : nullptr)) != MPI_SUCCESS) return rc;
  return call.execute(request);
}

// Reduce_scatter (recvcounts) and Reduce_scatter_block (`block`: recvcount for every rank).
int reduce_scatter_call(const char* fn, CollMode mode, bool block, const void* sendbuf, void* recvbuf,
                        const int* recvcounts, int recvcount, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = check_coll_comm(fn, comm, &c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  if (rc != MPI_SUCCESS) return rc;
  const int p = c->size;
  if (!block && !recvcounts) return raise(comm, MPI_ERR_ARG, fn, "recvcounts is NULL");
  if (block && recvcount < 0) return check_count(fn, comm, recvcount, "recvcount");
  std::vector<size_t> counts(static_cast<size_t>(p));
  size_t total = 0;
  for (int q = 0; q < p; ++q) {
    const int n = block ? recvcount : recvcounts[q];
    if (n < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative count %d for rank %d (argument 'recvcounts')", n, q);
    counts[size_t(q)] = size_t(n);
    total += size_t(n);
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  CollCall call(fn, comm, c, mode);
  ReductionSetup r;
  if ((rc = setup_reduction(fn, comm, call, total, dt, op, &r)) != MPI_SUCCESS) return rc;
  const size_t mine = counts[size_t(c->rank)];
  if (r.lay.type->predefined && ((total && !(in_place ? recvbuf : sendbuf)) || (mine && !recvbuf)))
    return raise(comm, MPI_ERR_BUFFER, fn, "NULL buffer");
  if (total == 0) {
    call.plan_nothing();
    return call.execute(request);
  }
  ptrdiff_t in_offset = 0, out_offset = 0;
  if (p > 1 && !r.red.user && r.lay.type->predefined &&
      contiguous_span(r.lay.type, total, &in_offset) && contiguous_span(r.lay.type, mine, &out_offset)) {
    const char* gin = static_cast<const char*>(in_place ? recvbuf : sendbuf) + in_offset;
    // A rank with no share may pass any receive buffer (NULL too): it decides on its input alone,
    // so that every rank decides alike.
    char* gout = mine ? static_cast<char*>(recvbuf) + out_offset : const_cast<char*>(gin);
    const size_t unit = r.per_element * r.red.elem_size;  // bytes of one dt
    if (mode == CollMode::blocking && total <= INT_MAX &&
        (mine ? gpu_hier_applies(*c, total * unit, {gin, gout}, &r.red)
              : gpu_hier_applies(*c, total * unit, {gin}, &r.red))) {
      size_t first = 0;
      for (int q = 0; q < c->rank; ++q) first += counts[size_t(q)];
      return gpu_hier_reduce_scatter(fn, comm, *c, gin, gout, first * unit, mine * unit, int(total), dt, op,
                                     total * unit);
    }
    bool native = false;
    rc = mine ? gpu_native(fn, mode, comm, *c, {gin, gout}, &r.red, &native)
              : gpu_native(fn, mode, comm, *c, {gin}, &r.red, &native);
    if (rc != MPI_SUCCESS) return rc;
    if (native) {
      coll::CollArgs a = reduction_args(coll::Collective::reduce_scatter, gin, gout, r);
      a.uniform = block;
      a.blocking = mode == CollMode::blocking;
      for (size_t& n : counts) n *= r.per_element;
      a.counts = std::move(counts);
      if ((rc = call.plan(a)) != MPI_SUCCESS) return rc;
      return call.execute(request);
    }
  }
  std::vector<coll::Block> in_blocks, out_blocks;
  const char* in = call.input({Piece{in_place ? recvbuf : sendbuf, total, r.lay.type}}, &in_blocks) + in_blocks[0].offset;
  char* out = call.output({Piece{recvbuf, mine, r.lay.type}}, &out_blocks) + out_blocks[0].offset;
  coll::CollArgs a = reduction_args(coll::Collective::reduce_scatter, in, out, r);
  a.uniform = block;
  for (size_t& n : counts) n *= r.per_element;
  a.counts = std::move(counts);
  if ((rc = call.plan(a)) != MPI_SUCCESS) return rc;
  return call.execute(request);
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;
using weft::coll::Collective;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Barrier");
  return barrier_call("MPI_Barrier", CollMode::blocking, comm, nullptr);
}
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ibarrier");
  return barrier_call("MPI_Ibarrier", CollMode::nonblocking, comm, request);
}
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Barrier_init");
  return barrier_call("MPI_Barrier_init", CollMode::persistent, comm, request);
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Bcast");
  return bcast_call("MPI_Bcast", CollMode::blocking, buffer, count, dt, root, comm, nullptr);
}
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ibcast");
  return bcast_call("MPI_Ibcast", CollMode::nonblocking, buffer, count, dt, root, comm, request);
}
int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info,
                    MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Bcast_init");
  return bcast_call("MPI_Bcast_init", CollMode::persistent, buffer, count, dt, root, comm, request);
}

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Reduce");
  return reduce_call("MPI_Reduce", CollMode::blocking, sendbuf, recvbuf, count, dt, op, root, comm, nullptr);
}
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ireduce");
  return reduce_call("MPI_Ireduce", CollMode::nonblocking, sendbuf, recvbuf, count, dt, op, root, comm, request);
}
int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     int root, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Reduce_init");
  return reduce_call("MPI_Reduce_init", CollMode::persistent, sendbuf, recvbuf, count, dt, op, root, comm, request);
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Allreduce");
  return vector_reduction_call("MPI_Allreduce", Collective::allreduce, CollMode::blocking, sendbuf,
                               recvbuf, count, dt, op, comm, nullptr);
}
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Iallreduce");
  return vector_reduction_call("MPI_Iallreduce", Collective::allreduce, CollMode::nonblocking,
                               sendbuf, recvbuf, count, dt, op, comm, request);
}
int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                        MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Allreduce_init");
  return vector_reduction_call("MPI_Allreduce_init", Collective::allreduce, CollMode::persistent,
                               sendbuf, recvbuf, count, dt, op, comm, request);
}

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Scan");
  return vector_reduction_call("MPI_Scan", Collective::scan, CollMode::blocking, sendbuf, recvbuf,
                               count, dt, op, comm, nullptr);
}
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Iscan");
  return vector_reduction_call("MPI_Iscan", Collective::scan, CollMode::nonblocking, sendbuf,
                               recvbuf, count, dt, op, comm, request);
}
int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Scan_init");
  return vector_reduction_call("MPI_Scan_init", Collective::scan, CollMode::persistent, sendbuf,
                               recvbuf, count, dt, op, comm, request);
}

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Exscan");
  return vector_reduction_call("MPI_Exscan", Collective::exscan, CollMode::blocking, sendbuf,
                               recvbuf, count, dt, op, comm, nullptr);
}
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Iexscan");
  return vector_reduction_call("MPI_Iexscan", Collective::exscan, CollMode::nonblocking, sendbuf,
                               recvbuf, count, dt, op, comm, request);
}
int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Exscan_init");
  return vector_reduction_call("MPI_Exscan_init", Collective::exscan, CollMode::persistent,
                               sendbuf, recvbuf, count, dt, op, comm, request);
}

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Reduce_scatter");
  return reduce_scatter_call("MPI_Reduce_scatter", CollMode::blocking, false, sendbuf, recvbuf, recvcounts,
                             0, dt, op, comm, nullptr);
}
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ireduce_scatter");
  return reduce_scatter_call("MPI_Ireduce_scatter", CollMode::nonblocking, false, sendbuf, recvbuf,
                             recvcounts, 0, dt, op, comm, request);
}
int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                             MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Reduce_scatter_init");
  return reduce_scatter_call("MPI_Reduce_scatter_init", CollMode::persistent, false, sendbuf, recvbuf,
                             recvcounts, 0, dt, op, comm, request);
}

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm) {
  WEFT_REQUIRE_INIT("MPI_Reduce_scatter_block");
  return reduce_scatter_call("MPI_Reduce_scatter_block", CollMode::blocking, true, sendbuf, recvbuf,
                             nullptr, recvcount, dt, op, comm, nullptr);
}
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Ireduce_scatter_block");
  return reduce_scatter_call("MPI_Ireduce_scatter_block", CollMode::nonblocking, true, sendbuf, recvbuf,
                             nullptr, recvcount, dt, op, comm, request);
}
int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                   MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info,
                                   MPI_Request* request) {
  WEFT_REQUIRE_INIT("MPI_Reduce_scatter_block_init");
  return reduce_scatter_call("MPI_Reduce_scatter_block_init", CollMode::persistent, true, sendbuf,
                             recvbuf, nullptr, recvcount, dt, op, comm, request);
}

}  // extern "C"

WEFT_PMPI_ALIAS(Barrier)
WEFT_PMPI_ALIAS(Ibarrier)
WEFT_PMPI_ALIAS(Barrier_init)
WEFT_PMPI_ALIAS(Bcast)
WEFT_PMPI_ALIAS(Ibcast)
WEFT_PMPI_ALIAS(Bcast_init)
WEFT_PMPI_ALIAS(Reduce)
WEFT_PMPI_ALIAS(Ireduce)
WEFT_PMPI_ALIAS(Reduce_init)
WEFT_PMPI_ALIAS(Allreduce)
WEFT_PMPI_ALIAS(Iallreduce)
WEFT_PMPI_ALIAS(Allreduce_init)
WEFT_PMPI_ALIAS(Scan)
WEFT_PMPI_ALIAS(Iscan)
WEFT_PMPI_ALIAS(Scan_init)
WEFT_PMPI_ALIAS(Exscan)
WEFT_PMPI_ALIAS(Iexscan)
WEFT_PMPI_ALIAS(Exscan_init)
WEFT_PMPI_ALIAS(Reduce_scatter)
WEFT_PMPI_ALIAS(Ireduce_scatter)
WEFT_PMPI_ALIAS(Reduce_scatter_init)
WEFT_PMPI_ALIAS(Reduce_scatter_block)
WEFT_PMPI_ALIAS(Ireduce_scatter_block)
WEFT_PMPI_ALIAS(Reduce_scatter_block_init)
